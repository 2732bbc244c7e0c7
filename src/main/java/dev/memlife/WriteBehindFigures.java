package dev.memlife;

import java.time.Duration;

/**
 * A write-behind decorator's figures at one moment ({@link WriteBehind#figures}): those of {@code
 * dev.memlife.langchain4j.WriteBehindChatMemoryStore}, {@code
 * dev.memlife.springai.WriteBehindChatMemoryRepository}, and of the vector store and embedding
 * ingestor (where a save is one document or segment), over the store behind them (the
 * <em>backend</em> below). Counters only grow; {@link #pending()} is a gauge. Immutable and
 * thread-safe.
 *
 * <p>Every save or delete handed over is, at any moment, exactly one of: written (part of a
 * backend call that returned), {@link #coalesced() replaced} by a later one of the same id before
 * any write took it, or still pending. So {@code saves + deletes == coalesced + writtenSaves +
 * writtenDeletes + (handovers pending or in failed writes)}: with a slow backend, ten messages
 * added to one conversation show as ten {@code saves}, nine {@code coalesced} and one {@code
 * writtenSaves}.
 *
 * @param saves saves taken: LangChain4j's {@code updateMessages}, Spring AI's {@code saveAll}, and the
 *     states a spool replayed at the start
 * @param deletes deletes taken: LangChain4j's {@code deleteMessages}, Spring AI's {@code
 *     deleteByConversationId}
 * @param coalesced saves and deletes replaced by a later one of the same id before the writer took
 *     them: never written, because the later one carries the conversation's state
 * @param writtenSaves saves on the backend that returned (each id of a batch counts)
 * @param writtenDeletes deletes on the backend that returned (each id of a batch counts)
 * @param failedWrites ids whose write on the backend threw (a failed call counts each id it carried)
 * @param rejected saves and deletes refused: after shutdown began, or with no writer thread to be
 *     had
 * @param pending ids whose latest state is not in the backend yet: waiting, being written, or
 *     refused by the backend and kept
 * @param oldestPendingAge how long the oldest state not yet in the backend has waited (on the
 *     ticker); zero when nothing is pending
 * @param failingWrites ids whose writes failed in a row since the backend last took one: 0
 *     while it takes them; growing while it keeps failing
 */
public record WriteBehindFigures(long saves, long deletes, long coalesced, long writtenSaves, long writtenDeletes,
        long failedWrites, long rejected, int pending, Duration oldestPendingAge, long failingWrites) {}
