package dev.memlife;

import dev.memlife.internal.Deadline;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * A writer's lifecycle {@link State}, and everyone who waits on the writer: callers for room in a
 * full queue ({@link #awaitRoom}), flushes and the drain for its progress ({@link
 * #awaitProgress}). The writer tells it what it did (a batch taken, a chunk published), and it
 * wakes whoever waits. It also counts the writes refused, and the writes the drain abandoned.
 *
 * <p>{@link #waits} guards changes of the state and its two conditions, {@link #notFull} and
 * {@link #progressed}. It is a leaf: no lock is taken while it is held. The writer takes it only
 * when it finds someone waiting.
 */
final class Lifecycle {

    /** The writer's lifecycle; moves only forward. */
    enum State {
        /** Accepting writes and writing them. */
        RUNNING,
        /** Shutdown began: new writes are rejected; the queue keeps draining in FIFO order. */
        DRAINING,
        /** The drain deadline passed: what the writer had not started was abandoned. */
        ABANDONED
    }

    private final String managerName;
    private final TurnQueue queue;
    private final WriterThread thread;

    private final ReentrantLock waits = new ReentrantLock();
    private final Condition notFull = waits.newCondition();
    private final Condition progressed = waits.newCondition();
    /** Callers waiting for room; written under {@link #waits}, read by the writer to decide whether to signal. */
    private volatile int callersWaiting;
    /**
     * Threads waiting for progress; written under {@link #waits}, read by the writer after it
     * publishes. The writer's read may pass its release store of the count (no fence), so a
     * waiter can miss a signal: it then sees the count at its next slice, {@link
     * Deadline#MAX_SLICE_NANOS} later at most. Harmless, and it keeps a fence off every write.
     */
    private volatile int progressWaiters;

    /** Written only while holding {@link #waits}, read anywhere. */
    private volatile State state = State.RUNNING;
    private final AtomicLong rejected = new AtomicLong();
    /** How many writes the drain abandoned; 0 until it abandons any. */
    private volatile long abandonedCount;

    Lifecycle(String managerName, TurnQueue queue, WriterThread thread) {
        this.managerName = managerName;
        this.queue = queue;
        this.thread = thread;
    }

    /** The lifecycle state. */
    State state() {
        return state;
    }

    /** Writes rejected so far. */
    long rejected() {
        return rejected.get();
    }

    /** One more write rejected. */
    void reject() {
        rejected.incrementAndGet();
    }

    /** Writes the drain abandoned; 0 until it abandons any. */
    long abandonedCount() {
        return abandonedCount;
    }

    /** Writes accepted but neither finished nor abandoned: queued, or being written now. */
    long pending() {
        return Math.max(0, queue.reserved() - queue.finished() - abandonedCount);
    }

    // ---- the writer ------------------------------------------------------------------------

    /**
     * {@return whether the writer may linger for a fuller batch: it runs, and nobody waits for it,
     * neither a flush or the drain for progress nor a caller for room}
     */
    boolean mayLinger() {
        return state == State.RUNNING && progressWaiters == 0 && callersWaiting == 0;
    }

    /** The writer took a batch: wakes the callers waiting for room, if there are any. */
    void roomMade() {
        if (callersWaiting > 0) {
            signal(notFull);
        }
    }

    /** The writer published a chunk: wakes the flushes and the drain, if any wait. */
    void writesFinished() {
        if (progressWaiters > 0) {
            signalProgress();
        }
    }

    /** Wakes the flushes and the drain, so they look at the counts and the state again. */
    void signalProgress() {
        signal(progressed);
    }

    private void signal(Condition condition) {
        waits.lock();
        try {
            condition.signalAll();
        } finally {
            waits.unlock();
        }
    }

    // ---- callers -----------------------------------------------------------------------------

    /**
     * Counts one write in {@code accepted} while the writer runs, else as rejected. Under {@link
     * #waits}, where the drain changes the state, so a write counted accepted here is in the
     * drain's count and one refused is counted rejected.
     *
     * @return whether it was accepted
     */
    boolean acceptIfRunning(AtomicLong accepted) {
        waits.lock();
        try {
            if (state != State.RUNNING) {
                rejected.incrementAndGet();
                return false;
            }
            accepted.incrementAndGet();
            return true;
        } finally {
            waits.unlock();
        }
    }

    /**
     * Waits until fewer than {@code limit} writes wait for the writer: room in the queue at its
     * capacity. Holds no reservation while it waits, so shutdown never waits for a waiting caller:
     * it counts it as rejected and wakes it.
     *
     * @return true to try again; false if shutdown began while waiting (the drain counted this
     *     caller as rejected)
     * @throws QueueFullException if there was no room before {@code wait} passed, or the wait was
     *     interrupted (the interrupt flag is then restored); counted as rejected
     */
    boolean awaitRoom(Deadline wait, long limit) {
        waits.lock();
        try {
            if (state != State.RUNNING) {
                return true; // the retry finds the state and counts the rejection itself
            }
            callersWaiting++;
            thread.unpark(); // the writer makes room by taking a batch
            try {
                while (queue.untaken() >= limit && state == State.RUNNING) {
                    if (wait.expired()) {
                        rejected.incrementAndGet();
                        throw queueFull(wait, false);
                    }
                    notFull.awaitNanos(wait.sliceNanos());
                }
            } finally {
                callersWaiting--;
            }
            return state == State.RUNNING;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            if (state == State.RUNNING) {
                rejected.incrementAndGet(); // otherwise the drain already counted this caller
            }
            throw queueFull(wait, true);
        } finally {
            waits.unlock();
        }
    }

    private QueueFullException queueFull(Deadline wait, boolean interrupted) {
        return new QueueFullException(managerName, queue.capacity(), pending(), wait.elapsed().toMillis(), interrupted);
    }

    // ---- flushes and the drain ---------------------------------------------------------------

    /** Waits until {@code target} writes are finished; false at the deadline, on interrupt or abandonment. */
    boolean awaitFinished(long target, Supplier<Deadline> deadline) {
        return awaitProgress(() -> queue.finished() >= target,
                () -> state == State.ABANDONED && target > queue.reserved() - abandonedCount, deadline);
    }

    /**
     * Waits, under {@link #waits}, until {@code done} holds; false once {@code hopeless} holds, at
     * the deadline, or on interrupt (the flag restored). Re-reads the deadline, and its ticker, at
     * every slice: the drain's may move earlier meanwhile.
     */
    boolean awaitProgress(BooleanSupplier done, BooleanSupplier hopeless, Supplier<Deadline> deadline) {
        waits.lock();
        progressWaiters++;
        thread.unpark(); // ends a linger: the writer is needed now
        try {
            while (!done.getAsBoolean()) {
                long remaining = deadline.get().remainingNanos();
                if (hopeless.getAsBoolean() || remaining <= 0) {
                    return false;
                }
                progressed.awaitNanos(Math.min(remaining, Deadline.MAX_SLICE_NANOS));
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            progressWaiters--;
            waits.unlock();
        }
    }

    /**
     * Shutdown began: closes the queue, moves to {@link State#DRAINING}, and rejects the callers
     * waiting for room (they are woken and return as rejected).
     *
     * @return how many writes were accepted: final, no write can be reserved after this
     */
    long beginDrain() {
        waits.lock();
        try {
            long target = queue.close();
            state = State.DRAINING;
            rejected.addAndGet(callersWaiting); // callers waiting for room are rejected as they wake
            notFull.signalAll();
            return target;
        } finally {
            waits.unlock();
        }
    }

    /** The drain deadline passed: moves to {@link State#ABANDONED}; the writer starts nothing more. */
    void abandon() {
        waits.lock();
        try {
            state = State.ABANDONED;
        } finally {
            waits.unlock();
        }
    }

    /** The drain abandoned {@code count} writes in all; wakes the flushes waiting for them, which return false. */
    void abandoned(long count) {
        abandonedCount = count;
        signalProgress();
    }
}
