package dev.memlife.faults;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.QueueFullException;
import dev.memlife.Turn;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * What the faulty provider does in each hook, for one {@link Fault}; shared by {@link
 * FaultyProvider} (writes one at a time) and {@link FaultyBatchProvider} (writes as batches). Also
 * records what the test checks afterwards: kept batch lists, the results of calls back into the
 * manager, interrupts it set. Thread-safe.
 */
final class FaultBehaviour {

    /** How long {@link Fault#HANG_THEN_RETURN} hangs: past the flush, extraction and drain budgets of the matrix. */
    static final Duration BOUNDED_HANG = Duration.ofMillis(600);
    /** How long each call of {@link Fault#SLOW} takes. */
    static final Duration SLOW_CALL = Duration.ofMillis(3);
    /** The budget the provider gives {@code stop} when it calls it. */
    static final Duration CALLBACK_SHUTDOWN_BUDGET = Duration.ofSeconds(5);
    /** The timeout the provider gives {@code flushPending} when it calls it. */
    static final Duration CALLBACK_FLUSH_TIMEOUT = Duration.ofMillis(200);

    /** One call back into the manager: where from, what it returned, how long it took. */
    record Callback(String hook, String call, Object result, long nanos, String thread) {}

    /** A batch list the provider kept, with the ids it held when handed over. */
    record Kept(List<Turn> list, List<String> idsWhenHanded) {}

    final Fault fault;
    private final AtomicReference<MemoryManager> manager = new AtomicReference<>();
    /** Writes the test counts as accepted: the provider's own accepted callbacks are added here. */
    private final AtomicLong accepted;
    /** Writes the test counts as rejected: the provider's own rejected callbacks are added here. */
    private final AtomicLong rejected;

    private final CountDownLatch released = new CountDownLatch(1);
    private final CountDownLatch hung = new CountDownLatch(1);
    private final AtomicInteger hanging = new AtomicInteger();
    /** Held in the first batch until the test has queued more writes, so the next batch has several. */
    private final CountDownLatch firstBatchHold = new CountDownLatch(1);
    private final CountDownLatch firstBatchEntered = new CountDownLatch(1);
    private final AtomicBoolean firstBatch = new AtomicBoolean(true);
    private final AtomicBoolean shutdownCalledBack = new AtomicBoolean();

    final ConcurrentLinkedQueue<Kept> kept = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<Callback> callbacks = new ConcurrentLinkedQueue<>();
    final ConcurrentLinkedQueue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
    /** Write calls in which the provider set its thread's interrupt flag. */
    final AtomicInteger writeInterrupts = new AtomicInteger();
    /** onSessionEnd calls in which the provider set its thread's interrupt flag. */
    final AtomicInteger extractionInterrupts = new AtomicInteger();
    /** Trigger write ids the provider threw on (the write is its failure). */
    final ConcurrentLinkedQueue<String> thrownOn = new ConcurrentLinkedQueue<>();

    FaultBehaviour(Fault fault, AtomicLong accepted, AtomicLong rejected) {
        this.fault = fault;
        this.accepted = accepted;
        this.rejected = rejected;
    }

    void attach(MemoryManager m) {
        manager.set(m);
    }

    static boolean isTrigger(Turn t) {
        return t.userContent().startsWith("T");
    }

    // ---- the hooks ----------------------------------------------------------------------------

    void write(List<Turn> turns, boolean batch) {
        if (batch && fault == Fault.KEEPS_BATCH) {
            kept.add(new Kept(turns, Probe.ids(turns)));
            if (firstBatch.compareAndSet(true, false)) {
                firstBatchEntered.countDown();
                awaitQuietly(firstBatchHold, Duration.ofSeconds(20));
            }
            return;
        }
        if (fault == Fault.SLOW) {
            slow();
            return;
        }
        boolean trigger = turns.stream().anyMatch(FaultBehaviour::isTrigger);
        if (!trigger) {
            return;
        }
        if (fault.throwsFromHooks()) {
            turns.forEach(t -> thrownOn.add(t.writeId()));
        }
        if (fault == Fault.SELF_INTERRUPT) {
            writeInterrupts.incrementAndGet();
        }
        common("write");
        if (fault == Fault.SHUTDOWN_FROM_WRITE && shutdownCalledBack.compareAndSet(false, true)) {
            callShutdownAll("write");
        }
    }

    void extraction() {
        if (fault == Fault.SLOW) {
            slow();
            return;
        }
        if (fault == Fault.SELF_INTERRUPT) {
            extractionInterrupts.incrementAndGet();
        }
        common("extraction");
        if (fault == Fault.SHUTDOWN_FROM_EXTRACTION) {
            callShutdownAll("extraction");
        }
    }

    void shutdown() {
        if (fault == Fault.SLOW) {
            slow();
            return;
        }
        if (fault == Fault.HANG_IN_SHUTDOWN) {
            hangUntilReleased();
            return;
        }
        common("shutdown");
        if (fault == Fault.SHUTDOWN_FROM_SHUTDOWN) {
            callShutdownAll("shutdown");
        }
    }

    /** What every hook does for the faults that behave the same in each of them. */
    private void common(String hook) {
        switch (fault) {
            case RUNTIME_EXCEPTION:
                throw new IllegalStateException("faulty provider fails in " + hook + " on purpose");
            case ERROR:
                throw new Error("faulty provider's Error in " + hook);
            case STACK_OVERFLOW:
                recurse(0);
                throw new AssertionError("unreachable: the stack did not overflow");
            case OUT_OF_MEMORY:
                throw new OutOfMemoryError("Java heap space (thrown by the faulty provider in " + hook + ")");
            case ASSERTION_ERROR:
                throw new AssertionError("faulty provider's assertion in " + hook);
            case HANG_FOREVER:
                hangUntilReleased();
                return;
            case HANG_THEN_RETURN:
                hangFor(BOUNDED_HANG);
                return;
            case SELF_INTERRUPT:
                Thread.currentThread().interrupt();
                return;
            case CALLBACK_WRITE_AND_FLUSH:
                callSyncAll(hook);
                callFlush(hook);
                return;
            default:
                return;
        }
    }

    private static int recurse(int depth) {
        return recurse(depth + 1) + 1;
    }

    private static void slow() {
        long end = System.nanoTime() + SLOW_CALL.toNanos();
        for (long left; (left = end - System.nanoTime()) > 0; ) {
            LockSupport.parkNanos(left); // the fault itself: a slow store
        }
    }

    // ---- calls back into the manager ----------------------------------------------------------

    private void callSyncAll(String hook) {
        MemoryManager m = manager.get();
        long start = System.nanoTime();
        Object result;
        try {
            boolean ok = m.syncAll("cb-" + hook, "written back from " + hook, "s");
            (ok ? accepted : rejected).incrementAndGet();
            result = ok;
        } catch (QueueFullException e) {
            result = e;
            unexpected.add(e);
        } catch (Throwable t) {
            result = t;
            unexpected.add(t);
        }
        callbacks.add(new Callback(hook, "syncAll", result, System.nanoTime() - start, Thread.currentThread().getName()));
    }

    private void callFlush(String hook) {
        long start = System.nanoTime();
        Object result;
        try {
            result = manager.get().flushPending(CALLBACK_FLUSH_TIMEOUT);
        } catch (Throwable t) {
            result = t;
            unexpected.add(t);
        }
        callbacks.add(new Callback(hook, "flushPending", result, System.nanoTime() - start,
                Thread.currentThread().getName()));
    }

    private void callShutdownAll(String hook) {
        long start = System.nanoTime();
        Object result;
        try {
            result = manager.get().stop(CALLBACK_SHUTDOWN_BUDGET);
        } catch (Throwable t) {
            result = t;
            unexpected.add(t);
        }
        callbacks.add(new Callback(hook, "stop", result, System.nanoTime() - start,
                Thread.currentThread().getName()));
    }

    /** The report the provider's own {@code stop} returned, if it called it. */
    DrainReport calledBackReport() {
        for (Callback c : callbacks) {
            if (c.call().equals("stop") && c.result() instanceof DrainReport) {
                return (DrainReport) c.result();
            }
        }
        return null;
    }

    List<Callback> callbacks(String call) {
        List<Callback> out = new ArrayList<>();
        for (Callback c : callbacks) {
            if (c.call().equals(call)) {
                out.add(c);
            }
        }
        return out;
    }

    // ---- hanging ------------------------------------------------------------------------------

    private void hangUntilReleased() {
        if (released.getCount() == 0) {
            return;
        }
        hanging.incrementAndGet();
        hung.countDown();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    released.await();
                    return;
                } catch (InterruptedException e) {
                    interrupted = true; // a wedged call does not notice interrupts
                }
            }
        } finally {
            hanging.decrementAndGet();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void hangFor(Duration d) {
        hanging.incrementAndGet();
        hung.countDown();
        long end = System.nanoTime() + d.toNanos();
        boolean interrupted = false;
        try {
            for (long left; (left = end - System.nanoTime()) > 0; ) {
                try {
                    if (released.await(left, TimeUnit.NANOSECONDS)) {
                        return;
                    }
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            hanging.decrementAndGet();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Lets every hang end now, and later calls pass without hanging. */
    void release() {
        released.countDown();
        firstBatchHold.countDown();
    }

    boolean awaitHung(Duration timeout) {
        return awaitQuietly(hung, timeout);
    }

    int hangingNow() {
        return hanging.get();
    }

    boolean awaitFirstBatch(Duration timeout) {
        return awaitQuietly(firstBatchEntered, timeout);
    }

    void releaseFirstBatch() {
        firstBatchHold.countDown();
    }

    private static boolean awaitQuietly(CountDownLatch latch, Duration timeout) {
        try {
            return latch.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
