package dev.memlife;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
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
 * <p><b>Callers never take a lock on the fast path.</b> A caller reserves its write (one
 * compare-and-set that also checks the capacity and whether shutdown began) and appends it to a
 * lock-free list: see {@link TurnQueue}. Shutdown closes the queue in the same word, so every write
 * is either accepted before shutdown began, or rejected and counted.
 *
 * <p><b>The barrier counts.</b> The writer finishes writes in queue order and publishes how many
 * it has finished ({@link TurnQueue#finished()}). A flush that starts when {@code n} writes were
 * reserved is met once {@code finished >= n}: every write whose {@code syncAll} returned before
 * the flush was linked into the queue before it, and at most {@code n} writes were linked by then,
 * so they are all among the first {@code n} the writer finishes.
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
    /**
     * How long the drain waits, past its deadline, for a reserved write whose caller has not linked
     * it yet. A caller is a few instructions from linking; only one that died there (a stack
     * overflow between the two steps) leaves the drain waiting this long.
     */
    private static final long LINK_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /** Marks {@link #started} once the drain (or a dying writer) has claimed the rest of a batch. */
    private static final int STOPPED = Integer.MAX_VALUE;

    private final String managerName;
    private final String idPrefix;
    private final int maxBatchSize;
    private final ThreadFactory threadFactory;
    private final Clock clock;
    private final ThrottledLog warnings;

    // ---- the queue, fed without locks ----
    private final TurnQueue queue;
    /** Written only while holding the {@link #waits} lock, read anywhere. */
    private volatile State state = State.RUNNING;
    private final AtomicLong delivered = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();

    // ---- the writer thread ----
    private final Object startLock = new Object();
    /** The writer thread once started; null again if it died of an Error. */
    private volatile Thread worker;

    // ---- abandonment, guarded by batchLock (taken once per batch by the writer, once by the drain) ----
    private final ReentrantLock batchLock = new ReentrantLock();
    /** The writer's current batch: the one list it refills, set when the writer starts. */
    private List<Turn> current = List.of();
    /** How many writes of {@link #current} the writer has claimed to start, or {@link #STOPPED}. */
    private final AtomicInteger started = new AtomicInteger();
    private final AbandonedWriteIds.Builder abandoned;
    /** Size of {@link #abandoned}, for readers outside the lock. */
    private volatile long abandonedCount;

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
        this.queue = new TurnQueue(capacity);
        this.abandoned = new AbandonedWriteIds.Builder(idPrefix);
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
        // Built before it is reserved: once reserved, nothing may stop it from being appended.
        // Its sequence number comes with the reservation, its time when the writer takes it.
        Turn turn = new Turn(idPrefix, 0, sessionId, user, assistant, messages, 0, route);
        long waitStart = 0;
        while (true) {
            long seq = queue.reserve();
            if (seq > 0) {
                turn.assignSeq(seq);
                if (queue.append(turn)) {
                    wakeWorker();
                }
                return true;
            }
            if (seq == TurnQueue.REJECTED) {
                rejected.incrementAndGet();
                return false;
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
     * Waits for room in the queue. Holds no reservation while it waits, so shutdown never waits
     * for a waiting caller: it counts it as rejected and wakes it.
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
                while (queue.isFull() && state == State.RUNNING) {
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
        return new QueueFullException(managerName, queue.capacity(), pending(), waitedMillis, interrupted);
    }

    /** Called by the one caller that found the writer parked, or not started yet. */
    private void wakeWorker() {
        Thread w = worker;
        if (w != null) {
            LockSupport.unpark(w);
            return;
        }
        try {
            startWorker();
        } catch (RuntimeException | Error e) {
            queue.announcePark(); // still no writer: the next caller tries again
            throw e;
        }
    }

    /**
     * The flush barrier: true once every write accepted before this call has been handed to every
     * provider; false on timeout, interrupt, abandonment, or when called from the writer itself.
     */
    boolean flush(long timeoutNanos) {
        long target = queue.reserved();
        if (queue.finished() >= target) {
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
            while (queue.finished() < target) {
                long remaining = deadline - clock.nanoTime();
                boolean unreachable = state == State.ABANDONED && target > queue.reserved() - abandonedCount;
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
        return Math.max(0, queue.reserved() - queue.finished() - abandonedCount);
    }

    /** Writes rejected so far. */
    long rejectedSoFar() {
        return rejected.get();
    }

    /** The writer thread, if one was started; for tests. */
    Thread workerThread() {
        return worker;
    }

    /** The queue; for tests that play a caller who dies halfway through an append. */
    TurnQueue queue() {
        return queue;
    }

    // ---- shutdown --------------------------------------------------------------------------

    /** What the drain did, for the manager's report. */
    record Outcome(long delivered, long failed, AbandonedWriteIds abandonedIds, long stillRunning, long rejected) {}

    /**
     * Stops accepting writes and lets the queue drain until the deadline; then abandons whatever
     * the writer has not started. Called once, by the manager's shutdown.
     */
    Outcome drain(long timeoutNanos) {
        long deadline = saturatedAdd(clock.nanoTime(), timeoutNanos);
        long target;
        waits.lock();
        try {
            target = queue.close(); // final: no write can be reserved after this
            state = State.DRAINING;
            rejected.addAndGet(callersWaiting); // callers waiting for room are rejected as they wake
            notFull.signalAll();
        } finally {
            waits.unlock();
        }
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
            long stillRunning = target - doneDelivered - doneFailed - abandoned.size();
            return new Outcome(doneDelivered, doneFailed, abandoned.build(), stillRunning, rejected.get());
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
            abandoned.add(current.get(i));
        }
        long unlinked = queue.reserved() - queue.taken(); // final: the queue is closed
        boolean waiting = false;
        long waitStart = 0;
        for (long n = 0; n < unlinked; ) {
            Turn t = queue.poll();
            if (t != null) {
                abandoned.add(t);
                n++;
                continue;
            }
            // A caller reserved this write and is about to link it. The real clock, not the injected
            // one: a manual clock that never moves must not make the drain wait forever.
            if (!waiting) {
                waiting = true;
                waitStart = System.nanoTime();
            } else if (System.nanoTime() - waitStart > LINK_WAIT_NANOS) {
                warnings.warn(managerName + "/unlinked", "memory manager '" + managerName + "': " + (unlinked - n)
                        + " accepted writes were never linked into the queue (their callers died between the two "
                        + "steps of an append); they are reported as still running", null);
                break;
            }
            Thread.yield();
        }
        abandonedCount = abandoned.size();
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
        batchLock.lock();
        try {
            current = batch;
        } finally {
            batchLock.unlock();
        }
        try {
            while (awaitWork() && takeBatch(batch)) {
                deliver(batch);
            }
        } catch (VirtualMachineError fatal) {
            synchronized (startLock) {
                worker = null;
            }
            queue.announcePark(); // no writer now: the next caller starts one
            if (queue.reserved() > queue.taken() && state != State.ABANDONED) {
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
            State s = state;
            if (s == State.ABANDONED) {
                return false;
            }
            if (queue.hasLinked()) {
                return true;
            }
            if (s == State.DRAINING && queue.taken() >= queue.reserved()) {
                return false; // the count is final once draining: every accepted write was taken
            }
            if (spins < SPINS_BEFORE_PARK || s == State.DRAINING) {
                Thread.onSpinWait(); // while draining nobody wakes the writer; a caller may be linking a write
                continue;
            }
            if (queue.announcePark() && state == State.RUNNING) {
                LockSupport.park(this);
            }
            queue.clearPark();
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
            long now = System.currentTimeMillis();
            for (Turn t; batch.size() < maxBatchSize && (t = queue.poll()) != null; ) {
                t.stampAccepted(now);
                batch.add(t);
            }
            queue.endTake();
            started.set(0);
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
     *
     * <p>The writer publishes what it finished once per batch, or per write while someone waits or
     * a drain counts: its counters share nothing with callers, but fewer writes keep them cheap.
     */
    private void deliver(List<Turn> batch) {
        int claimed = 0;
        int finished = 0;
        int delivered = 0;
        int failed = 0;
        try {
            int from = 0;
            while (from < batch.size()) {
                RegisteredProvider[] route = batch.get(from).route;
                int to = from + 1;
                while (to < batch.size() && batch.get(to).route == route) {
                    to++;
                }
                boolean wholeRun = writesBatches(route);
                for (int i = from; i < to; i = finished) {
                    int end = wholeRun ? to : i + 1;
                    if (!started.compareAndSet(i, end)) {
                        publish(delivered, failed);
                        return; // the drain deadline passed and the drain abandoned the rest
                    }
                    claimed = end;
                    if (handToEveryProvider(batch, i, end, route)) {
                        delivered += end - i;
                    } else {
                        failed += end - i;
                    }
                    finished = end;
                    if (progressWaiters > 0 || state != State.RUNNING) {
                        publish(delivered, failed); // someone is waiting on this write, or a drain is counting
                        delivered = 0;
                        failed = 0;
                    }
                }
                from = to;
            }
            publish(delivered, failed);
        } catch (VirtualMachineError fatal) {
            publish(delivered, failed);
            failRestOfBatch(batch, claimed, finished);
            throw fatal;
        }
    }

    /** Adds finished writes to the shared counters, and wakes whoever waits for progress. */
    private void publish(int delivered, int failed) {
        if (delivered + failed == 0) {
            return;
        }
        if (delivered > 0) {
            this.delivered.addAndGet(delivered);
        }
        if (failed > 0) {
            this.failed.addAndGet(failed);
        }
        queue.markFinished(delivered + failed);
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

    /**
     * Hands {@code batch[from, to)} to every provider of the route: one write as {@code syncTurn}
     * (no list is made for it), several as one {@code syncBatch}. True if every provider took them;
     * each failure is counted for its provider and logged.
     */
    private boolean handToEveryProvider(List<Turn> batch, int from, int to, RegisteredProvider[] route) {
        List<Turn> writes = null;
        boolean ok = true;
        for (RegisteredProvider p : route) {
            if (state == State.ABANDONED) {
                warnings.warn(managerName + "/stopped", "memory manager '" + managerName + "': the drain deadline "
                        + "passed while a write was in progress; it was not handed to the remaining providers "
                        + "and is counted as failed", null);
                return false;
            }
            try {
                if (to - from == 1 && !p.writesBatches) {
                    p.provider.syncTurn(batch.get(from));
                } else {
                    if (writes == null) {
                        writes = Collections.unmodifiableList(batch.subList(from, to));
                    }
                    p.provider.syncBatch(writes);
                }
            } catch (Throwable t) {
                rethrowIfFatal(t);
                ok = false;
                p.failedWrites.addAndGet(to - from);
                warnings.warn(managerName + "/" + p.name + "/write", "memory provider '" + p.name + "' of manager '"
                        + managerName + "' failed on " + describe(batch, from, to) + "; the next provider still gets it",
                        t);
            }
        }
        return ok;
    }

    private static String describe(List<Turn> batch, int from, int to) {
        return to - from == 1 ? "write " + batch.get(from).writeId() : "a batch of " + (to - from) + " writes";
    }

    /**
     * The writer is going down with an {@link Error} mid-batch: the writes it started but did not
     * finish, and those it had not started (unless the drain already claimed them), count as failed.
     */
    private void failRestOfBatch(List<Turn> batch, int claimed, int finished) {
        int seen = started.get();
        boolean tookRest = seen != STOPPED && started.compareAndSet(seen, STOPPED); // only the drain competes
        int end = tookRest ? batch.size() : claimed;
        if (end > finished) {
            failed.addAndGet(end - finished);
            queue.markFinished(end - finished);
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
