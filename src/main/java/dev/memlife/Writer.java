package dev.memlife;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The write path of one {@link MemoryManager}: a bounded FIFO queue, the single writer thread that
 * empties it in batches, the flush barrier, and the bounded drain at shutdown.
 *
 * <p><b>Callers never take a lock on the fast path.</b> A caller enters a gate ({@link
 * #activeCallers}), checks the state, takes the next sequence number and appends to a lock-free
 * queue. Shutdown flips the state and then waits for the gate to empty, so after that no write can
 * slip in: every write is either accepted before shutdown began, or rejected and counted.
 *
 * <p><b>The barrier counts.</b> The writer finishes writes in queue order and publishes how many it
 * has finished ({@link #completed}). A flush that starts when {@code n} writes were accepted is met
 * once {@code completed >= n}: every write accepted before the flush is ahead in the queue of any
 * write accepted after it, so the first {@code n} writes finished include all of them.
 *
 * <p><b>Abandonment is a claim.</b> The writer claims each write (by CAS on {@link #started})
 * before it starts it; a drain whose deadline passed claims all the rest at once. A write is thus
 * started by the writer or abandoned by the drain, never both and never neither.
 */
final class Writer {

    /** The writer's lifecycle; moves only forward. */
    enum State {
        /** Accepting writes and writing them. */
        RUNNING,
        /** Shutdown began: new writes are rejected; the queue keeps draining in FIFO order. */
        DRAINING,
        /** The drain deadline passed: what the writer had not started was abandoned. */
        ABANDONED
    }

    /** Longest single wait, so that a waiter re-reads an injected (possibly manual) clock. */
    private static final long MAX_WAIT_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /** How often an idle writer looks for a new write before it parks (a few microseconds). */
    private static final int SPINS_BEFORE_PARK = 100;
    /** Marks {@link #started} once the drain (or a dying writer) has claimed the rest of a batch. */
    private static final int STOPPED = Integer.MAX_VALUE;

    private final String managerName;
    private final String idPrefix;
    private final int capacity;
    private final int maxBatchSize;
    private final ThreadFactory threadFactory;
    private final Clock clock;
    private final ThrottledLog warnings;

    // ---- the queue, fed without locks ----
    private final ConcurrentLinkedQueue<Turn> queue = new ConcurrentLinkedQueue<>();
    /** Callers between their state check and their append; shutdown waits for it to reach zero. */
    private final AtomicInteger activeCallers = new AtomicInteger();
    /** Writes accepted so far; the next sequence number. */
    private final AtomicLong accepted = new AtomicLong();
    /** Written only while holding the {@link #waits} lock, read anywhere. */
    private volatile State state = State.RUNNING;
    /** Writes the writer has taken off the queue; written by the writer only. */
    private volatile long taken;
    /** Writes the writer has finished (delivered or failed); written by the writer only. */
    private volatile long completed;
    private final AtomicLong delivered = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();

    // ---- the writer thread ----
    private final Object startLock = new Object();
    /** The writer thread once started; null again if it died of an Error. */
    private volatile Thread worker;
    /** Set by the writer just before it parks; a caller that appends then sees it and unparks. */
    private volatile boolean workerParked;

    // ---- abandonment, guarded by batchLock (taken once per batch by the writer, once by the drain) ----
    private final ReentrantLock batchLock = new ReentrantLock();
    private List<Turn> current = List.of();
    /** How many writes of {@link #current} the writer has claimed to start, or {@link #STOPPED}. */
    private final AtomicInteger started = new AtomicInteger();
    private final List<String> abandonedIds = new ArrayList<>();
    /** Size of {@link #abandonedIds}, for readers outside the lock. */
    private volatile long abandonedCount;
    /** How many writes of {@link #current} the writer has claimed, and finished; writer thread only. */
    private int claimed;
    private int finished;
    /** Writes finished but not yet added to the shared counters; writer thread only. */
    private int unpublishedDelivered;
    private int unpublishedFailed;

    // ---- waiting: callers for room, flushes and the drain for progress ----
    private final ReentrantLock waits = new ReentrantLock();
    private final Condition notFull = waits.newCondition();
    private final Condition progress = waits.newCondition();
    /** Callers waiting for room; written under {@link #waits}, read by the writer to decide whether to signal. */
    private volatile int callersWaiting;
    /** Threads waiting for progress; written under {@link #waits}, read by the writer to decide whether to signal. */
    private volatile int progressWaiters;

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
     * Accepts one write, waiting at most {@code timeoutNanos} for room in a full queue.
     *
     * @return true if accepted, false if rejected because shutdown has begun
     * @throws QueueFullException if the queue stayed full for the whole timeout, or the wait was
     *     interrupted (the interrupt flag is then restored)
     */
    boolean enqueue(String sessionId, String user, String assistant, List<Message> messages,
            RegisteredProvider[] route, long timeoutNanos) {
        long acceptedAt = System.currentTimeMillis();
        long waitStart = 0;
        while (true) {
            activeCallers.incrementAndGet();
            try {
                if (state != State.RUNNING) {
                    rejected.incrementAndGet();
                    return false;
                }
                if (accepted.get() - taken < capacity) {
                    long seq = accepted.incrementAndGet();
                    queue.offer(new Turn(idPrefix, seq, sessionId, user, assistant, messages, acceptedAt, route));
                    wakeWorker();
                    return true;
                }
            } finally {
                activeCallers.decrementAndGet();
            }
            if (waitStart == 0) {
                waitStart = System.nanoTime() | 1; // never 0
            }
            if (!awaitRoom(waitStart, timeoutNanos)) {
                return false; // shutdown began while this caller waited; the drain counted it
            }
        }
    }

    /**
     * Waits for room in the queue, outside the gate so that shutdown need not wait for it.
     *
     * @return true to try again; false if shutdown began while waiting (the drain counted this
     *     caller as rejected)
     */
    private boolean awaitRoom(long waitStart, long timeoutNanos) {
        waits.lock();
        try {
            if (state != State.RUNNING) {
                return true; // the retry finds the state and counts the rejection itself
            }
            callersWaiting++;
            try {
                while (accepted.get() - taken >= capacity && state == State.RUNNING) {
                    long remaining = timeoutNanos - (System.nanoTime() - waitStart);
                    if (remaining <= 0) {
                        rejected.incrementAndGet();
                        throw queueFull(waitStart, false);
                    }
                    notFull.awaitNanos(remaining);
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
            throw queueFull(waitStart, true);
        } finally {
            waits.unlock();
        }
    }

    private QueueFullException queueFull(long waitStart, boolean interrupted) {
        long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - waitStart);
        return new QueueFullException(managerName, capacity, pending(), waitedMillis, interrupted);
    }

    private void wakeWorker() {
        Thread w = worker;
        if (w == null) {
            startWorker();
        } else if (workerParked) {
            LockSupport.unpark(w);
        }
    }

    /**
     * The flush barrier: true once every write accepted before this call has been handed to every
     * provider; false on timeout, interrupt, abandonment, or when called from the writer itself.
     */
    boolean flush(long timeoutNanos) {
        long target = accepted.get();
        if (completed >= target) {
            return true;
        }
        if (Thread.currentThread() == worker) {
            return false; // the writer cannot wait for itself
        }
        return awaitCompleted(target, saturatedAdd(clock.nanoTime(), timeoutNanos));
    }

    private boolean awaitCompleted(long target, long deadline) {
        waits.lock();
        progressWaiters++;
        try {
            while (completed < target) {
                long remaining = deadline - clock.nanoTime();
                boolean unreachable = state == State.ABANDONED && target > accepted.get() - abandonedCount;
                if (unreachable || remaining <= 0) {
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
            waits.unlock();
        }
    }

    /** Writes accepted but neither finished nor abandoned: queued, or being written now. */
    long pending() {
        return Math.max(0, accepted.get() - completed - abandonedCount);
    }

    /** Writes rejected so far. */
    long rejectedSoFar() {
        return rejected.get();
    }

    /** The writer thread, if one was started; for tests. */
    Thread workerThread() {
        return worker;
    }

    // ---- shutdown --------------------------------------------------------------------------

    /** What the drain did, for the manager's report. */
    record Outcome(long delivered, long failed, List<String> abandonedIds, long stillRunning, long rejected) {}

    /**
     * Stops accepting writes and lets the queue drain until the deadline; then abandons whatever
     * the writer has not started. Called once, by the manager's shutdown.
     */
    Outcome drain(long timeoutNanos) {
        long deadline = saturatedAdd(clock.nanoTime(), timeoutNanos);
        waits.lock();
        try {
            state = State.DRAINING;
            rejected.addAndGet(callersWaiting); // callers waiting for room are rejected as they wake
            notFull.signalAll();
        } finally {
            waits.unlock();
        }
        while (activeCallers.get() != 0) {
            Thread.onSpinWait(); // a caller is a few instructions from its append; after it, none can come
        }
        long target = accepted.get(); // final: every later caller sees DRAINING
        Thread w = worker;
        if (w != null) {
            LockSupport.unpark(w); // let an idle writer see the new state
        }
        boolean complete = awaitCompleted(target, deadline);
        batchLock.lock();
        try {
            if (!complete) {
                abandonRest();
            }
            long doneDelivered = delivered.get();
            long doneFailed = failed.get();
            long stillRunning = target - doneDelivered - doneFailed - abandonedIds.size();
            return new Outcome(doneDelivered, doneFailed, List.copyOf(abandonedIds), stillRunning, rejected.get());
        } finally {
            batchLock.unlock();
        }
    }

    /** Called under {@link #batchLock}: claims every write the writer has not started. */
    private void abandonRest() {
        waits.lock();
        try {
            state = State.ABANDONED;
        } finally {
            waits.unlock();
        }
        int from = started.getAndSet(STOPPED);
        for (int i = from; i < current.size(); i++) {
            abandonedIds.add(current.get(i).writeId());
        }
        for (Turn t; (t = queue.poll()) != null; ) {
            abandonedIds.add(t.writeId());
        }
        abandonedCount = abandonedIds.size();
        signalProgress(); // flushes waiting for abandoned writes return false now
    }

    // ---- the writer thread -----------------------------------------------------------------

    private void startWorker() {
        synchronized (startLock) {
            if (worker != null) {
                return;
            }
            Thread t = threadFactory.newThread(this::runWorker);
            if (t == null) {
                throw new IllegalStateException("thread factory returned null for the writer of manager '"
                        + managerName + "'");
            }
            worker = t;
            t.start();
        }
    }

    private void runWorker() {
        List<Turn> batch = new ArrayList<>(Math.min(maxBatchSize, 1024));
        try {
            while (awaitWork() && takeBatch(batch)) {
                deliver(batch);
            }
        } catch (VirtualMachineError fatal) {
            failRestOfBatch(batch);
            synchronized (startLock) {
                worker = null;
            }
            if (!queue.isEmpty() && state != State.ABANDONED) {
                startWorker(); // queued writes still need a writer; this one is going down
            }
            throw fatal;
        }
    }

    /**
     * Waits until there is work: spins briefly (when writes stream in, this saves a park and an
     * unpark per write), then parks. Returns false when the writer should exit: shutdown began and
     * no write is queued or about to be.
     */
    private boolean awaitWork() {
        for (int spins = 0; ; spins++) {
            if (!queue.isEmpty()) {
                return state != State.ABANDONED;
            }
            State s = state;
            if (s == State.ABANDONED) {
                return false;
            }
            if (s == State.DRAINING && activeCallers.get() == 0 && queue.isEmpty()) {
                return false; // read in this order, nothing can be appended any more
            }
            if (spins < SPINS_BEFORE_PARK || s == State.DRAINING) {
                Thread.onSpinWait();
                continue;
            }
            workerParked = true;
            if (queue.isEmpty() && state == State.RUNNING) {
                LockSupport.park(this);
            }
            workerParked = false;
            Thread.interrupted(); // the writer stops by state only; clear an interrupt a provider left behind
        }
    }

    /** Takes up to a batch of queued writes; false when the drain abandoned the rest. */
    private boolean takeBatch(List<Turn> batch) {
        batchLock.lock();
        try {
            if (state == State.ABANDONED) {
                return false;
            }
            batch.clear();
            for (Turn t; batch.size() < maxBatchSize && (t = queue.poll()) != null; ) {
                batch.add(t);
            }
            taken += batch.size();
            started.set(0);
            current = batch;
            claimed = 0;
            finished = 0;
        } finally {
            batchLock.unlock();
        }
        if (callersWaiting > 0) {
            signal(notFull);
        }
        return true;
    }

    /**
     * Hands the batch to the providers. Consecutive writes with the same route go together: as one
     * {@code syncBatch} per provider when every provider of the route writes batches, else one write
     * at a time, each to every provider before the next starts.
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
                if (handToEveryProvider(writes, route)) {
                    unpublishedDelivered += writes.size();
                } else {
                    unpublishedFailed += writes.size();
                }
                finished = end;
                if (progressWaiters > 0 || state != State.RUNNING) {
                    publish(); // someone is waiting on this write, or a drain is counting
                }
                i = end;
            }
            from = to;
        }
        publish();
    }

    /**
     * Publishes the writes finished since the last call. While nobody waits, the writer publishes
     * once per batch rather than once per write: the counters are shared with callers, and fewer
     * writes to them keep the callers' cache lines quiet.
     */
    private void publish() {
        int done = unpublishedDelivered + unpublishedFailed;
        if (done == 0) {
            return;
        }
        if (unpublishedDelivered > 0) {
            delivered.addAndGet(unpublishedDelivered);
        }
        if (unpublishedFailed > 0) {
            failed.addAndGet(unpublishedFailed);
        }
        unpublishedDelivered = 0;
        unpublishedFailed = 0;
        completed += done; // single writer: the writer thread
        if (progressWaiters > 0) {
            signalProgress();
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
                        + managerName + "' failed on " + describe(writes) + "; the next provider still gets it", t);
            }
        }
        return ok;
    }

    private static String describe(List<Turn> writes) {
        return writes.size() == 1 ? "write " + writes.get(0).writeId() : "a batch of " + writes.size() + " writes";
    }

    /**
     * The writer is going down with an {@link Error} mid-batch: the writes it started but did not
     * finish, and those it had not started (unless the drain already claimed them), count as failed.
     */
    private void failRestOfBatch(List<Turn> batch) {
        publish();
        int seen = started.get();
        boolean tookRest = seen != STOPPED && started.compareAndSet(seen, STOPPED); // only the drain competes
        int end = tookRest ? batch.size() : claimed;
        if (end > finished) {
            failed.addAndGet(end - finished);
            completed += end - finished;
        }
        signalProgress();
    }

    private void signalProgress() {
        signal(progress);
    }

    private void signal(Condition condition) {
        waits.lock();
        try {
            condition.signalAll();
        } finally {
            waits.unlock();
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
