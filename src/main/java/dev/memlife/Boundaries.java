package dev.memlife;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Session boundaries queued on a writer ({@link MemoryManager#commitSessionBoundaryAsync}): tasks
 * the writer runs between two writes, at a point of the reservation order. A boundary registered
 * when {@code n} writes had been reserved runs once the writes numbered 1 to {@code n} are
 * finished, and before any later write reaches a provider.
 *
 * <p>The queue is in link order, which is not quite reservation order: a caller that reserved
 * number 5 may link it after the caller of number 6. So while a boundary waits, a write taken off
 * the queue with a number beyond it is <em>deferred</em>: kept aside, in order, and delivered
 * right after the boundary ran, before anything taken later. Callers whose {@code syncAll}
 * returned before the boundary was registered are before it; callers who began after it was
 * registered are after it; no race between the two steps of an append can mix them up.
 *
 * <p>Guarded by the batch lock ({@link BatchClaim#lock}), like the batch; the two counts are also
 * read without it by the writer's idle loop.
 */
final class Boundaries {

    /** One boundary: after which write it runs, what it does, and its outcome. */
    static final class Boundary {
        /** Writes numbered up to this one run before the boundary. */
        final long after;
        final Runnable task;
        final CompletableFuture<Void> done = new CompletableFuture<>();
        /** Taken by whoever ends the boundary: the writer that runs it, or a drain that gives it up. */
        final AtomicBoolean claimed = new AtomicBoolean();

        Boundary(long after, Runnable task) {
            this.after = after;
            this.task = task;
        }
    }

    private final ArrayDeque<Boundary> pending = new ArrayDeque<>(1); // small: most writers never see a boundary
    /** Writes taken off the queue whose number is beyond the next boundary, in link order. */
    private final ArrayDeque<Turn> deferred = new ArrayDeque<>(1);
    private volatile int pendingCount;
    private volatile int deferredCount;
    /** {@link #stop()}, for readers without the lock. */
    private volatile long nextAfter = Long.MAX_VALUE;

    /** Under the lock: queues a boundary after the writes reserved so far. */
    void add(Boundary b) {
        pending.addLast(b);
        changed();
    }

    private void changed() {
        pendingCount = pending.size();
        nextAfter = stop();
    }

    /** The number of the last write before the next boundary; {@code Long.MAX_VALUE} if none waits. Without the lock. */
    long nextAfter() {
        return nextAfter;
    }

    /** True while a boundary waits or a write is deferred; read without the lock. */
    boolean hasWork() {
        return pendingCount > 0 || deferredCount > 0;
    }

    /** True while a boundary waits; read without the lock. */
    boolean hasPending() {
        return pendingCount > 0;
    }

    /** Under the lock: the number of the last write the writer may deliver before the next boundary. */
    long stop() {
        Boundary next = pending.peekFirst();
        return next == null ? Long.MAX_VALUE : next.after;
    }

    /** Under the lock: the next boundary, if every write before it is finished; else null. */
    Boundary ready(long finished) {
        Boundary next = pending.peekFirst();
        return next != null && finished >= next.after ? next : null;
    }

    /** Under the lock: the boundary ran or was given up; it leaves the queue. */
    void remove(Boundary b) {
        pending.remove(b);
        changed();
    }

    /**
     * Under the lock, as the writer takes a batch: moves deferred writes numbered up to {@code
     * stop} into {@code batch}, oldest first, up to {@code max} writes in the batch.
     */
    void takeDeferred(List<Turn> batch, int max, long stop) {
        if (deferred.isEmpty()) {
            return; // the usual case: nothing to move, nothing to publish
        }
        for (Iterator<Turn> it = deferred.iterator(); it.hasNext() && batch.size() < max; ) {
            Turn t = it.next();
            if (t.seq() <= stop) {
                it.remove();
                batch.add(t);
            }
        }
        deferredCount = deferred.size();
    }

    /** Under the lock: a write taken off the queue that must wait for the next boundary. */
    void defer(Turn t) {
        deferred.addLast(t);
        deferredCount = deferred.size();
    }

    /** Under the lock, for a drain that gives the rest up: the deferred writes, to count as abandoned. */
    void abandonDeferred(WriteIds.Builder abandoned) {
        for (Turn t : deferred) {
            abandoned.add(t);
        }
        deferred.clear();
        deferredCount = 0;
    }

    /** Under the lock: ends every boundary no writer has claimed, exceptionally with {@code why}. */
    void failUnclaimed(RuntimeException why) {
        for (Iterator<Boundary> it = pending.iterator(); it.hasNext(); ) {
            Boundary b = it.next();
            if (b.claimed.compareAndSet(false, true)) {
                it.remove();
                b.done.completeExceptionally(why);
            }
        }
        changed();
    }
}
