package dev.memlife.faults;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where a fake backend's calls wait while the test {@link #hold() holds} them, and which of them
 * the test told to {@link #failNext fail}: the gate of the write-behind tests' fake vector store,
 * embedding store and embedding model. Thread-safe.
 */
public final class CallGate {

    private final Semaphore entered = new Semaphore(0);
    private final AtomicInteger failures = new AtomicInteger();
    private volatile CountDownLatch gate = new CountDownLatch(0);

    /** Holds every later call at its start until {@link #open()}. */
    public void hold() {
        gate = new CountDownLatch(1);
    }

    /** Lets the held calls, and every later one, through. */
    public void open() {
        gate.countDown();
    }

    /** The next {@code n} calls that ask {@link #failsNow()} fail. */
    public void failNext(int n) {
        failures.set(n);
    }

    /** Waits until a call has {@linkplain #pass() entered} (held or not) since the last wait. */
    public boolean awaitEntered(Duration within) throws InterruptedException {
        return entered.tryAcquire(within.toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * A call arrives: it counts as entered, then waits while the gate is held.
     *
     * @throws IllegalStateException if the calling thread is interrupted while held (its flag set again)
     */
    public void pass() {
        entered.release();
        try {
            gate.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while held", e);
        }
    }

    /** {@return whether this call is one of those told to fail; it counts one of them off} */
    public boolean failsNow() {
        return failures.getAndUpdate(n -> Math.max(0, n - 1)) > 0;
    }
}
