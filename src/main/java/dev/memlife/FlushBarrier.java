package dev.memlife;

import dev.memlife.internal.Deadline;
import dev.memlife.internal.Events;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The flush barrier of one writer ({@link MemoryManager#flushPending}): waits until every write
 * accepted before the flush has been handed to every provider.
 *
 * <p><b>Progress is published per write.</b> The writer hands a <em>chunk</em> (one write, or a
 * run of writes for providers that take batches) to every provider of its route, then publishes
 * it as delivered or failed ({@link Progress}, {@link TurnQueue#finished()}): release stores, as
 * only the writer writes them. A flush that starts when {@code n} writes were reserved is met once
 * {@code finished >= n}: every write whose {@code syncAll} returned before the flush was linked
 * before it, and at most {@code n} writes were linked by then, so they are all among the first
 * {@code n} the writer finishes. A flush that finds them finished takes no lock and reads no
 * ticker.
 */
final class FlushBarrier {

    /** The writer's queue, thread, lifecycle and ticker, read where a flush needs them. */
    private final WriterContext context;

    /**
     * Flushes that had to wait, those of them that returned false, and how long they waited in all
     * (on the ticker); counted off the fast path.
     */
    private final AtomicLong waits = new AtomicLong();
    private final AtomicLong timeouts = new AtomicLong();
    private final AtomicLong waitNanos = new AtomicLong();

    FlushBarrier(WriterContext context) {
        this.context = context;
    }

    /**
     * True once every write accepted before this call has been handed to every provider; false on
     * timeout, interrupt, abandonment, or when called from the writer itself. Only a flush that
     * has to wait is counted, timed and recorded ({@link Events.Flush}).
     */
    boolean flush(long timeoutNanos) {
        long target = context.queue.reserved();
        long finished = context.queue.finished();
        if (finished >= target) {
            return true;
        }
        if (context.thread.isCurrent()) {
            return false; // the writer cannot wait for itself
        }
        Events.Flush event = new Events.Flush();
        event.begin();
        Deadline wait = Deadline.afterNanos(context.ticker, timeoutNanos);
        waits.incrementAndGet();
        boolean met = context.lifecycle.awaitFinished(target, () -> wait);
        waitNanos.addAndGet(Math.max(0, wait.elapsedNanos()));
        if (!met) {
            timeouts.incrementAndGet();
        }
        event.end();
        if (event.shouldCommit()) {
            event.manager = context.managerName;
            event.writes = target - finished;
            event.met = met;
            event.timeout = timeoutNanos;
            event.commit();
        }
        return met;
    }

    /** Flushes that had to wait. */
    long waits() {
        return waits.get();
    }

    /** Flushes that had to wait and returned false. */
    long timeouts() {
        return timeouts.get();
    }

    /** How long the flushes that had to wait waited in all. */
    Duration waited() {
        return Duration.ofNanos(waitNanos.get());
    }
}
