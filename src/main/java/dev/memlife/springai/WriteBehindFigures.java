package dev.memlife.springai;

/**
 * A {@link WriteBehindChatMemoryRepository}'s figures at one moment. Counters only grow; {@link
 * #pending()} is a gauge. Immutable and thread-safe.
 *
 * <p>Every save or delete handed over is, at any moment, exactly one of: written (part of a
 * repository call that returned), {@link #coalesced() replaced} by a later one of the same
 * conversation before any write took it, or still pending. So {@code saves + deletes == coalesced
 * + repositorySaves + repositoryDeletes + (handovers pending or in failed writes)}: with a slow
 * repository, ten messages added to one conversation show as ten {@code saves}, nine {@code
 * coalesced} and one {@code repositorySaves}.
 *
 * @param saves {@code saveAll} calls taken
 * @param deletes {@code deleteByConversationId} calls taken
 * @param coalesced saves and deletes replaced by a later one of the same conversation before the
 *     writer took them: never written, because the later one carries the conversation's state
 * @param repositorySaves {@code saveAll} calls on the repository behind that returned
 * @param repositoryDeletes {@code deleteByConversationId} calls on the repository behind that
 *     returned
 * @param repositoryFailures calls on the repository behind that threw
 * @param rejected saves and deletes refused: after shutdown began, or with no writer thread to be
 *     had
 * @param pending conversations whose latest state is not in the repository yet: waiting, being
 *     written, or refused by the repository and kept
 */
public record WriteBehindFigures(long saves, long deletes, long coalesced, long repositorySaves,
        long repositoryDeletes, long repositoryFailures, long rejected, int pending) {}
