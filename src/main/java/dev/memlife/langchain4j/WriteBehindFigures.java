package dev.memlife.langchain4j;

/**
 * A {@link WriteBehindChatMemoryStore}'s figures at one moment. Counters only grow; {@link
 * #pending()} is a gauge. Immutable and thread-safe.
 *
 * <p>Every update or delete handed over is, at any moment, exactly one of: written (part of a
 * store call that returned), {@link #coalesced() replaced} by a later one of the same memory id
 * before any write took it, or still pending. So {@code updates + deletes == coalesced +
 * storeUpdates + storeDeletes + (handovers pending or in failed writes)}: with a slow store, ten
 * updates of one conversation show as ten {@code updates}, nine {@code coalesced} and one {@code
 * storeUpdates}.
 *
 * @param updates {@code updateMessages} calls taken
 * @param deletes {@code deleteMessages} calls taken
 * @param coalesced updates and deletes replaced by a later one of the same memory id before the
 *     writer took them: never written, because the later one carries the conversation's state
 * @param storeUpdates {@code updateMessages} calls on the store behind that returned
 * @param storeDeletes {@code deleteMessages} calls on the store behind that returned
 * @param storeFailures calls on the store behind that threw
 * @param rejected updates and deletes refused: after shutdown began, or with no writer thread to
 *     be had
 * @param pending memory ids whose latest state is not in the store yet: waiting, being written, or
 *     refused by the store and kept
 */
public record WriteBehindFigures(long updates, long deletes, long coalesced, long storeUpdates, long storeDeletes,
        long storeFailures, long rejected, int pending) {}
