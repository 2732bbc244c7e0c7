package dev.memlife.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * What a backend the test controls does with each write, whatever the backend: it counts the write
 * in, can hold it until the test lets it through (ignoring interrupts, like a hung database call),
 * can fail it, and logs it once it is done. Every hold is bounded by {@link #MAX_HOLD}, so a broken
 * test cannot hang the build. The chat-memory test stores of LangChain4j and Spring AI extend it.
 *
 * @param <K> the ids the backend's writes are for
 */
public abstract class HeldBackend<K> {

    public static final Duration MAX_HOLD = Duration.ofSeconds(60);

    private final String what;
    private final List<String> log = Collections.synchronizedList(new ArrayList<>());
    private final Semaphore entered = new Semaphore(0);
    private final Semaphore passes = new Semaphore(0);
    private volatile boolean held;
    private volatile Predicate<K> failing = id -> false;
    private final AtomicInteger failNext = new AtomicInteger();

    /** @param what the backend and its ids, in the failures it throws ("store down for memory id") */
    protected HeldBackend(String what) {
        this.what = what;
    }

    /** From now on every write waits until {@link #allow} or {@link #open} lets it through. */
    public void hold() {
        held = true;
    }

    /** Lets {@code n} held writes through. */
    public void allow(int n) {
        passes.release(n);
    }

    /** Lets every write through, now and later. */
    public void open() {
        held = false;
        passes.release(1_000_000);
    }

    /** Waits until a write has entered the backend (held or not); each call consumes one entry. */
    public boolean awaitEntered(Duration timeout) throws InterruptedException {
        return entered.tryAcquire(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** The next {@code n} writes throw. */
    public void failNext(int n) {
        failNext.set(n);
    }

    /** Every write of an id {@code ids} accepts throws. */
    public void failFor(Predicate<K> ids) {
        failing = ids;
    }

    /** {@return the writes that completed, in order, as {@link #write} logged them} */
    public List<String> log() {
        synchronized (log) {
            return List.copyOf(log);
        }
    }

    /**
     * One write of {@code id}: counted in, held while the test holds writes, failed if the test
     * asked, else done by {@code write} and logged as {@code line}.
     */
    protected final void write(K id, String line, Runnable write) {
        enter();
        if (failing.test(id) || failNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            throw new IllegalStateException(what + " " + id);
        }
        write.run();
        log.add(line);
    }

    private void enter() {
        entered.release();
        if (!held) {
            return;
        }
        long end = System.nanoTime() + MAX_HOLD.toNanos();
        boolean interrupted = false;
        while (true) {
            try {
                if (passes.tryAcquire(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    break;
                }
                throw new IllegalStateException("held longer than " + MAX_HOLD + ": the test never let it through");
            } catch (InterruptedException e) {
                interrupted = true; // a hung call ignores interrupts
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
