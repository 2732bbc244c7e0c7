package dev.memlife;

import dev.memlife.internal.Deadline;
import dev.memlife.internal.Events;
import dev.memlife.internal.ThrottledLog;
import dev.memlife.internal.WriteAheadLog;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * The write path of one {@link MemoryManager}: a bounded FIFO queue ({@link TurnQueue}), the one
 * writer thread that empties it in batches ({@link WriteLoop}), the flush barrier, and the bounded
 * drain at shutdown. This class is the callers' and shutdown's side: admission ({@link #enqueue}),
 * the barrier ({@link #flush}, {@link FlushBarrier}) and the drain ({@link #drain}). The lifecycle state, and the
 * threads waiting on the writer, are {@link Lifecycle}; the writer thread is {@link WriterThread}. What
 * the writer has finished is {@link Progress}; the batch it is working on, and who owns each of its
 * writes, is {@link BatchClaim}; every provider call goes through {@link ProviderCalls}.
 *
 * <h2>Design</h2>
 *
 * <p><b>Callers take no lock while there is room.</b> A caller reserves its write (one
 * compare-and-set that also checks the capacity and whether shutdown began) and appends it to a
 * lock-free list ({@link TurnQueue}); only the caller that finds the writer parked wakes it.
 * Shutdown closes the queue in the same word, so every write is either accepted before shutdown
 * began, or rejected and counted. A caller starts the writer thread <em>before</em> it reserves,
 * so an exception from {@code syncAll} always means that nothing was queued; only that caller (the
 * first, or the first after the writer died) takes the start lock. Only a caller that finds the
 * queue full takes the lock of {@link Lifecycle}, and reads the ticker.
 *
 * <p><b>Four locks</b> guard the parts the callers, the writer and the drain share: {@link
 * WriterContext} gives them, and the order they are taken in.
 *
 * <p><b>The drain claim.</b> Every accepted write is started by the writer or abandoned by the
 * drain, never both and never neither. The writer claims each chunk, by a compare-and-set of the
 * claim word from the chunk's start to its end, before it hands the chunk to the first provider
 * ({@link BatchClaim#claim}). A drain whose deadline has passed takes the batch lock, marks the
 * writer {@link Lifecycle.State#ABANDONED}, and swaps the claim word to {@code STOPPED} ({@link
 * BatchClaim#claimRest}). What the writer had claimed by then is its to finish. The rest of the
 * batch, and every write still in the queue, is abandoned: the drain takes those from the queue
 * itself, which is safe because the writer takes only under the batch lock, and never once
 * abandoned. The writer's next claim fails, and it stops.
 *
 * <p><b>The batch in progress.</b> The writer and the drain agree on it through the batch lock
 * and the counts. The writer takes a batch, and notes how many writes were finished before it,
 * under the lock, so the batch cannot change while the drain holds the lock. The drain reads one
 * consistent pair of counts ({@link Progress#read}); the writes of the batch from the finished
 * count up to the end of the writer's last claim are the ones still running, reported by id. A
 * started write goes to every provider of its route, deadline or not, and the writer logs how each
 * write the report called still running has ended: the drain marks them ({@link
 * BatchClaim#reportRunning}) before its snapshot, so one that finishes in between is reported
 * delivered and logged as well. A writer dying of an error of memlife's own gives its batch up the
 * same way ({@link BatchClaim#giveUpRest}) and counts the rest as failed, unless the drain claimed
 * it first.
 *
 * <p>One idea past 500 lines: this is where a write's admission, the spool's order lock and the
 * drain's claim meet, and most of its lines are the notes above on why each race is safe. The
 * writer thread's loop is {@link WriteLoop}, the state they share {@link WriterContext}, the flush
 * {@link FlushBarrier} and the states {@link Lifecycle}.
 */
final class Writer {

    /**
     * How long the drain waits, past its deadline, for a reserved write whose caller has not linked
     * it yet. A caller is a few instructions from linking; only one that died there (a stack
     * overflow between the two steps) leaves the drain waiting this long.
     */
    private static final long LINK_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final String managerName;
    private final String idPrefix;
    private final Ticker ticker;
    private final ThrottledLog warnings;
    private final TurnQueue queue;
    private final Progress progress;
    private final BatchClaim claim;
    private final Boundaries boundaries;
    private final WriterThread thread;
    private final Lifecycle lifecycle;
    private final WriteLoop loop;
    private final FlushBarrier barrier;
    /** The durable spool every write is appended to before it is queued; null without one. */
    private final WriteAheadLog log;

    /**
     * Writes accepted while the manager had no provider: delivered to every provider of their
     * (empty) route at once, without the queue or a writer thread, and without a write id.
     */
    private final AtomicLong toNobody = new AtomicLong();
    /** How long the drain took, on the {@link #ticker}; written once, before {@link #drains}. */
    private volatile long drainNanos;
    /** 1 once the drain has returned. */
    private volatile long drains;
    /**
     * For {@link #figures()}, under the batch lock: the sequence number of the first queued write
     * that no writer had taken when a snapshot last looked, and when that snapshot saw it first.
     */
    private long untakenSeq;
    private long untakenSinceMillis;

    // ---- the drain's claim, under the batch lock ----
    /** The writes the drain abandoned. */
    private final WriteIds.Builder abandoned;
    /** The drain's deadline; only ever moves earlier. */
    private final AtomicReference<Deadline> drainDeadline;
    /**
     * How many replayed writes may wait in the queue for the writer: two batches, or the queue's
     * capacity if that is less. A replay decodes far faster than a store takes writes, so a
     * fuller queue would not deliver sooner; it would only hold more decoded writes in the heap,
     * which every young collection during the replay copies (a queue of 10,000 cost a replay of a
     * million writes about 210 ms of collection pauses against 60 ms at 2,048, with a small young
     * generation).
     */
    private final int replayAhead;

    /** The callers' side of the write path {@code context} holds the parts of; starts no thread yet. */
    Writer(WriterContext context) {
        this.managerName = context.managerName;
        this.idPrefix = context.idPrefix;
        this.ticker = context.ticker;
        this.warnings = context.warnings;
        this.log = context.log;
        this.queue = context.queue;
        this.progress = context.progress;
        this.claim = context.claim;
        this.boundaries = context.boundaries;
        this.thread = context.thread;
        this.lifecycle = context.lifecycle;
        this.replayAhead = (int) Math.min(context.settings.capacity(), 2L * context.settings.maxBatchSize());
        this.abandoned = new WriteIds.Builder(idPrefix);
        this.drainDeadline = new AtomicReference<>(Deadline.afterNanos(ticker, Long.MAX_VALUE));
        this.loop = new WriteLoop(context);
        this.barrier = new FlushBarrier(context);
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
        if (route.length == 0) {
            return deliverToNobody();
        }
        if (thread.current() == null) {
            startWriterOrReject();
        }
        // Built before it is reserved: once reserved, nothing may stop it from being appended.
        // Its sequence number comes with the reservation, its time when the writer takes it.
        if (log == null) {
            return admit(new QueuedTurn(idPrefix, sessionId, user, assistant, messages, route), null, timeoutNanos, true);
        }
        LoggedTurn turn = new LoggedTurn(idPrefix, sessionId, user, assistant, messages, route);
        byte[] logged;
        try {
            logged = log.encode(turn);
        } catch (RuntimeException e) { // too large for the spool: nothing was queued
            lifecycle.reject();
            throw e;
        }
        return admit(turn, logged, timeoutNanos, true);
    }

    /**
     * Queues a write replayed from the spool, with its original id and time, waiting as long as it
     * takes until fewer than {@link #replayAhead} writes wait for the writer; nothing is appended
     * (the spool holds it already).
     *
     * @return true if queued; false once shutdown has begun (the write stays in the spool)
     * @throws QueueFullException if the wait for room was interrupted
     */
    boolean enqueueReplayed(Turn given, long position, RegisteredProvider[] route) {
        if (thread.current() == null) {
            startWriterOrReject();
        }
        if (queue.untaken() >= replayAhead
                && !lifecycle.awaitRoom(Deadline.afterNanos(ticker, Long.MAX_VALUE), replayAhead)) {
            return false;
        }
        return admit(LoggedTurn.replayed(given, route, position), null, Long.MAX_VALUE, false);
    }

    /** {@return whether the calling thread is the writer's: a provider's call, which must not wait for the writer} */
    boolean onWriterThread() {
        return thread.isCurrent();
    }

    /**
     * Reserves the turn's place and links it, waiting at most {@code timeoutNanos} for room.
     *
     * @param logged the encoded write to append to the spool, or null (no spool, or a replayed write)
     * @param countRejection whether a refusal because shutdown began counts as rejected (a new
     *     write) or not (a replayed one, which stays in the spool)
     * @return true if queued, false if refused because shutdown has begun
     */
    private boolean admit(QueuedTurn turn, byte[] logged, long timeoutNanos, boolean countRejection) {
        Deadline wait = null; // made when the queue is first found full: no ticker read while there is room
        while (true) {
            long seq = log == null ? reserveAndLink(turn) : reserveLogAndLink((LoggedTurn) turn, logged);
            if (seq > 0) {
                return true;
            }
            if (seq == TurnQueue.REJECTED) {
                if (countRejection) {
                    lifecycle.reject();
                }
                return false;
            }
            if (wait == null) {
                long timeout = onWriterThread() ? 0 : timeoutNanos; // a provider writing back
                wait = Deadline.afterNanos(ticker, timeout);
            }
            if (!lifecycle.awaitRoom(wait, queue.capacity())) {
                return false; // shutdown began while this caller waited; the drain counted it
            }
        }
    }

    /** Reserves the turn's place and links it; the place, or {@link TurnQueue#FULL} or {@code REJECTED}. */
    private long reserveAndLink(QueuedTurn turn) {
        long seq = queue.reserve();
        if (seq > 0) {
            turn.assignSeq(seq);
            if (queue.append(turn)) {
                loop.wake();
            }
        }
        return seq;
    }

    /**
     * {@link #reserveAndLink} with the spool: under its order lock the write is checked for room,
     * reserved, appended to the spool and linked, so the spool holds the writes in queue order and
     * one delivered position marks every write before it. A full or failed spool refuses the write
     * before it is reserved: nothing is queued, and it is counted as rejected. A replayed write
     * ({@code logged} null) is only reserved and linked, in the same order.
     */
    private long reserveLogAndLink(LoggedTurn turn, byte[] logged) {
        long seq;
        boolean wake;
        Lock order = log.orderLock();
        order.lock();
        try {
            if (logged != null) {
                if (queue.isClosed()) {
                    return TurnQueue.REJECTED; // stopping: refused as without a spool, which may be closed
                }
                try {
                    log.checkRoom(logged);
                } catch (RuntimeException e) {
                    if (queue.isClosed()) {
                        return TurnQueue.REJECTED; // the spool closed with the manager since
                    }
                    lifecycle.reject();
                    throw e;
                }
            }
            seq = queue.reserve();
            if (seq <= 0) {
                return seq;
            }
            turn.assignSeq(seq);
            if (logged != null) {
                turn.logPosition(log.append(logged, seq));
            }
            wake = queue.append(turn);
        } finally {
            order.unlock();
        }
        if (wake) {
            loop.wake();
        }
        return seq;
    }

    // ---- the spool -----------------------------------------------------------------------------

    /**
     * Waits until every write accepted before this call is durable in the spool.
     *
     * @return true once durable; false on timeout or interrupt
     * @throws IllegalStateException if the manager has no spool
     */
    boolean awaitDurable(long timeoutNanos) {
        if (log == null) {
            throw new IllegalStateException("memory manager '" + managerName + "' has no spool: build it with "
                    + "MemoryManager.builder().spool(...) to wait for durable writes");
        }
        return log.awaitDurable(log.appended(), timeoutNanos);
    }

    /** Closes the spool after the drain; its failure is logged, never thrown at shutdown. */
    void closeLog() {
        if (log == null) {
            return;
        }
        try {
            log.close();
        } catch (RuntimeException e) {
            warnings.warn(managerName + "/spool-close", "memory manager '" + managerName + "': closing its spool "
                    + "failed; the writes it holds are replayed on the next start", e);
        }
    }

    /**
     * A write accepted while the manager has no provider: delivered at once to every provider of its
     * empty route, with no thread started for it; counted where the drain changes the state, so a
     * write accepted here is in the drain's count and one refused is counted rejected.
     */
    private boolean deliverToNobody() {
        return lifecycle.acceptIfRunning(toNobody);
    }

    /** Starts the writer before a caller reserves; if it cannot, the caller's write is rejected. */
    private void startWriterOrReject() {
        if (lifecycle.state() != Lifecycle.State.RUNNING) {
            return; // the reservation is refused and counted; no thread for that
        }
        try {
            loop.start();
        } catch (Throwable t) { // even OutOfMemoryError: "unable to create native thread" is that
            lifecycle.reject();
            throw new RejectedExecutionException("memory manager '" + managerName + "' could not start its writer "
                    + "thread (" + t + "); the write was not accepted and is counted as rejected", t);
        }
    }

    // ---- session boundaries -------------------------------------------------------------------

    /**
     * Queues {@code task} to run on the writer after every write reserved so far and before any
     * reserved later ({@link Boundaries}); never waits.
     *
     * @return completes when the task has run; exceptionally with {@link StoppedException} if
     *     shutdown began before it was queued or before it could run, or with what the task threw
     */
    CompletableFuture<Void> boundary(Runnable task) {
        Boundaries.Boundary b;
        claim.lock.lock();
        try {
            if (lifecycle.state() != Lifecycle.State.RUNNING) {
                return CompletableFuture.failedFuture(new StoppedException("memory manager '" + managerName + "'",
                        "commitSessionBoundaryAsync"));
            }
            b = new Boundaries.Boundary(queue.reserved(), task);
            boundaries.add(b);
        } finally {
            claim.lock.unlock();
        }
        if (!thread.unpark()) {
            loop.wake(); // starts a writer; if none can start, the boundary runs with the next write or fails at shutdown
        }
        return b.done;
    }

    // ---- the barrier -------------------------------------------------------------------------

    /**
     * The flush barrier ({@link FlushBarrier}): true once every write accepted before this call
     * has been handed to every provider; false on timeout, interrupt, abandonment, or when called
     * from the writer itself.
     */
    boolean flush(long timeoutNanos) {
        return barrier.flush(timeoutNanos);
    }

    /** Writes accepted but neither finished nor abandoned: queued, or being written now. */
    long pending() {
        return lifecycle.pending();
    }

    /** The session of the last write the writer finished; null before the first. */
    String lastWrittenSession() {
        return loop.lastSession();
    }

    /** Writes rejected so far. */
    long rejectedSoFar() {
        return lifecycle.rejected();
    }

    /** The figures of {@link WriteFigures}, read now. */
    WriteFigures figures() {
        long now = System.currentTimeMillis();
        long oldestSince;
        claim.lock.lock(); // the writer takes it once per batch; the drain, once
        try {
            oldestSince = oldestPendingSince(now);
        } finally {
            claim.lock.unlock();
        }
        long nobody = toNobody.get();
        long delivered = progress.delivered() + nobody;
        long failed = progress.failed();
        Duration age = Duration.ofMillis(Math.max(0, now - oldestSince));
        SpoolFigures spool = log == null ? SpoolFigures.NONE : log.figures().withOldestUndeliveredAge(age);
        long drained = drains; // before drainNanos: once it reads 1, the drain's time is there
        return new WriteFigures(queue.reserved() + nobody, delivered, failed, lifecycle.abandonedCount(),
                lifecycle.rejected(), pending(), age, progress.batches(), progress.batchedWrites(),
                progress.largestBatch(), barrier.waits(), barrier.timeouts(), barrier.waited(),
                drained, Duration.ofNanos(drainNanos), spool);
    }

    /**
     * Under the batch lock, so the batch and the taker's end of the queue hold still: when the
     * oldest pending write was taken by the writer, or first seen queued by a snapshot; {@code
     * now} if none is pending.
     */
    private long oldestPendingSince(long now) {
        if (pending() == 0) {
            return now;
        }
        Turn inBatch = claim.firstUnfinished(progress.finished());
        if (inBatch != null) {
            return inBatch.acceptedAtMillis();
        }
        Turn queued = queue.peek();
        if (queued == null) {
            return now; // reserved, not linked yet: its caller is a few instructions from linking it
        }
        if (queued.seq() != untakenSeq) {
            untakenSeq = queued.seq();
            untakenSinceMillis = now;
        }
        return untakenSinceMillis;
    }

    // ---- for tests ----------------------------------------------------------------------------

    /** The writer thread, if one was started; for tests. */
    Thread workerThread() {
        return thread.current();
    }

    /** The queue; for tests that play a caller who dies halfway through an append. */
    TurnQueue queue() {
        return queue;
    }

    /** One pass of the writer's loop on this thread, for a writer built {@link WriterThread#BY_HAND}: see {@link WriteLoop}. */
    boolean stepByHand() {
        return loop.stepByHand();
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
    void tightenDrainDeadline(long deadline) { // a reading of the ticker
        drainDeadline.accumulateAndGet(Deadline.at(ticker, deadline), Deadline::earlier);
        lifecycle.signalProgress();
    }

    /**
     * Stops accepting writes and lets the queue drain until the deadline (on {@link Ticker}, and
     * see {@link #tightenDrainDeadline}); then abandons whatever the writer has not started.
     * Called once, by the manager's shutdown. On the writer thread itself (a provider shutting its
     * manager down) it does not wait: the writer cannot drain while it is inside this call. Timed
     * for the figures, and recorded ({@link Events.Drain}).
     */
    Outcome drain(long deadline) { // a reading of the ticker
        Events.Drain event = new Events.Drain();
        event.begin();
        Deadline budget = Deadline.at(ticker, deadline);
        long pendingBefore = pending();
        long deliveredBefore = progress.delivered() + toNobody.get();
        long failedBefore = progress.failed();
        Outcome outcome = drainQueue(budget);
        drainNanos = Math.max(0, budget.elapsedNanos());
        drains = 1;
        event.end();
        if (event.shouldCommit()) {
            event.manager = managerName;
            event.pending = pendingBefore;
            event.delivered = outcome.delivered() - deliveredBefore;
            event.failed = outcome.failed() - failedBefore;
            event.abandoned = outcome.abandonedIds().size();
            event.stillRunning = outcome.stillRunning();
            event.budget = budget.budget().toNanos();
            event.commit();
        }
        return outcome;
    }

    private Outcome drainQueue(Deadline deadline) {
        drainDeadline.accumulateAndGet(deadline, Deadline::earlier);
        long target = lifecycle.beginDrain(); // final: no write can be reserved after this
        Thread w = thread.current();
        if (w != null) {
            LockSupport.unpark(w); // an idle writer parks without a timeout: it must see the new state
        }
        boolean onWriter = Thread.currentThread() == w;
        boolean complete = queue.finished() >= target && !boundaries.hasPending()
                || (!onWriter && writerRunsFor(target) && lifecycle.awaitFinished(target, drainDeadline::get)
                        && awaitBoundaries(drainDeadline::get));
        claim.lock.lock();
        try {
            int claimedEnd = complete ? BatchClaim.STOPPED : abandonRest();
            if (claimedEnd != BatchClaim.STOPPED) {
                // Before the snapshot, so the writer logs every write the report may call still running
                // (and, rarely, one that finished in between and is reported delivered).
                claim.reportRunning(claimedEnd);
            }
            return snapshot(claimedEnd);
        } finally {
            claim.lock.unlock();
        }
    }

    /** Waits until no session boundary is pending; false at the deadline, on interrupt or abandonment. */
    private boolean awaitBoundaries(Supplier<Deadline> deadline) {
        return lifecycle.awaitProgress(() -> !boundaries.hasPending(),
                () -> lifecycle.state() == Lifecycle.State.ABANDONED, deadline);
    }

    /** Makes sure a writer runs while writes or boundaries wait; false if none can (they are then abandoned at once). */
    private boolean writerRunsFor(long target) {
        if (thread.current() != null || queue.finished() >= target && !boundaries.hasPending()) {
            return true;
        }
        try {
            loop.start();
            return true;
        } catch (Throwable t) {
            warnings.warn(managerName + "/start", "memory manager '" + managerName + "': no writer thread could be "
                    + "started for the drain (" + t + "); the queued writes are abandoned", null);
            return false;
        }
    }

    /**
     * Called under the batch lock: claims every write the writer has not started, in its batch and
     * in the queue (the drain takes from the queue from now on).
     *
     * @return how far the writer had claimed its batch (the end of the chunk it may still be
     *     writing), or {@link BatchClaim#STOPPED} if a dying writer already gave the batch up
     */
    private int abandonRest() {
        lifecycle.abandon();
        int from = claim.claimRest();
        claim.addFrom(from, abandoned);
        boundaries.abandonDeferred(abandoned); // taken off the queue, waiting for a boundary: never started
        long unlinked = queue.reserved() - queue.taken(); // final: the queue is closed
        Deadline linkWait = null; // set when a reserved write is first found unlinked
        for (long n = 0; n < unlinked; ) {
            Turn t = queue.poll();
            if (t != null) {
                abandoned.add(t);
                n++;
                continue;
            }
            // A caller reserved this write and is about to link it. The real ticker, not the injected
            // one: a manual ticker that never moves must not make the drain wait forever.
            if (linkWait == null) {
                linkWait = Deadline.afterNanos(Ticker.system(), LINK_WAIT_NANOS);
            } else if (linkWait.expired()) {
                warnings.warn(managerName + "/unlinked", "memory manager '" + managerName + "': " + (unlinked - n)
                        + " accepted writes were never linked into the queue (their callers died between the two "
                        + "steps of an append); they are reported as still running", null);
                break;
            }
            Thread.yield();
        }
        lifecycle.abandoned(abandoned.size()); // flushes waiting for abandoned writes return false now
        return from;
    }

    /**
     * Called under the batch lock once nothing more can be claimed: what is finished, and which
     * writes of the current batch the writer is still handing to its providers.
     */
    private Outcome snapshot(int claimedEnd) {
        boundaries.failUnclaimed(new StoppedException("memory manager '" + managerName + "'",
                "session boundary (shutdown came before it could run)"));
        Progress.Counts done = progress.read();
        WriteIds.Builder running = new WriteIds.Builder(idPrefix);
        claim.addStillRunning(done.delivered() + done.failed(), claimedEnd, running);
        if (running.size() == 0) {
            loop.releaseLeases(); // the writer will call no provider again
        }
        long unlinked = queue.reserved() - done.delivered() - done.failed() - abandoned.size() - running.size();
        return new Outcome(done.delivered() + toNobody.get(), done.failed(), done.failedIds(), abandoned.build(),
                running.build(), unlinked);
    }
}
