package dev.memlife;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * The figures of a manager's durable spool ({@link DurableLog}), part of its {@link
 * WriteFigures}: all zero for a manager without one. A snapshot; immutable.
 *
 * @param appended writes appended by this run
 * @param replayed writes replayed from earlier runs
 * @param backlog writes in the spool not yet handed to every provider (appended or replayed,
 *     and not yet marked delivered)
 * @param oldestUndeliveredAge how long the oldest of them has waited since it was first accepted
 * @param bytes the spool's size on disk and in its buffer: what its size bound counts
 * @param segments segment files on disk
 * @param groupCommits forces of the disk so far: far fewer than the writes when callers share them
 * @param corruptRecords damaged records found and skipped in the middle of a segment
 * @param tornTailBytes bytes of torn tails found and cut off
 * @param rejectedFull writes refused because the spool was full
 * @param failedKept writes a provider failed, appended to the spool again so the next start
 *     retries them (they are in the drain report's failed ids too)
 */
public record SpoolFigures(long appended, long replayed, long backlog, Duration oldestUndeliveredAge, long bytes,
        long segments, long groupCommits, long corruptRecords, long tornTailBytes, long rejectedFull,
        long failedKept) {

    /** The figures of a manager without a spool. */
    public static final SpoolFigures NONE = new SpoolFigures(0, 0, 0, Duration.ZERO, 0, 0, 0, 0, 0, 0, 0);

    /**
     * Checks the components.
     *
     * @param appended writes appended by this run
     * @param replayed writes replayed from earlier runs
     * @param backlog writes in the spool not yet handed to every provider
     * @param oldestUndeliveredAge how long the oldest of them has waited
     * @param bytes the spool's size on disk and in its buffer
     * @param segments segment files on disk
     * @param groupCommits forces of the disk so far
     * @param corruptRecords damaged records found and skipped
     * @param tornTailBytes bytes of torn tails found and cut off
     * @param rejectedFull writes refused because the spool was full
     * @param failedKept writes a provider failed, kept for the next start
     * @throws NullPointerException if {@code oldestUndeliveredAge} is null
     * @throws IllegalArgumentException if a count is negative
     */
    public SpoolFigures {
        requireNonNull(oldestUndeliveredAge, "oldestUndeliveredAge");
        long[] counts = {appended, replayed, backlog, bytes, segments, groupCommits, corruptRecords, tornTailBytes,
            rejectedFull, failedKept};
        for (long c : counts) {
            if (c < 0) {
                throw new IllegalArgumentException("spool figures cannot be negative: " + c);
            }
        }
    }

    /**
     * These figures with another oldest undelivered age.
     *
     * @param age the age
     * @return the figures
     */
    public SpoolFigures withOldestUndeliveredAge(Duration age) {
        return new SpoolFigures(appended, replayed, backlog, age, bytes, segments, groupCommits, corruptRecords,
                tornTailBytes, rejectedFull, failedKept);
    }

    /**
     * These figures and {@code other} together: counts added, the oldest age the greater.
     *
     * @param other figures of another spool (or a sum of them)
     * @return the sum
     */
    public SpoolFigures plus(SpoolFigures other) {
        requireNonNull(other, "other");
        return new SpoolFigures(appended + other.appended, replayed + other.replayed, backlog + other.backlog,
                oldestUndeliveredAge.compareTo(other.oldestUndeliveredAge) >= 0 ? oldestUndeliveredAge
                        : other.oldestUndeliveredAge,
                bytes + other.bytes, segments + other.segments, groupCommits + other.groupCommits,
                corruptRecords + other.corruptRecords, tornTailBytes + other.tornTailBytes,
                rejectedFull + other.rejectedFull, failedKept + other.failedKept);
    }
}
