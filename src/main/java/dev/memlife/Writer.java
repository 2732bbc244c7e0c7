package dev.memlife;

import dev.memlife.internal.Checks;
import dev.memlife.internal.Deadline;
import dev.memlife.internal.Threads;
import dev.memlife.internal.ThrottledLog;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The write path of one {@link MemoryManager}: a bounded FIFO queue, the single writer thread that
 * empties it in batches, the flush barrier, and the bounded drain at shutdown.
 *
 * <p><b>Callers never take a lock on the fast path.</b> A caller reserves its write (one
 * compare-and-set that also checks the capacity and whether shutdown began) and appends it to a
 * lock-free list: see {@link TurnQueue}. Shutdown closes the queue in the same word, so every write
 * is either accepted before shutdown began, or rejected and counted. A caller starts the writer
 * thread <em>before</em> it reserves, so an exception from {@code syncAll} always means that
 * nothing was queued.
 *
 * <p><b>Progress is published per write.</b> The writer hands a <em>chunk</em> (one write, or a
 * run of writes for providers that take batches) to every provider of its route, then publishes
 * it as delivered or failed ({@link #delivered}, {@link #failed}, {@link TurnQueue#finished()}):
 * release stores, since only the writer writes them, so publishing costs no atomic instruction. A
 * flush that starts when {@code n} writes were reserved is met once {@code finished >= n}: every
 * write whose {@code syncAll} returned before the flush was linked before it, and at most {@code
 * n} writes were linked by then, so they are all among the first {@code n} the writer finishes.
 *
 * <p><b>Abandonment is a claim.</b> The writer claims each chunk (by CAS on {@link #started})
 * before it hands it to the first provider; a drain whose deadline passed claims all the rest at
 * once. A write is thus started by the writer or abandoned by the drain, never both and never
 * neither. A started write goes to every provider of its route, deadline or not: the drain reports
 * it as still running, by id, and the writer logs how it ended.
 *
 * <p><b>Locks</b>, never nested except as written: {@link #startLock} (starting the thread),
 * {@link #batchLock} (taking a batch; the drain's claim; may take {@link #waits} inside), {@link
 * #waits} (callers waiting for room, flushes and the drain waiting for progress), {@link
 * #failedLock} (the failed ids). None is held while a provider runs.
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

    private static final VarHandle DELIVERED;
    private static final VarHandle FAILED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            DELIVERED = lookup.findVarHandle(Writer.class, "delivered", long.class);
            FAILED = lookup.findVarHandle(Writer.class, "failed", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final String managerName;
    private final String idPrefix;
    private final int maxBatchSize;
    private final Threads threadFactory;
    private final Ticker ticker;
    private final ThrottledLog warnings;
    private final ProviderCalls calls;
    /** Every provider of the manager, for the writer's leases on their gates. */
    private final Supplier<RegisteredProvider[]> providers;

    // ---- the queue, fed without locks ----
    private final TurnQueue queue;
    /** Written only while holding the {@link #waits} lock, read anywhere. */
    private volatile State state = State.RUNNING;
    /** Writes every provider took; written only by the writer thread (release stores). */
    private volatile long delivered;
    /** Writes at least one provider failed; written only by the writer thread (release stores). */
    private volatile long failed;
    private final AtomicLong rejected = new AtomicLong();

    // ---- the writer thread ----
    private final Object startLock = new Object();
    /** The writer thread once started; null again if it died of an Error. */
    private volatile Thread worker;

    // ---- abandonment, guarded by batchLock (taken once per batch by the writer, once by the drain) ----
    private final ReentrantLock batchLock = new ReentrantLock();
    /** Marks {@link #current} before a writer ran. */
    private static final List<Turn> NO_BATCH = List.of();
    /** The writer's current batch: the one list it refills, set when the writer starts. */
    private List<Turn> current = NO_BATCH;
    /** Writes finished before {@link #current} was taken. */
    private long batchBase;
    /** How many writes of {@link #current} the writer has claimed to start, or {@link #STOPPED}. */
    private final AtomicInteger started = new AtomicInteger();
    private final WriteIds.Builder abandoned;
    /** Size of {@link #abandoned}, for readers outside the lock. */
    private volatile long abandonedCount;
    /** Set once by an abandoning drain: writes of {@link #current} before it may be reported still running. */
    private volatile int reportedRunningEnd;
    /** The drain's deadline on {@link #ticker}; only ever moves earlier. */
    private final AtomicLong drainDeadline = new AtomicLong(Long.MAX_VALUE);

    // ---- failed ids: appended by the writer (rarely), read by the drain ----
    private final Object failedLock = new Object();
    private final WriteIds.Builder failedIds;

    // ---- waiting: callers for room, flushes and the drain for progress ----
    private final ReentrantLock waits = new ReentrantLock();
    private final Condition notFull = waits.newCondition();
    private final Condition progress = waits.newCondition();
    /** Callers waiting for room; written under {@link #waits}, read by the writer to decide whether to signal. */
    private volatile int callersWaiting;
    /**
     * Threads waiting for progress; written under {@link #waits}, read by the writer after it
     * publishes. The writer's read may pass its release store of the count (no fence), so a
     * waiter can miss a signal: it then sees the count at its next slice, {@link
     * Deadline#MAX_SLICE_NANOS} later at most. Harmless, and it keeps a fence off every write.
     */
    private volatile int progressWaiters;

    Writer(String managerName, String idPrefix, int capacity, int maxBatchSize, Threads threadFactory,
            Ticker ticker, ThrottledLog warnings, ProviderCalls calls, Supplier<RegisteredProvider[]> providers) {
        this.managerName = managerName;
        this.idPrefix = idPrefix;
        this.queue = new TurnQueue(capacity);
        this.abandoned = new WriteIds.Builder(idPrefix);
        this.failedIds = new WriteIds.Builder(idPrefix);
        this.maxBatchSize = maxBatchSize;
        this.threadFactory = threadFactory;
        this.ticker = ticker;
        this.warnings = warnings;
        this.calls = calls;
        this.providers = providers;
    }

    // ---- callers ---------------------------------------------------------------------------

    /**
     * Accepts one write, waiting at most {@code timeoutNanos} on the {@link #ticker} for room in a
     * full queue (not at all on the writer thread, which would wait for itself).
     *
     * @return true if accepted, false if rejected because shutdown has begun
     * @throws QueueFullException if the queue stayed full for the whole timeout, or the wait was
     *     interrupted (the interrupt flag is then restored)
     * @throws RejectedExecutionException if no writer thread could be started; nothing was queued
     */
    boolean enqueue(String sessionId, String user, String assistant, List<Message> messages,
            RegisteredProvider[] route, long timeoutNanos) {
        if (worker == null) {
            startWorkerOrReject();
        }
        // Built before it is reserved: once reserved, nothing may stop it from being appended.
        // Its sequence number comes with the reservation, its time when the writer takes it.
        Turn turn = new Turn(idPrefix, 0, sessionId, user, assistant, messages, 0, route);
        Deadline wait = null; // made when the queue is first found full: no ticker read while there is room
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
            if (wait == null) {
                long timeout = Thread.currentThread() == worker ? 0 : timeoutNanos; // a provider writing back
                wait = Deadline.afterNanos(ticker, timeout);
            }
            if (!awaitRoom(wait)) {
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
    private boolean awaitRoom(Deadline wait) {
        waits.lock();
        try {
            if (state != State.RUNNING) {
                return true; // the retry finds the state and counts the rejection itself
            }
            callersWaiting++;
            try {
                while (queue.isFull() && state == State.RUNNING) {
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

    /** Starts the writer before a caller reserves; if it cannot, the caller's write is rejected. */
    private void startWorkerOrReject() {
        if (state != State.RUNNING) {
            return; // the reservation is refused and counted; no thread for that
        }
        try {
            startWorker();
        } catch (Throwable t) { // even OutOfMemoryError: "unable to create native thread" is that
            rejected.incrementAndGet();
            throw new RejectedExecutionException("memory manager '" + managerName + "' could not start its writer "
                    + "thread (" + t + "); the write was not accepted and is counted as rejected", t);
        }
    }

    /**
     * Called by the one caller that found the writer parked. The write is accepted by now, so this
     * never throws: if the writer died since the caller looked and no new one can be started, the
     * write waits for the next caller to start one, or for the drain, which reports it.
     */
    private void wakeWorker() {
        Thread w = worker;
        if (w != null) {
            LockSupport.unpark(w);
            return;
        }
        try {
            startWorker();
        } catch (Throwable t) {
            queue.announcePark(); // still no writer: the next caller tries again
            warnings.warn(managerName + "/start", "memory manager '" + managerName + "' could not restart its writer "
                    + "thread (" + t + "); queued writes wait for the next write or for shutdown", null);
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
        long deadline = Checks.saturatedAdd(ticker.read(), timeoutNanos);
        return awaitFinished(target, () -> deadline);
    }

    /** Waits until {@code target} writes are finished; false at the deadline, on interrupt or abandonment. */
    private boolean awaitFinished(long target, LongSupplier deadline) {
        waits.lock();
        progressWaiters++;
        try {
            while (queue.finished() < target) {
                long remaining = deadline.getAsLong() - ticker.read();
                boolean unreachable = state == State.ABANDONED && target > queue.reserved() - abandonedCount;
                if (unreachable || remaining <= 0) {
                    return false;
                }
                progress.awaitNanos(Math.min(remaining, Deadline.MAX_SLICE_NANOS)); // re-reads the ticker
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

    /**
     * The threads of a writer for concurrency checkers: a writer built with them never starts a
     * thread; the checker drives it with {@link #stepByHand()}.
     */
    static final Threads BY_HAND = Threads.named("memlife-writer-by-hand");

    /**
     * For concurrency checkers that drive the writer by hand (built with {@link #BY_HAND}): one pass of the writer's loop on the calling thread, without waiting — take what
     * is linked (one batch) and hand it to the providers. Only one thread may call it.
     *
     * @return false if there was nothing to take, or the drain abandoned the rest
     */
    boolean stepByHand() {
        batchLock.lock();
        try {
            if (current == NO_BATCH) {
                current = new ArrayList<>();
            }
        } finally {
            batchLock.unlock();
        }
        if (state == State.ABANDONED || !queue.hasLinked()) {
            return false;
        }
        List<Turn> batch = current;
        if (!takeBatch(batch)) {
            return false;
        }
        deliver(batch);
        return true;
    }

    // ---- shutdown --------------------------------------------------------------------------

    /**
     * What the drain found. {@code unlinked} writes were accepted but their callers never linked
     * them (see {@link #LINK_WAIT_NANOS}); they count as still running, without ids.
     */
    record Outcome(long delivered, long failed, WriteIds failedIds, WriteIds abandonedIds,
            WriteIds stillRunningIds, long unlinked) {

        long stillRunning() {
            return stillRunningIds.size() + unlinked;
        }
    }

    /**
     * Moves the drain's deadline earlier (a later deadline changes nothing), and wakes the drain
     * so it sees it.
     */
    void tightenDrainDeadline(long deadline) {
        drainDeadline.accumulateAndGet(deadline, Math::min);
        signalProgress();
    }

    /**
     * Stops accepting writes and lets the queue drain until the deadline (on {@link Ticker}, and
     * see {@link #tightenDrainDeadline}); then abandons whatever the writer has not started.
     * Called once, by the manager's shutdown. On the writer thread itself (a provider shutting its
     * manager down) it does not wait: the writer cannot drain while it is inside this call.
     */
    Outcome drain(long deadline) {
        drainDeadline.accumulateAndGet(deadline, Math::min);
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
            LockSupport.unpark(w); // an idle writer parks without a timeout: it must see the new state
        }
        boolean onWriter = Thread.currentThread() == w;
        boolean complete = queue.finished() >= target
                || (!onWriter && writerRunsFor(target) && awaitFinished(target, drainDeadline::get));
        batchLock.lock();
        try {
            int claimedEnd = complete ? STOPPED : abandonRest();
            if (claimedEnd != STOPPED) {
                // Before the snapshot, so the writer logs every write the report may call still running
                // (and, rarely, one that finished in between and is reported delivered).
                reportedRunningEnd = claimedEnd;
            }
            return snapshot(claimedEnd);
        } finally {
            batchLock.unlock();
        }
    }

    /** Makes sure a writer runs while writes wait; false if none can (they are then abandoned at once). */
    private boolean writerRunsFor(long target) {
        if (worker != null || queue.finished() >= target) {
            return true;
        }
        try {
            startWorker();
            return true;
        } catch (Throwable t) {
            warnings.warn(managerName + "/start", "memory manager '" + managerName + "': no writer thread could be "
                    + "started for the drain (" + t + "); the queued writes are abandoned", null);
            return false;
        }
    }

    /**
     * Called under {@link #batchLock}: claims every write the writer has not started.
     *
     * @return how far the writer had claimed {@link #current} (the end of the chunk it may still be
     *     writing), or {@link #STOPPED} if a dying writer already gave the batch up
     */
    private int abandonRest() {
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
            // A caller reserved this write and is about to link it. The real ticker, not the injected
            // one: a manual ticker that never moves must not make the drain wait forever.
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
        return from;
    }

    /**
     * Called under {@link #batchLock} once nothing more can be claimed: what is finished, and which
     * writes of the current batch the writer is still handing to its providers.
     */
    private Outcome snapshot(int claimedEnd) {
        long d;
        long f;
        do { // one consistent pair: the writer moves one of them per chunk, both only up
            d = delivered;
            f = failed;
        } while (d != delivered);
        WriteIds failedNow;
        synchronized (failedLock) {
            failedNow = failedIds.build((int) f); // the writer adds ids before it publishes the count
        }
        WriteIds.Builder running = new WriteIds.Builder(idPrefix);
        if (claimedEnd != STOPPED) {
            for (long i = d + f - batchBase; i < claimedEnd; i++) {
                running.add(current.get((int) i));
            }
        }
        if (running.size() == 0) {
            releaseLeases(); // the writer will call no provider again
        }
        long unlinked = queue.reserved() - d - f - abandoned.size() - running.size();
        return new Outcome(d, f, failedNow, abandoned.build(), running.build(), unlinked);
    }

    /**
     * Ends the writer's standing lease on every provider's gate, in reverse registration order, so
     * the shutdowns that waited for the writer run in that order; idempotent.
     */
    private void releaseLeases() {
        RegisteredProvider[] all = providers.get();
        for (int i = all.length - 1; i >= 0; i--) {
            all[i].gate.releaseWriter();
        }
    }

    // ---- the writer thread -----------------------------------------------------------------

    private void startWorker() {
        synchronized (startLock) {
            if (worker != null) {
                return;
            }
            if (threadFactory == BY_HAND) {
                worker = new Thread(() -> { }, "memlife-writer-by-hand-" + managerName); // never started
                return;
            }
            Thread t = threadFactory.newThread(this::runWorker); // never null: a refusing factory throws
            worker = t; // before start: a provider calling back from the writer must see itself as the writer
            try {
                t.start();
            } catch (Throwable e) {
                worker = null;
                throw e;
            }
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
            releaseLeases(); // shut down: nothing more to write
        } catch (Throwable fatal) { // memlife's own code failed here; what providers throw never gets this far
            synchronized (startLock) {
                worker = null;
            }
            queue.announcePark(); // no writer now: the next caller starts one
            if (queue.reserved() > queue.taken() && state != State.ABANDONED) {
                wakeWorker(); // queued writes still need a writer; this one is going down
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
            Thread.interrupted(); // the writer stops by state only; clear an interrupt from outside
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
            batchBase = delivered + failed;
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
     * at a time, each to every provider before the next starts. Each chunk is published as soon as
     * every provider had it.
     */
    private void deliver(List<Turn> batch) {
        int claimed = 0;
        int finished = 0;
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
                        return; // the drain deadline passed and the drain abandoned the rest
                    }
                    claimed = end;
                    publish(batch, i, end, calls.write(batch, i, end, route));
                    finished = end;
                }
                from = to;
            }
        } catch (Throwable fatal) {
            failRestOfBatch(batch, claimed, finished);
            throw fatal;
        }
    }

    /** Publishes a finished chunk, and wakes whoever waits for progress. */
    private void publish(List<Turn> batch, int from, int to, boolean ok) {
        int n = to - from;
        if (ok) {
            DELIVERED.setRelease(this, delivered + n);
        } else {
            synchronized (failedLock) {
                for (int i = from; i < to; i++) {
                    failedIds.add(batch.get(i));
                }
            }
            FAILED.setRelease(this, failed + n);
        }
        queue.markFinished(n);
        if (progressWaiters > 0) {
            signalProgress();
        }
        if (to <= reportedRunningEnd) {
            warnings.warn(managerName + "/late", "memory manager '" + managerName + "': " + ProviderCalls.describe(batch, from, to)
                    + ", reported still running at the drain deadline, has finished: " + (ok ? "every provider took it"
                    : "at least one provider failed it"), null);
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
     * The writer is going down with an error of memlife's own mid-batch: the writes it started but
     * did not finish, and those it had not started (unless the drain already claimed them), count
     * as failed, for no provider.
     */
    private void failRestOfBatch(List<Turn> batch, int claimed, int finished) {
        int seen = started.get();
        boolean tookRest = seen != STOPPED && started.compareAndSet(seen, STOPPED); // only the drain competes
        int end = tookRest ? batch.size() : claimed;
        if (end > finished) {
            publish(batch, finished, end, false);
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
}
