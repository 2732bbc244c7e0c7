package dev.memlife;

import dev.memlife.Lifecycle.State;
import dev.memlife.internal.Events;
import dev.memlife.internal.ThrottledLog;
import dev.memlife.internal.WriteAheadLog;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * The writer thread of one {@link Writer}, and what it does. The first caller starts it (the next
 * caller starts another, should it die of an error of memlife's own). It waits for work, spinning
 * briefly and then parked until a caller wakes it; takes a batch off the queue; hands the batch to
 * the providers chunk by chunk through {@link ProviderCalls}, claiming each chunk first ({@link
 * BatchClaim}); and publishes each chunk to {@link Progress} as soon as every provider had it. It
 * exits once the drain has nothing more for it. {@link Writer}'s design notes give the protocol it
 * follows with the callers and the drain.
 *
 * <p><b>While writes stream in, the writer lingers for a fuller batch.</b> Writes stream in when
 * a batch came less than {@link #LINGER_NANOS} after the writer finished the one before, or when
 * more writes came while it delivered the batch. Then, after a batch that was not full, the
 * writer waits up to that time before it takes the next, unless a flush, the drain or a caller
 * waiting for room needs it sooner. A writer that took each write as soon as it was linked would
 * keep pace with a caller that writes slower than it delivers (as with a spool, whose callers
 * encode each write). It would take one write at a time and read each while the caller still
 * writes next to it in memory, so both threads would wait for the other's cache lines; and it
 * would park whenever the caller is descheduled, so the caller would pay a system call to wake
 * it. A trickle of writes is not delayed: each write comes after a pause, and nothing more comes
 * while it is delivered.
 *
 * <p><b>An idle writer gives its thread up.</b> A writer parked for its keep-alive with nothing
 * queued {@linkplain #retire(List) retires}: it forgets itself as the writer, and the next write
 * starts a new thread, as after a death. So a service with thousands of idle agents holds no
 * writer thread for them. Retiring races with a caller appending: the caller wakes the writer it
 * sees, which may be the one retiring. So the writer first forgets itself (a volatile write), then
 * looks for a reserved write (a volatile read); the caller reserves and links (volatile writes),
 * then reads the writer. In every order one of them sees the other: either the retiring writer
 * sees the write and takes its thread back (unless a caller already started a new writer), or
 * the caller sees no writer and starts one.
 */
final class WriteLoop {

    /** How often an idle writer looks for a new write before it parks (a few microseconds). */
    private static final int SPINS_BEFORE_PARK = 100;
    /**
     * How long a manager's writer lingers for more writes after a batch that was not full, while
     * writes stream in (see the class notes).
     */
    static final long LINGER_NANOS = 100_000;

    private static final VarHandle LAST_SESSION;

    static {
        try {
            LAST_SESSION = MethodHandles.lookup().findVarHandle(WriteLoop.class, "lastSession", String.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** What an idle writer does next. */
    private enum Next {
        /** Take a batch: a write is linked. */
        WORK,
        /** Run the next session boundary: every write before it is finished. */
        BOUNDARY,
        /** Exit and release the providers: the drain has nothing more for this writer. */
        STOP,
        /** Exit and keep the providers' leases: idle for the keep-alive; the next write starts a new writer. */
        RETIRE
    }

    private final Lifecycle lifecycle;
    private final String managerName;
    private final TurnQueue queue;
    private final BatchClaim claim;
    private final Boundaries boundaries;
    private final Progress progress;
    private final ProviderCalls calls;
    private final ThrottledLog warnings;
    private final WriterThread thread;
    private final int maxBatchSize;
    /** How long the writer stays parked with nothing to do before it gives its thread up. */
    private final long keepAliveNanos;
    /** How long the writer lingers for a fuller batch; 0 never. */
    private final long lingerNanos;
    /** Every provider of the manager, for the writer's standing leases on their gates. */
    private final Supplier<RegisteredProvider[]> providers;
    /** The spool, told what was finished; null without one. */
    private final WriteAheadLog log;

    /**
     * The session of the last write finished; written by the writer once per chunk, before it
     * publishes (a release store: no fence on the writer's path), read with acquire.
     */
    @SuppressWarnings("unused") // through LAST_SESSION
    private String lastSession;

    /** The loop of the writer thread over the parts {@code context} holds; starts no thread yet. */
    WriteLoop(WriterContext context) {
        this.lifecycle = context.lifecycle;
        this.managerName = context.managerName;
        this.queue = context.queue;
        this.claim = context.claim;
        this.boundaries = context.boundaries;
        this.progress = context.progress;
        this.calls = context.calls;
        this.warnings = context.warnings;
        this.thread = context.thread;
        this.maxBatchSize = context.settings.maxBatchSize();
        this.keepAliveNanos = context.settings.keepAliveNanos();
        this.lingerNanos = context.settings.lingerNanos();
        this.providers = context.providers;
        this.log = context.log;
    }

    // ---- the thread ----------------------------------------------------------------------------

    /** The session of the last write the writer finished; null before the first. */
    String lastSession() {
        return (String) LAST_SESSION.getAcquire(this);
    }

    /**
     * Starts the writer thread unless one runs.
     *
     * @throws RuntimeException or {@link Error} (an {@link OutOfMemoryError} "unable to create
     *     native thread" included) if no thread could be made or started
     */
    void start() {
        thread.start(this::run);
    }

    /**
     * Wakes the writer; called by the one caller that found it parked. The caller's write is
     * accepted by now, so this never throws: if the writer died since the caller looked and no new
     * one can be started, the write waits for the next caller to start one, or for the drain,
     * which reports it.
     */
    void wake() {
        if (thread.unpark()) {
            return;
        }
        try {
            start();
        } catch (Throwable t) {
            queue.announcePark(); // still no writer: the next caller tries again
            warnings.warn(managerName + "/start", "memory manager '" + managerName + "' could not restart its writer "
                    + "thread (" + t + "); queued writes wait for the next write or for shutdown", null);
        }
    }

    private void run() {
        List<Turn> batch = new ArrayList<>(Math.min(maxBatchSize, 1024));
        claim.lock.lock();
        try {
            claim.install(batch);
        } finally {
            claim.lock.unlock();
        }
        long finishedAt = System.nanoTime() - lingerNanos; // a new writer's first batch comes after a pause
        try {
            for (Next next; (next = awaitWork(batch)) != Next.RETIRE; ) {
                if (next == Next.BOUNDARY) {
                    runBoundary();
                    continue;
                }
                if (next == Next.STOP || !take(batch)) {
                    releaseLeases(); // shut down: nothing more to write
                    return;
                }
                if (batch.isEmpty()) {
                    LockSupport.parkNanos(this, 50_000); // a boundary waits for a write its caller is still linking
                    continue;
                }
                boolean afterPause = System.nanoTime() - finishedAt >= lingerNanos;
                deliver(batch);
                linger(batch.size(), afterPause);
                finishedAt = System.nanoTime();
            }
        } catch (Throwable fatal) { // memlife's own code failed here; what providers throw never gets this far
            thread.forget();
            queue.announcePark(); // no writer now: the next caller starts one
            if (queue.reserved() > queue.taken() && lifecycle.state() != State.ABANDONED) {
                wake(); // queued writes still need a writer; this one is going down
            }
            throw fatal;
        }
    }

    /**
     * Waits a moment for a fuller batch after one of {@code taken} writes, which came after a
     * pause if {@code afterPause}: see the class notes. The park is not announced, so callers do
     * not wake it; whoever needs the writer sooner makes {@link Lifecycle#mayLinger} false and
     * {@linkplain WriterThread#unpark unparks} it. Any other wake-up (a caller's unpark left over from
     * before) parks again for the rest of the time.
     */
    private void linger(int taken, boolean afterPause) {
        if (lingerNanos <= 0 || taken >= maxBatchSize || afterPause && !queue.hasLinked()) {
            return;
        }
        long end = System.nanoTime() + lingerNanos;
        for (long left = lingerNanos; left > 0 && lifecycle.mayLinger() && !Thread.currentThread().isInterrupted();
                left = end - System.nanoTime()) {
            LockSupport.parkNanos(this, left);
        }
    }

    /**
     * For concurrency checkers that drive the writer by hand (built with {@link WriterThread#BY_HAND}):
     * one pass of the loop on the calling thread, without waiting: take what is linked (one batch)
     * and hand it to the providers. Only one thread may call it.
     *
     * @return false if there was nothing to take, or the drain abandoned the rest
     */
    boolean stepByHand() {
        claim.lock.lock();
        try {
            if (!claim.installed()) {
                claim.install(new ArrayList<>());
            }
        } finally {
            claim.lock.unlock();
        }
        if (lifecycle.state() == State.ABANDONED || !queue.hasLinked()) {
            return false;
        }
        List<Turn> batch = claim.current(); // only this thread installs it
        if (!take(batch)) {
            return false;
        }
        deliver(batch);
        return true;
    }

    /**
     * Ends the writer's standing lease on every provider's gate, in reverse registration order, so
     * the shutdowns that waited for the writer run in that order; idempotent. Called by the writer
     * when it exits, or by the drain once the writer will call no provider again.
     */
    void releaseLeases() {
        RegisteredProvider[] all = providers.get();
        for (int i = all.length - 1; i >= 0; i--) {
            all[i].gate.releaseWriter();
        }
    }

    // ---- the loop ------------------------------------------------------------------------------

    /**
     * Waits until there is work: spins briefly (when writes stream in, this saves a park and an
     * unpark per write), then parks, for the keep-alive at most in all. Says what to do next:
     * {@link Next#STOP} once shutdown began and no write is queued or about to be; {@link
     * Next#RETIRE} once idle for the keep-alive and {@link #retire retired}.
     */
    private Next awaitWork(List<Turn> batch) {
        long idleSince = 0;
        boolean idle = false;
        for (int spins = 0; ; spins++) {
            State s = lifecycle.state();
            if (s == State.ABANDONED) {
                return Next.STOP;
            }
            if (queue.finished() >= boundaries.nextAfter()) {
                return Next.BOUNDARY;
            }
            if (queue.hasLinked() || boundaries.hasWork()) {
                return Next.WORK;
            }
            if (s == State.DRAINING && queue.taken() >= queue.reserved()) {
                return Next.STOP; // the count is final once draining: every accepted write was taken
            }
            if (spins < SPINS_BEFORE_PARK || s == State.DRAINING) {
                Thread.onSpinWait(); // while draining nobody wakes the writer; a caller may be linking a write
                continue;
            }
            if (!idle) {
                idle = true;
                idleSince = System.nanoTime(); // real time, like a thread pool's keep-alive
            }
            if (queue.announcePark() && lifecycle.state() == State.RUNNING) {
                long left = keepAliveNanos - (System.nanoTime() - idleSince);
                if (left <= 0 && retire(batch)) {
                    return Next.RETIRE; // the park announcement stays: the next caller starts a writer
                }
                LockSupport.parkNanos(this, Math.max(left, 0));
            }
            queue.clearPark();
            Thread.interrupted(); // the writer stops by state only; clear an interrupt from outside
        }
    }

    /**
     * Gives the writer's thread up, after its keep-alive with nothing queued, and with the park
     * announced (see the class notes for the race with a caller). Its batch list goes too, so an
     * idle manager keeps no batch-sized array.
     *
     * @return true if retired; false if a write came meanwhile and this thread stays the writer
     */
    private boolean retire(List<Turn> batch) {
        thread.forget();
        if (queue.reserved() > queue.taken() || boundaries.hasWork() || lifecycle.state() != State.RUNNING) {
            // false if nobody started another: this thread goes on writing; else that one takes the write
            return !thread.reclaim(Thread.currentThread());
        }
        claim.lock.lock();
        try {
            claim.uninstall(batch);
        } finally {
            claim.lock.unlock();
        }
        batch.clear();
        return true;
    }

    /** Takes up to a batch of queued writes, under the batch lock; false when the drain abandoned the rest. */
    private boolean take(List<Turn> batch) {
        claim.lock.lock();
        try {
            if (lifecycle.state() == State.ABANDONED) {
                return false;
            }
            batch.clear();
            long stop = boundaries.stop();
            boundaries.takeDeferred(batch, maxBatchSize, stop);
            long now = System.currentTimeMillis();
            for (Turn t; batch.size() < maxBatchSize && (t = queue.poll()) != null; ) {
                t.stampAccepted(now);
                if (t.seq() > stop) {
                    boundaries.defer(t); // reserved after the next boundary: delivered once it ran
                } else {
                    batch.add(t);
                }
            }
            queue.endTake();
            claim.begin(progress.finished());
            if (!batch.isEmpty()) {
                progress.batchTaken(batch.size());
            }
        } finally {
            claim.lock.unlock();
        }
        lifecycle.roomMade();
        return true;
    }

    /**
     * Runs the next session boundary on the writer thread, every write before it being finished,
     * unless a drain gave it up first. Its task isolates each provider's failure; anything else it
     * throws ends the boundary exceptionally, not the writer.
     */
    private void runBoundary() {
        Boundaries.Boundary b;
        claim.lock.lock();
        try {
            b = boundaries.ready(queue.finished());
        } finally {
            claim.lock.unlock();
        }
        if (b == null) {
            return;
        }
        if (b.claimed.compareAndSet(false, true)) { // pending until it has run: a drain waits for it
            try {
                b.task.run();
                b.done.complete(null);
            } catch (RuntimeException e) {
                b.done.completeExceptionally(e);
            }
        }
        claim.lock.lock();
        try {
            boundaries.remove(b);
        } finally {
            claim.lock.unlock();
        }
        lifecycle.signalProgress(); // a drain may wait for the boundaries
    }

    /**
     * Hands the batch to the providers. Consecutive writes with the same route go together: as one
     * {@code syncBatch} per provider when every provider of the route writes batches, else one write
     * at a time, each to every provider before the next starts. Each chunk is claimed before it
     * goes to the first provider, and published as soon as every provider had it. Recorded as
     * one {@link Events.Batch}.
     */
    private void deliver(List<Turn> batch) {
        Events.Batch event = new Events.Batch();
        event.begin();
        int claimed = 0;
        int finished = 0;
        int failed = 0;
        try {
            int from = 0;
            while (from < batch.size()) {
                RegisteredProvider[] route = ((QueuedTurn) batch.get(from)).route;
                int to = from + 1;
                while (to < batch.size() && ((QueuedTurn) batch.get(to)).route == route) {
                    to++;
                }
                boolean wholeRun = writesBatches(route);
                for (int i = from; i < to; i = finished) {
                    int end = wholeRun ? to : i + 1;
                    if (!claim.claim(i, end)) {
                        return; // the drain deadline passed and the drain abandoned the rest
                    }
                    claimed = end;
                    boolean ok = (log == null || log.awaitDeliverable()) && calls.write(batch, i, end, route);
                    publish(batch, i, end, ok);
                    failed += ok ? 0 : end - i;
                    finished = end;
                }
                from = to;
            }
        } catch (Throwable fatal) {
            failRestOfBatch(batch, claimed, finished);
            throw fatal;
        } finally {
            event.end();
            if (event.shouldCommit()) {
                event.manager = managerName;
                event.writes = batch.size();
                event.failed = failed;
                event.abandoned = batch.size() - claimed;
                event.commit();
            }
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

    /** Publishes a finished chunk, and wakes whoever waits for progress. */
    private void publish(List<Turn> batch, int from, int to, boolean ok) {
        int n = to - from;
        LAST_SESSION.setRelease(this, batch.get(to - 1).sessionId()); // before the count: a flush that returns sees it
        if (ok) {
            progress.delivered(n);
        } else {
            progress.failed(batch, from, to);
        }
        if (log != null) { // before the count: a drain that sees it finished may close the spool at once
            if (!ok) {
                for (int i = from; i < to; i++) {
                    log.keepFailed(batch.get(i)); // retried at the next start; kept before the mark passes it
                }
            }
            log.delivered(((QueuedTurn) batch.get(to - 1)).logPosition(), n); // queue order is the spool's: a prefix is finished
        }
        queue.markFinished(n);
        lifecycle.writesFinished();
        if (claim.reportedRunning(to)) {
            warnings.warn(managerName + "/late", "memory manager '" + managerName + "': "
                    + ProviderCalls.describe(batch, from, to) + ", reported still running at the drain deadline, has "
                    + "finished: " + (ok ? "every provider took it" : "at least one provider failed it"), null);
        }
    }

    /**
     * The writer is going down with an error of memlife's own mid-batch: the writes it started but
     * did not finish, and those it had not started (unless the drain already claimed them), count
     * as failed, for no provider.
     */
    private void failRestOfBatch(List<Turn> batch, int claimed, int finished) {
        int end = claim.giveUpRest() ? batch.size() : claimed;
        if (end > finished) {
            publish(batch, finished, end, false);
        }
        lifecycle.signalProgress();
    }
}
