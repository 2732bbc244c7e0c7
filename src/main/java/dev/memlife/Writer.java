package dev.memlife;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The write path of one {@link MemoryManager}: a bounded FIFO queue, the single writer thread that
 * empties it in batches, the flush barrier, and the bounded drain at shutdown.
 *
 * <p>One lock guards the queue, the lifecycle {@link State} and the counts that change with them,
 * so a write is either accepted before shutdown began (and then delivered, failed, abandoned or
 * still running when the report is made) or rejected, never lost in between. Providers are only
 * ever called outside the lock. Every accepted write gets the next sequence number; because
 * sequence numbers are handed out under the same lock that orders the queue, the writer finishes
 * them in increasing order, and "every write up to {@code n} is done" is one volatile read of
 * {@link #lastCompletedSeq} — that is the flush barrier.
 */
final class Writer {

    /** The writer's lifecycle; moves only forward, always under {@link #lock}. */
    enum State {
        /** Accepting writes and writing them. */
        RUNNING,
        /** Shutdown began: new writes are rejected; the queue keeps draining in FIFO order. */
        DRAINING,
        /** The drain deadline passed: the queue was emptied into the abandoned list. */
        ABANDONED
    }

    /** How often an idle writer checks for a new write before it sleeps (a few microseconds). */
    private static final int SPINS_BEFORE_SLEEP = 2_000;

    /** Longest single wait, so that a waiter re-reads an injected (possibly manual) clock. */
    private static final long MAX_WAIT_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final String managerName;
    private final String idPrefix;
    private final int capacity;
    private final int maxBatchSize;
    private final ThreadFactory threadFactory;
    private final Clock clock;
    private final ThrottledLog warnings;

    private final ReentrantLock lock = new ReentrantLock();
    /** The writer waits here for work; signalled only when {@link #workerIdle}. */
    private final Condition notEmpty = lock.newCondition();
    /** Callers wait here for queue space; signalled only when {@link #producersWaiting} > 0. */
    private final Condition notFull = lock.newCondition();
    /** Flush and drain wait here; signalled only when {@link #progressWaiters} > 0. */
    private final Condition progress = lock.newCondition();

    // Guarded by lock.
    private final ArrayDeque<Turn> queue = new ArrayDeque<>();
    private final List<String> abandonedIds = new ArrayList<>();
    private boolean workerIdle;
    private int producersWaiting;
    private long rejected;

    /** Written under the lock; read without it by the writer between provider calls. */
    private volatile State state = State.RUNNING;
    /** Written under the lock; read without it to tell the writer thread from a caller. */
    private volatile Thread worker;
    /** Sequence number of the last accepted write; written under the lock, read anywhere. */
    private volatile long lastAcceptedSeq;
    /** Sequence number of the last write the writer finished; written by the writer only. */
    private volatile long lastCompletedSeq;
    /** First sequence number that was abandoned; no wait for it or later can ever succeed. */
    private volatile long abandonedFromSeq = Long.MAX_VALUE;
    /** Threads waiting on {@link #progress}; written under the lock, read by the writer. */
    private volatile int progressWaiters;

    private final AtomicLong delivered = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();

    /** Marks {@link #started} once the drain (or a dying writer) has claimed the rest of a batch. */
    private static final int STOPPED = Integer.MAX_VALUE;
    /** The batch being delivered; replaced only under the lock, read by the drain under the lock. */
    private List<Turn> current = List.of();
    /**
     * How many writes of {@link #current} the writer has claimed to start. The writer claims by CAS
     * before starting a write; the drain claims all the rest at once with {@link #STOPPED}, so each
     * write is either started by the writer or abandoned by the drain, never both.
     */
    private final AtomicInteger started = new AtomicInteger();
    /** How many writes of {@link #current} the writer has claimed, and finished; writer thread only. */
    private int claimed;
    private int finished;

    Writer(String managerName, String idPrefix, int capacity, int maxBatchSize, ThreadFactory threadFactory,
            Clock clock, ThrottledLog warnings) {
        this.managerName = managerName;
        this.idPrefix = idPrefix;
        this.capacity = capacity;
        this.maxBatchSize = maxBatchSize;
        this.threadFactory = threadFactory;
        this.clock = clock;
        this.warnings = warnings;
    }

    // ---- callers ---------------------------------------------------------------------------

    /**
     * Accepts one write, waiting at most {@code timeoutNanos} for space in a full queue.
     *
     * @return true if accepted, false if rejected because shutdown has begun
     * @throws QueueFullException if the queue stayed full for the whole timeout, or the wait was
     *     interrupted (the interrupt flag is then restored)
     */
    boolean enqueue(String sessionId, String user, String assistant, List<Message> messages,
            RegisteredProvider[] route, long timeoutNanos) {
        long acceptedAt = System.currentTimeMillis();
        lock.lock();
        try {
            if (state != State.RUNNING) {
                rejected++;
                return false;
            }
            if (queue.size() >= capacity && !awaitSpace(timeoutNanos)) {
                return false; // the drain counted this caller as rejected when it began
            }
            long seq = lastAcceptedSeq + 1;
            queue.addLast(new Turn(idPrefix, seq, sessionId, user, assistant, messages, acceptedAt, seq, route));
            lastAcceptedSeq = seq;
            if (worker == null) {
                startWorker();
            } else if (workerIdle) {
                notEmpty.signal();
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits for space; false if shutdown began meanwhile, in which case {@link #drain} has already
     * counted this caller as rejected. Called with the lock held.
     */
    private boolean awaitSpace(long timeoutNanos) {
        long start = System.nanoTime();
        long remaining = timeoutNanos;
        producersWaiting++;
        try {
            while (queue.size() >= capacity) {
                if (state != State.RUNNING) {
                    return false;
                }
                if (remaining <= 0) {
                    rejected++;
                    throw queueFull(start, false);
                }
                remaining = notFull.awaitNanos(remaining);
            }
            return state == State.RUNNING;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            if (state == State.RUNNING) {
                rejected++; // otherwise the drain already counted this caller
            }
            throw queueFull(start, true);
        } finally {
            producersWaiting--;
        }
    }

    private QueueFullException queueFull(long startNanos, boolean interrupted) {
        long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
        return new QueueFullException(managerName, capacity, queue.size() + inFlightCount(), waitedMillis,
                interrupted);
    }

    /**
     * The flush barrier: true once every write accepted before this call has been handed to every
     * provider; false on timeout, interrupt, abandonment, or when called from the writer itself.
     */
    boolean flush(long timeoutNanos) {
        long target = lastAcceptedSeq;
        if (lastCompletedSeq >= target) {
            return true;
        }
        if (Thread.currentThread() == worker) {
            return false; // the writer cannot wait for itself
        }
        return awaitCompleted(target, saturatedAdd(clock.nanoTime(), timeoutNanos));
    }

    private boolean awaitCompleted(long target, long deadline) {
        lock.lock();
        progressWaiters++;
        try {
            while (lastCompletedSeq < target) {
                long remaining = deadline - clock.nanoTime();
                if (target >= abandonedFromSeq || remaining <= 0) {
                    return false;
                }
                progress.awaitNanos(Math.min(remaining, MAX_WAIT_SLICE_NANOS));
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            progressWaiters--;
            lock.unlock();
        }
    }

    /** Writes queued or being written now. */
    long pending() {
        lock.lock();
        try {
            return queue.size() + inFlightCount();
        } finally {
            lock.unlock();
        }
    }

    /** Called with the lock held: accepted writes neither finished, abandoned nor queued. */
    private long inFlightCount() {
        return lastAcceptedSeq - delivered.get() - failed.get() - abandonedIds.size() - queue.size();
    }

    // ---- shutdown --------------------------------------------------------------------------

    /**
     * Stops accepting writes and lets the queue drain until the deadline; then abandons whatever
     * the writer has not started. Called once, by the manager's shutdown.
     */
    Outcome drain(long timeoutNanos) {
        long deadline = saturatedAdd(clock.nanoTime(), timeoutNanos);
        long target;
        lock.lock();
        try {
            state = State.DRAINING;
            target = lastAcceptedSeq;
            if (workerIdle) {
                notEmpty.signal(); // let an idle writer see the new state and exit
            }
            rejected += producersWaiting; // callers waiting for space are rejected as they wake
            notFull.signalAll();
        } finally {
            lock.unlock();
        }
        boolean complete = awaitCompleted(target, deadline);
        lock.lock();
        try {
            if (!complete) {
                state = State.ABANDONED;
                int from = started.getAndSet(STOPPED);
                for (int i = from; i < current.size(); i++) {
                    abandon(current.get(i));
                }
                for (Turn t; (t = queue.pollFirst()) != null; ) {
                    abandon(t);
                }
                progress.signalAll(); // flushes waiting for abandoned writes return false now
            }
            long doneDelivered = delivered.get();
            long doneFailed = failed.get();
            long stillRunning = lastAcceptedSeq - doneDelivered - doneFailed - abandonedIds.size();
            return new Outcome(doneDelivered, doneFailed, List.copyOf(abandonedIds), stillRunning, rejected);
        } finally {
            lock.unlock();
        }
    }

    /** Called with the lock held, in acceptance order. */
    private void abandon(Turn t) {
        if (abandonedIds.isEmpty()) {
            abandonedFromSeq = t.seq;
        }
        abandonedIds.add(t.writeId());
    }

    /** Counts rejected writes that arrive after {@link #drain} made its outcome. */
    long rejectedSoFar() {
        lock.lock();
        try {
            return rejected;
        } finally {
            lock.unlock();
        }
    }

    /** What the drain did, for the manager's report. */
    record Outcome(long delivered, long failed, List<String> abandonedIds, long stillRunning, long rejected) {}

    /** The writer thread, if one was started; for tests. */
    Thread workerThread() {
        return worker;
    }

    // ---- the writer thread -----------------------------------------------------------------

    /** Called with the lock held. */
    private void startWorker() {
        Thread t = threadFactory.newThread(this::runWorker);
        if (t == null) {
            throw new IllegalStateException("thread factory returned null for the writer of manager '"
                    + managerName + "'");
        }
        worker = t;
        t.start();
    }

    private void runWorker() {
        List<Turn> batch = new ArrayList<>(Math.min(maxBatchSize, 1024));
        try {
            while (takeBatch(batch)) {
                deliver(batch);
            }
        } catch (VirtualMachineError fatal) {
            failRestOfBatch(batch);
            lock.lock();
            try {
                worker = null;
                if (!queue.isEmpty() && state != State.ABANDONED) {
                    startWorker(); // queued writes still need a writer; this one is going down
                }
            } finally {
                lock.unlock();
            }
            throw fatal;
        }
    }

    /** Takes up to a batch of queued writes; false when the writer should exit. */
    private boolean takeBatch(List<Turn> batch) {
        spinWhileCaughtUp(batch.isEmpty() ? 0 : batch.get(batch.size() - 1).seq);
        lock.lock();
        try {
            batch.clear();
            while (queue.isEmpty() && state == State.RUNNING) {
                workerIdle = true;
                try {
                    notEmpty.await();
                } catch (InterruptedException ignored) {
                    // The writer stops by state only; an interrupt left behind by a provider is cleared here.
                } finally {
                    workerIdle = false;
                }
            }
            if (queue.isEmpty() || state == State.ABANDONED) {
                return false;
            }
            int n = Math.min(queue.size(), maxBatchSize);
            for (int i = 0; i < n; i++) {
                batch.add(queue.pollFirst());
            }
            started.set(0);
            current = batch;
            claimed = 0;
            finished = 0;
            if (producersWaiting > 0) {
                notFull.signalAll();
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Before going to sleep on an empty queue, the writer spins briefly for the next write: when
     * writes stream in, this saves a park and an unpark (a system call each) per write.
     */
    private void spinWhileCaughtUp(long lastTakenSeq) {
        for (int i = 0; i < SPINS_BEFORE_SLEEP && lastAcceptedSeq == lastTakenSeq && state == State.RUNNING; i++) {
            Thread.onSpinWait();
        }
    }

    /**
     * Hands the batch to the providers. Consecutive writes with the same route go together: as one
     * {@code syncBatch} per provider when every provider of the route writes batches, else one write
     * at a time, each to every provider before the next starts. Before starting writes the writer
     * claims them through {@link #started}; once the drain has claimed the rest, it stops.
     */
    private void deliver(List<Turn> batch) {
        int from = 0;
        while (from < batch.size()) {
            RegisteredProvider[] route = batch.get(from).route;
            int to = from + 1;
            while (to < batch.size() && batch.get(to).route == route) {
                to++;
            }
            boolean wholeRun = writesBatches(route);
            for (int i = from; i < to; ) {
                int end = wholeRun ? to : i + 1;
                if (!started.compareAndSet(i, end)) {
                    return; // the drain deadline passed and the drain abandoned the rest
                }
                claimed = end;
                List<Turn> writes = wholeRun ? Collections.unmodifiableList(batch.subList(i, end)) : List.of(batch.get(i));
                boolean ok = handToEveryProvider(writes, route);
                (ok ? delivered : failed).addAndGet(writes.size());
                finished = end;
                lastCompletedSeq = batch.get(end - 1).seq;
                if (progressWaiters > 0) {
                    signalProgress();
                }
                i = end;
            }
            from = to;
        }
    }

    private static boolean writesBatches(RegisteredProvider[] route) {
        for (RegisteredProvider p : route) {
            if (!p.writesBatches) {
                return false;
            }
        }
        return route.length > 0;
    }

    /** True if every provider took the writes; each failure is counted for its provider and logged. */
    private boolean handToEveryProvider(List<Turn> writes, RegisteredProvider[] route) {
        boolean ok = true;
        for (RegisteredProvider p : route) {
            if (state == State.ABANDONED) {
                warnings.warn(managerName + "/stopped", "memory manager '" + managerName + "': the drain deadline "
                        + "passed while a write was in progress; it was not handed to the remaining providers "
                        + "and is counted as failed", null);
                return false;
            }
            try {
                if (writes.size() == 1 && !p.writesBatches) {
                    p.provider.syncTurn(writes.get(0));
                } else {
                    p.provider.syncBatch(writes);
                }
            } catch (Throwable t) {
                rethrowIfFatal(t);
                ok = false;
                p.failedWrites.addAndGet(writes.size());
                warnings.warn(managerName + "/" + p.name + "/write", "memory provider '" + p.name + "' of manager '"
                        + managerName + "' failed to write " + describe(writes) + "; the next provider still gets it", t);
            }
        }
        return ok;
    }

    private static String describe(List<Turn> writes) {
        return writes.size() == 1 ? "write " + writes.get(0).writeId() : "a batch of " + writes.size() + " writes";
    }

    /**
     * The writer is going down with an {@link Error} mid-batch: the write in progress and the writes
     * it had not started (unless the drain already claimed them) count as failed.
     */
    private void failRestOfBatch(List<Turn> batch) {
        int seen = started.get();
        boolean tookRest = seen != STOPPED && started.compareAndSet(seen, STOPPED); // only the drain competes
        int end = tookRest ? batch.size() : claimed;
        if (end > finished) {
            failed.addAndGet(end - finished);
            lastCompletedSeq = batch.get(end - 1).seq;
        }
        signalProgress();
    }

    private void signalProgress() {
        lock.lock();
        try {
            progress.signalAll();
        } finally {
            lock.unlock();
        }
    }

    static void rethrowIfFatal(Throwable t) {
        if (t instanceof VirtualMachineError) {
            throw (VirtualMachineError) t;
        }
    }

    static long saturatedAdd(long a, long b) {
        long sum = a + b;
        return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
    }
}
