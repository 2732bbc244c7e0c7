package dev.memlife;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * The write path's figures at one moment, as {@link MemoryManager#figures()} reads them while the
 * manager runs: cheap (a few volatile reads and one short lock the writer takes once per batch),
 * and nothing is added to {@code syncAll} to keep them. Counters only grow; {@link #pending()} and
 * {@link #oldestPendingAge()} are gauges. Summed over many managers with {@link #plus}, as {@code
 * AgentGateway.figures()} does. Immutable and thread-safe.
 *
 * <p>Every accepted write is, at any moment, exactly one of delivered, failed, abandoned or
 * pending; a snapshot reads the counts one after the other while the writer runs, so the sum may
 * be off by the writes finished during the read.
 *
 * @param accepted writes accepted so far ({@code syncAll} returned true)
 * @param delivered writes every provider of their route took
 * @param failed writes at least one provider failed
 * @param abandoned writes the drain abandoned at its deadline, never started
 * @param rejected writes refused: shutdown had begun, the queue stayed full for the enqueue
 *     timeout, the spool was full, or no writer thread could be started
 * @param pending writes accepted and neither finished nor abandoned: queued, or being written now
 *     (the queue depth)
 * @param oldestPendingAge how long the oldest pending write has been waiting; zero if none is
 *     pending. A lower bound: it counts from when the writer took the write off the queue (within
 *     microseconds of {@code syncAll} while the writer keeps up), or, for a write no writer has
 *     taken yet, from the first snapshot that saw it queued
 * @param batches batches the writer took off the queue
 * @param batchedWrites writes in those batches
 * @param largestBatch the most writes in one batch
 * @param flushWaits {@code flushPending} calls that had to wait for the writer
 * @param flushTimeouts of those, the ones that returned false: timeout, interrupt or abandonment
 * @param flushWaitTime how long those flushes waited, in all (on the manager's ticker); with
 *     {@code flushWaits}, a timer's count and total
 * @param drains shutdown drains that have finished: 0 or 1 for a manager, the managers drained
 *     for a sum
 * @param drainTime how long those drains took, in all (on the manager's ticker): the queue's
 *     drain, not the providers' shutdown after it
 * @param spool the durable spool's figures (backlog, oldest undelivered age, replayed, corrupt,
 *     group commits); {@link SpoolFigures#NONE} for a manager without a spool
 */
public record WriteFigures(long accepted, long delivered, long failed, long abandoned, long rejected, long pending,
        Duration oldestPendingAge, long batches, long batchedWrites, long largestBatch, long flushWaits,
        long flushTimeouts, Duration flushWaitTime, long drains, Duration drainTime, SpoolFigures spool) {

    /** Figures of a manager that never wrote: every count zero. */
    public static final WriteFigures NONE = new WriteFigures(0, 0, 0, 0, 0, 0, Duration.ZERO, 0, 0, 0, 0, 0);

    /**
     * Figures of a manager without a spool ({@link SpoolFigures#NONE}) that spent no time in
     * flushes or a drain.
     *
     * @param accepted writes accepted so far
     * @param delivered writes every provider of their route took
     * @param failed writes at least one provider failed
     * @param abandoned writes the drain abandoned
     * @param rejected writes refused
     * @param pending writes queued or being written
     * @param oldestPendingAge how long the oldest pending write has been waiting
     * @param batches batches the writer took
     * @param batchedWrites writes in those batches
     * @param largestBatch the most writes in one batch
     * @param flushWaits flushes that waited
     * @param flushTimeouts flushes that returned false
     * @throws IllegalArgumentException if a count is negative
     */
    public WriteFigures(long accepted, long delivered, long failed, long abandoned, long rejected, long pending,
            Duration oldestPendingAge, long batches, long batchedWrites, long largestBatch, long flushWaits,
            long flushTimeouts) {
        this(accepted, delivered, failed, abandoned, rejected, pending, oldestPendingAge, batches, batchedWrites,
                largestBatch, flushWaits, flushTimeouts, Duration.ZERO, 0, Duration.ZERO, SpoolFigures.NONE);
    }

    /**
     * Checks the components.
     *
     * @param accepted writes accepted so far
     * @param delivered writes every provider of their route took
     * @param failed writes at least one provider failed
     * @param abandoned writes the drain abandoned
     * @param rejected writes refused
     * @param pending writes queued or being written
     * @param oldestPendingAge how long the oldest pending write has been waiting
     * @param batches batches the writer took
     * @param batchedWrites writes in those batches
     * @param largestBatch the most writes in one batch
     * @param flushWaits flushes that waited
     * @param flushTimeouts flushes that returned false
     * @param flushWaitTime how long the flushes that waited took, in all
     * @param drains drains that have finished
     * @param drainTime how long those drains took, in all
     * @param spool the durable spool's figures; {@link SpoolFigures#NONE} without one
     * @throws IllegalArgumentException if a count or a time is negative
     */
    public WriteFigures {
        requireNonNull(oldestPendingAge, "oldestPendingAge");
        requireNonNull(flushWaitTime, "flushWaitTime");
        requireNonNull(drainTime, "drainTime");
        requireNonNull(spool, "spool");
        if (flushWaitTime.isNegative() || drainTime.isNegative()) {
            throw new IllegalArgumentException("write figures cannot be negative: " + flushWaitTime + ", " + drainTime);
        }
        long[] counts = {accepted, delivered, failed, abandoned, rejected, pending, batches, batchedWrites,
            largestBatch, flushWaits, flushTimeouts, drains};
        for (long c : counts) {
            if (c < 0) {
                throw new IllegalArgumentException("write figures cannot be negative: " + c);
            }
        }
    }

    /** {@return the mean number of writes per batch; zero before the first batch} */
    public double meanBatchSize() {
        return batches == 0 ? 0 : (double) batchedWrites / batches;
    }

    /**
     * These figures and {@code other} together: counts and times added, the oldest pending age and
     * the largest batch the greater of the two.
     *
     * @param other figures of another manager (or a sum of them)
     * @return the sum
     */
    public WriteFigures plus(WriteFigures other) {
        requireNonNull(other, "other");
        return new WriteFigures(accepted + other.accepted, delivered + other.delivered, failed + other.failed,
                abandoned + other.abandoned, rejected + other.rejected, pending + other.pending,
                oldestPendingAge.compareTo(other.oldestPendingAge) >= 0 ? oldestPendingAge : other.oldestPendingAge,
                batches + other.batches, batchedWrites + other.batchedWrites,
                Math.max(largestBatch, other.largestBatch), flushWaits + other.flushWaits,
                flushTimeouts + other.flushTimeouts, flushWaitTime.plus(other.flushWaitTime), drains + other.drains,
                drainTime.plus(other.drainTime), spool.plus(other.spool));
    }
}
