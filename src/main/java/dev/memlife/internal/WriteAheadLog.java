package dev.memlife.internal;

import dev.memlife.SpoolFigures;
import dev.memlife.Turn;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.locks.Lock;

/**
 * The protocol between a manager and its write-ahead log: where a manager built with {@code
 * MemoryManager.Builder.spool(DurableLog)} puts every write before it queues it, so that the write
 * survives a crash. The application holds a {@link dev.memlife.DurableLog} (a {@code
 * dev.memlife.spool.Spool}); the manager reaches its protocol through {@link WriteAheadLogs}. This
 * package is not exported: no application calls these methods. One log serves one manager;
 * implementations are thread-safe.
 *
 * <p>The manager calls it like this:
 * <ol>
 *   <li>{@link #attach} once, when it is built;
 *   <li>for each write: {@link #encode} on the caller's thread; then, holding {@link
 *       #orderLock()}, {@link #checkRoom}, the queue's reservation, {@link #append} and the link
 *       into the queue, so the log's order is the queue's order;
 *   <li>{@link #awaitDurable} for a caller who waits for the disk (the log commits on its own too,
 *       soon after each append: a caller that does not wait gets durability within one group
 *       commit);
 *   <li>{@link #delivered} on the writer thread each time it has finished writes: every write up
 *       to that position has been handed to every provider; a write a provider failed is first
 *       {@linkplain #keepFailed kept again}, so the next start retries it;
 *   <li>{@link #replay} once, before the first new write, with the writes an earlier run left
 *       undelivered;
 *   <li>{@link #close} at the end of the manager's shutdown.
 * </ol>
 */
public interface WriteAheadLog {

    /**
     * Binds the log to the manager that is being built.
     *
     * @param managerName the manager's name, for messages
     * @param idPrefix the prefix of the manager's write ids: a write's id is {@code idPrefix:seq}
     * @param threads makes any thread the log needs: the manager's thread factory
     * @throws IllegalStateException if the log already serves a manager or is closed
     */
    void attach(String managerName, String idPrefix, ThreadFactory threads);

    /** {@return the lock that orders appends; the log takes it too, to cut a group commit} */
    Lock orderLock();

    /**
     * Encodes a write before its place in the queue is known; on the caller's thread, outside the
     * order lock.
     *
     * @param turn the write; its id is not known yet
     * @return the encoded write, passed to {@link #checkRoom} and {@link #append}; the log may
     *     reuse the array for the calling thread's next write, so it is valid until then, and may
     *     be longer than the encoded write, which knows its own length
     * @throws java.util.concurrent.RejectedExecutionException if the log cannot hold the write
     */
    byte[] encode(Turn turn);

    /**
     * Checks that one more record fits; under the order lock, before the write is reserved in the
     * queue, so a refusal leaves nothing queued.
     *
     * @param encoded what {@link #encode} returned
     * @throws java.util.concurrent.RejectedExecutionException if the log is full or has failed
     */
    void checkRoom(byte[] encoded);

    /**
     * Appends a write, under the order lock, after {@link #checkRoom} passed and the queue gave
     * the write its place. Must not fail: the write is already reserved. Once it returns, the
     * write survives a crash of the process: the caller's {@code syncAll} reports it accepted.
     *
     * @param encoded what {@link #encode} returned
     * @param seq the write's place in the queue: its id is {@code idPrefix:seq}
     * @return the write's position: just past its record, increasing with every append
     */
    long append(byte[] encoded, long seq);

    /**
     * Keeps a write a provider failed, for the next start: appends it again, with its id and the
     * time it was first accepted, before the writer marks it delivered. On the writer thread; a
     * write that cannot be kept (the log is full or closed) is logged, never thrown.
     *
     * @param turn the failed write
     */
    void keepFailed(Turn turn);

    /**
     * {@return the position of the last write appended; before the first, the start of this run's
     * log, past every write an earlier run left}
     */
    long appended();

    /**
     * Waits until every write up to {@code position} is durable: a group commit, in which callers
     * waiting at the same time share one force of the disk.
     *
     * @param position a position {@link #append} or {@link #appended()} returned
     * @param timeoutNanos the longest wait
     * @return true once durable; false on timeout or interrupt (the flag restored)
     * @throws java.io.UncheckedIOException if the disk failed: what was appended after the last
     *     good force is not durable
     */
    boolean awaitDurable(long position, long timeoutNanos);

    /**
     * Marks writes finished, on the writer thread: every write up to {@code position} was handed
     * to every provider; {@code writes} more writes than before. Need not be durable at once: a
     * mark lost in a crash only replays writes the idempotent store already holds.
     *
     * @param position the position of the last write finished
     * @param writes how many writes this mark adds
     */
    void delivered(long position, int writes);

    /**
     * Whether the writer may hand writes to the providers now; on the writer thread, before each
     * chunk of a batch. A local spool always may. A shared log may only while this replica holds
     * the agent's lease: it waits while that is uncertain (the database is out of reach, the lease
     * not yet renewed) and answers false once another replica has taken the lease, or the log is
     * closed. Writes it answers false for count as failed; they stay in the log, undelivered, for
     * the lease's new holder, and {@link #keepFailed} and {@link #delivered} are still called for
     * them: the log ignores both once its lease is lost.
     *
     * @return true to deliver; false to leave the writes to the log
     */
    default boolean awaitDeliverable() {
        return true;
    }

    /**
     * Hands every write an earlier run left undelivered to {@code into}, in their original order
     * and with their original ids; once, before the first new write.
     *
     * @param into takes each write and its position; returns false to stop (the manager is
     *     shutting down: the rest stays in the log)
     * @return how many writes were handed over
     */
    long replay(Replayer into);

    /** Takes the writes of a {@link #replay}. */
    @FunctionalInterface
    interface Replayer {
        /**
         * Takes one replayed write.
         *
         * @param turn the write, with its original id, contents and time
         * @param position its position in the log, for {@link #delivered}
         * @return true to go on; false to stop
         */
        boolean accept(Turn turn, long position);
    }

    /** {@return the log's figures now; its oldest undelivered age is filled in by the manager} */
    SpoolFigures figures();

    /**
     * Makes what was appended durable, records the delivery mark and releases the log's files;
     * called once, after the manager's drain. Writes still running then are marked no more:
     * the next run replays them, and the idempotent store keeps them once.
     */
    void close();
}
