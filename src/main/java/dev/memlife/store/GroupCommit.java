package dev.memlife.store;

import dev.memlife.Turn;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The store's write path, shared by every manager that uses the store: each write (a batch of
 * turns, or a session end) goes onto the store's one write connection, and writes that wait for it
 * are committed together, in one transaction. Thread-safe.
 *
 * <p><b>Group commit.</b> A caller queues its write and waits. When no transaction is running, the
 * caller whose write is first in the queue becomes the committer: it takes the writes at the head
 * of the queue, in order, up to {@link #MAX_ROWS} rows (its own first; always at least its own),
 * and stores them in one transaction without holding the queue's lock; then it marks them done and
 * wakes their callers. It goes on with the next group while writes are queued, for its {@link
 * #COMMITTER_TURN_NANOS turn}, then wakes the caller whose write is first, which takes over. So
 * there is one transaction at a time and no thread of the store's own, and every write that
 * arrived while a transaction ran shares the next commit (one {@code fsync} on SQLite) with the
 * others: the writes of many managers, each of whose batches may be small. The queue is first in,
 * first out, so no manager's writes wait behind later ones (the unfair lock this replaced let one
 * manager's batch wait behind hundreds of others at a gateway stop).
 *
 * <p><b>Order.</b> A caller waits until its write is done, and a manager's writer hands the store
 * one batch at a time; so a manager never has two writes queued, and combining writes of
 * different managers keeps each manager's order. In a transaction the writes are inserted in queue
 * order.
 *
 * <p><b>Failures blame only the write that failed.</b> A transaction of one write is that write's
 * first attempt: if it fails, its caller goes on with the store's {@link Retry retry rule} from the
 * second attempt, as before group commit. A combined transaction that fails is rolled back and
 * counts against none of its writes: each is then stored alone, on its caller's thread, under the
 * whole retry rule, so a write fails only when a transaction of its own failed. Whatever a
 * transaction throws, every write of its group is marked done and the next committer is woken.
 */
final class GroupCommit {

    /**
     * Most rows in one combined transaction. A write larger than this (a manager's batch may be up
     * to its {@code maxBatchSize}) is committed alone. On SQLite ({@code synchronous=FULL}, WAL) on
     * a 2-core VM, transactions of 4,096 rows stored 10 to 15% more rows per second than 1,024,
     * and 8,192 no more than 4,096.
     */
    static final int MAX_ROWS = 4_096;

    /**
     * How long a committer goes on committing the groups queued behind its own before it hands the
     * connection over to the next caller: 50 ms (it finishes the transaction it started by then).
     * Going on saves a handover per group: the next committer must be woken and scheduled first,
     * which cost about a millisecond per commit on a busy 2-core machine, 4 to 9% of a gateway
     * stop's time. Its own caller (a manager's writer) waits that long at most after its write is
     * stored.
     */
    static final long COMMITTER_TURN_NANOS = 50_000_000L;

    /** Stores a group of writes in one transaction on a connection; rolls back and throws on failure. */
    @FunctionalInterface
    interface Transaction {
        void run(Connection connection, List<Write> writes) throws SQLException;
    }

    /**
     * One caller's write: a batch of turns or a session end. Its outcome fields are written by the
     * thread that committed it, before it takes the queue's lock to mark it done, and read by the
     * caller after it saw it done under that lock.
     */
    static final class Write {
        /** The turns of a batch; null for a session end. */
        final List<Turn> turns;
        /** When the store stored the write: the stored-at of the turns, the ended-at of a session end. */
        final long atMillis;
        final String endedSession;
        final int messageCount;
        final int rows;
        /** How many of the turns were new, once stored. */
        int stored;

        // Guarded by the queue's lock.
        private boolean done;
        private Condition woken;
        /** The failure of a transaction of this write alone. */
        private Throwable failure;
        /** A combined transaction with this write failed: it must be stored alone. */
        private boolean alone;

        private Write(List<Turn> turns, long atMillis, String endedSession, int messageCount) {
            this.turns = turns;
            this.atMillis = atMillis;
            this.endedSession = endedSession;
            this.messageCount = messageCount;
            this.rows = turns != null ? turns.size() : 1;
        }

        static Write turns(List<Turn> turns, long storedAtMillis) {
            return new Write(turns, storedAtMillis, null, 0);
        }

        static Write sessionEnd(String sessionId, int messageCount, long endedAtMillis) {
            return new Write(null, endedAtMillis, sessionId, messageCount);
        }
    }

    private final ConnectionHolder connection;
    private final Retry retry;
    private final Transaction transaction;

    private final ReentrantLock lock = new ReentrantLock();
    // Guarded by lock.
    private final ArrayDeque<Write> queue = new ArrayDeque<>();
    private boolean committing;

    GroupCommit(ConnectionHolder connection, Retry retry, Transaction transaction) {
        this.connection = connection;
        this.retry = retry;
        this.transaction = transaction;
    }

    /**
     * Stores {@code write}, with others waiting at the same time or alone, and waits until it is
     * stored or failed. The wait for the write connection is uninterruptible, as every database
     * call of the store is bounded by its lock timeout; an interrupt during a retry's backoff ends
     * the retries (flag restored).
     *
     * @param what what the write is ("store write w-1"), for the log and the exception
     * @throws JdbcStoreException if the write could not be stored
     * @throws RuntimeException or {@link Error}: what a transaction of this write alone threw
     */
    void store(Write write, String what) {
        List<Write> group = null;
        lock.lock();
        try {
            queue.addLast(write);
            while (!write.done && (committing || queue.peekFirst() != write)) {
                if (write.woken == null) {
                    write.woken = lock.newCondition();
                }
                write.woken.awaitUninterruptibly();
            }
            if (!write.done) {
                committing = true;
                group = takeGroup();
            }
        } finally {
            lock.unlock();
        }
        if (group != null) {
            commitWhileQueued(group); // the write is the first of its group: done when this returns
        }
        finishAlone(write, what);
    }

    /**
     * Commits {@code group}, then the groups queued behind it for the committer's turn, then lets
     * the caller whose write is first in the queue commit the rest.
     */
    private void commitWhileQueued(List<Write> group) {
        long start = System.nanoTime();
        try {
            while (group != null) {
                Throwable failure = transact(group);
                lock.lock();
                try {
                    finish(group, failure);
                    group = null;
                    if (!queue.isEmpty() && System.nanoTime() - start < COMMITTER_TURN_NANOS) {
                        group = takeGroup();
                    }
                } finally {
                    lock.unlock();
                }
            }
        } finally {
            // Also if something above threw (out of memory): the queue must never be left without a committer.
            lock.lock();
            try {
                committing = false;
                Write next = queue.peekFirst();
                if (next != null && next.woken != null) {
                    next.woken.signal();
                }
            } finally {
                lock.unlock();
            }
        }
    }

    /** Writes queued and not yet taken into a transaction; for tests and diagnostics. */
    int queued() {
        lock.lock();
        try {
            return queue.size();
        } finally {
            lock.unlock();
        }
    }

    /** The writes at the head of the queue, up to {@link #MAX_ROWS} rows, at least one. Under the lock. */
    private List<Write> takeGroup() {
        List<Write> group = new ArrayList<>();
        int rows = 0;
        for (Write next; (next = queue.peekFirst()) != null; ) {
            if (!group.isEmpty() && rows + next.rows > MAX_ROWS) {
                break;
            }
            group.add(next); // before it leaves the queue: were the add to fail, the write stays queued
            queue.pollFirst();
            rows += next.rows;
        }
        return group;
    }

    /** Runs one transaction of {@code group} on the write connection; what it threw, or null. */
    private Throwable transact(List<Write> group) {
        try {
            connection.use(c -> {
                transaction.run(c, group);
                return null;
            });
            return null;
        } catch (Throwable t) {
            return t;
        }
    }

    /** Marks every write of {@code group} done, with its outcome, and wakes its caller. Under the lock. */
    private static void finish(List<Write> group, Throwable failure) {
        for (Write w : group) {
            if (failure != null) {
                if (group.size() == 1) {
                    w.failure = failure;
                } else {
                    w.alone = true;
                }
            }
            w.done = true;
            if (w.woken != null) {
                w.woken.signal();
            }
        }
    }

    /**
     * After {@code write} is done: nothing if it was stored; else it is stored alone, on this
     * thread, under the retry rule: from its second attempt if a transaction of it alone failed,
     * with every attempt if a combined transaction failed.
     */
    private void finishAlone(Write write, String what) {
        Throwable failure;
        boolean alone;
        lock.lock();
        try {
            failure = write.failure;
            alone = write.alone;
        } finally {
            lock.unlock();
        }
        ConnectionHolder.Work<Void> work = c -> {
            transaction.run(c, List.of(write));
            return null;
        };
        if (alone) {
            retry.run(what, connection, work);
        } else if (failure instanceof SQLException) {
            retry.resume(what, connection, work, (SQLException) failure);
        } else if (failure instanceof RuntimeException) {
            throw (RuntimeException) failure;
        } else if (failure instanceof Error) {
            throw (Error) failure;
        } else if (failure != null) {
            throw new IllegalStateException(failure); // a checked exception the transaction cannot throw
        }
    }
}
