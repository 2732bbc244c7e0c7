package dev.memlife.spool;

import dev.memlife.DurableLog;
import dev.memlife.SpoolFigures;
import dev.memlife.Turn;
import dev.memlife.internal.WriteAheadLog;
import dev.memlife.internal.WriteAheadLogs;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.zip.CRC32C;

/**
 * One agent's log on a {@link SharedLog}, held under a lease: what {@link SharedLog#agent} returns
 * and a {@link dev.memlife.MemoryManager} is built on ({@code builder().spool(agentLog)}). An
 * accepted write is appended here and committed in PostgreSQL by the replica's next group commit;
 * {@code awaitDurable} waits for that commit. The writer delivers only while the lease is held;
 * once another replica has taken it, appends are refused with {@link LeaseLostException} and the
 * writes queued here are left to the new holder, which replays them.
 *
 * <p>Closed by the manager's shutdown: what was appended is committed, the delivery mark written,
 * and the lease released, so any replica can claim the agent at once. Thread-safe.
 *
 * <p>One idea past 500 lines: one agent's pending writes and its lease, read and changed under
 * one lock by the manager's threads (append, wait for durability, deliver) and by the replica's
 * worker (commit, renew, fence); the write-ahead-log protocol the manager calls is an inner class
 * over that same state.
 */
public final class AgentLog implements DurableLog {

    static {
        WriteAheadLogs.register(AgentLog.class, log -> log.protocol);
    }

    /** A record appended and not yet committed, at its place in the agent's log. */
    record Pending(long seq, byte[] record, boolean kept) {}

    private final SharedLog owner;
    private final String agent;
    private final long epoch;
    private final Protocol protocol = new Protocol();

    /** Orders appends; guards the fields below it. */
    private final ReentrantLock order = new ReentrantLock();
    /** Signalled when a commit, a renewal, the loss of the lease or the close changes what waiters wait for. */
    private final Condition changed = order.newCondition();
    private final CRC32C crc = new CRC32C();
    private final List<Pending> pending = new ArrayList<>();
    private long pendingBytes;
    private long lastSeq;
    private volatile long committedSeq;
    private volatile long deliveredSeq;
    private long markSent;
    private long replayedUpTo;
    private String idPrefix = "";
    private volatile long validUntilNanos;
    private volatile String lostReason;
    private volatile boolean closing;
    private boolean released;

    /** For a takeover: how long the lease had been expired at the claim, and when the claim began. */
    private long expiredAtClaimMillis = -1;
    private long claimStartNanos;

    private long appended;
    private long replayed;
    private long delivered;
    private long failedKept;
    private long rejectedFull;
    private long fenced;

    AgentLog(SharedLog owner, String agent, long epoch, long lastSeq, long deliveredSeq, long validUntilNanos) {
        this.owner = owner;
        this.agent = agent;
        this.epoch = epoch;
        this.lastSeq = lastSeq;
        this.committedSeq = lastSeq;
        this.deliveredSeq = deliveredSeq;
        this.markSent = deliveredSeq;
        this.validUntilNanos = validUntilNanos;
    }

    /** {@return the agent this log is for} */
    public String agent() {
        return agent;
    }

    /** {@return the lease's epoch this log holds: one more than the holder's before it} */
    public long epoch() {
        return epoch;
    }

    /** {@return whether another replica has taken this agent's lease: this log refuses and delivers nothing} */
    public boolean leaseLost() {
        return lostReason != null;
    }

    @Override
    public SpoolFigures figures() {
        order.lock();
        try {
            long backlog = Math.max(0, appended + replayed - delivered);
            return new SpoolFigures(appended, replayed, backlog, Duration.ZERO, pendingBytes, 0,
                    owner.groupCommits(), 0, 0, rejectedFull, failedKept);
        } finally {
            order.unlock();
        }
    }

    @Override
    public String toString() {
        return "AgentLog[" + agent + ", epoch " + epoch + (lostReason != null ? ", lease lost" : "") + "]";
    }

    // ---- what the replica's worker calls ----

    /** The records to commit, in order (copies of the list), the mark to write, and whether to release. */
    record Work(AgentLog log, List<Pending> records, long mark, boolean markAdvanced, boolean release) {}

    /** Takes what waits to be committed; null if nothing does and {@code all} is false. */
    Work work(boolean all) {
        order.lock();
        try {
            boolean release = closing && !released;
            if (lostReason != null || released || (!all && pending.isEmpty() && deliveredSeq == markSent && !release)) {
                return null;
            }
            return new Work(this, List.copyOf(pending), deliveredSeq, deliveredSeq > markSent, release);
        } finally {
            order.unlock();
        }
    }

    /**
     * A commit that held the lease: what it carried is durable, the mark is written, the lease
     * renewed until {@code validUntil} (or released).
     */
    void committed(Work w, long validUntil) {
        order.lock();
        try {
            int n = w.records.size();
            if (n > 0) {
                long upTo = w.records.get(n - 1).seq;
                dropPendingUpTo(upTo);
                committedSeq = Math.max(committedSeq, upTo);
            }
            markSent = Math.max(markSent, w.mark);
            if (w.release) {
                released = true;
                validUntilNanos = System.nanoTime(); // no more deliveries: the lease is free
            } else {
                validUntilNanos = validUntil;
            }
            changed.signalAll();
        } finally {
            order.unlock();
        }
    }

    /**
     * After a commit failed with an unknown outcome: the database holds this agent's log up to
     * {@code seq}. Returns the writes that commit had carried after all.
     */
    int committedUpTo(long seq) {
        order.lock();
        try {
            int writes = (int) pending.stream().filter(p -> p.seq <= seq && !p.kept).count();
            dropPendingUpTo(seq);
            committedSeq = Math.max(committedSeq, Math.min(seq, lastSeq));
            changed.signalAll();
            return writes;
        } finally {
            order.unlock();
        }
    }

    /** Drops the committed records from the front of the pending list in one shift (not one per record). */
    private void dropPendingUpTo(long seq) {
        int k = 0;
        while (k < pending.size() && pending.get(k).seq <= seq) {
            pendingBytes -= pending.get(k).record.length;
            k++;
        }
        pending.subList(0, k).clear();
    }

    /** Another replica holds the lease now: refuse everything from here on. Returns the writes dropped uncommitted. */
    int lost(String reason) {
        order.lock();
        try {
            if (lostReason != null) {
                return 0;
            }
            lostReason = reason;
            int dropped = (int) pending.stream().filter(p -> !p.kept).count();
            fenced += dropped;
            owner.fencedWrites.addAndGet(dropped);
            pending.clear();
            pendingBytes = 0;
            changed.signalAll();
            return dropped;
        } finally {
            order.unlock();
        }
    }

    /** Whether the worker should renew this lease now: less than half of it is left. */
    boolean renewalDue(long now, long leaseNanos) {
        return lostReason == null && !released && validUntilNanos - now < leaseNanos / 2;
    }

    /** {@return whether the manager on this log has stopped and the lease is being released} */
    boolean isClosing() {
        return closing;
    }

    boolean isReleased() {
        order.lock();
        try {
            return released || lostReason != null;
        } finally {
            order.unlock();
        }
    }

    /** Records that this log's claim took the lease over from a replica that let it expire. */
    void takeover(long expiredMillis, long claimStart) {
        this.expiredAtClaimMillis = expiredMillis;
        this.claimStartNanos = claimStart;
    }

    /** {@return for a takeover, the time from the lease's expiry until the replay ended; else null} */
    Duration replayFinished() {
        if (expiredAtClaimMillis < 0) {
            return null;
        }
        return Duration.ofMillis(expiredAtClaimMillis).plusNanos(System.nanoTime() - claimStartNanos);
    }

    /** {@return the position of the last write replayed; 0 before a replay} */
    long replayedUpTo() {
        return replayedUpTo;
    }

    /** {@return writes refused or dropped uncommitted because the lease was lost} */
    long fencedWrites() {
        order.lock();
        try {
            return fenced;
        } finally {
            order.unlock();
        }
    }

    long deliveredSeq() {
        return deliveredSeq;
    }

    // ---- the protocol, reached by the manager through WriteAheadLogs ----

    private LeaseLostException lostException(String what) {
        return new LeaseLostException("agent '" + agent + "' (epoch " + epoch + ") on shared log " + owner.describe()
                + ": " + what + ": " + lostReason);
    }

    private final class Protocol implements WriteAheadLog {

        private boolean attached;

        @Override
        public void attach(String managerName, String prefix, ThreadFactory threads) {
            order.lock();
            try {
                if (attached || closing) {
                    throw new IllegalStateException("agent log " + AgentLog.this + " already serves a manager or is "
                            + "closed: open one per manager with SharedLog.agent(key)");
                }
                attached = true;
                idPrefix = prefix;
            } finally {
                order.unlock();
            }
        }

        @Override
        public Lock orderLock() {
            return order;
        }

        @Override
        public byte[] encode(Turn turn) {
            return SpoolRecord.encode(turn);
        }

        @Override
        public void checkRoom(byte[] encoded) {
            if (lostReason != null) {
                fenced++;
                owner.fencedWrites.incrementAndGet();
                throw lostException("write refused");
            }
            if (closing) {
                throw new RejectedExecutionException("agent log " + AgentLog.this + " is closed");
            }
            int length = SpoolRecord.length(encoded);
            if (pendingBytes + length > owner.maxPendingBytes()) {
                rejectedFull++;
                throw new RejectedExecutionException("shared log " + owner.describe() + ": agent '" + agent + "' has "
                        + pendingBytes + " bytes not yet committed (at most " + owner.maxPendingBytes()
                        + "): the database is slow or out of reach; the write was not taken");
            }
        }

        @Override
        public long append(byte[] encoded, long seq) {
            byte[] record = Arrays.copyOf(encoded, SpoolRecord.length(encoded));
            SpoolRecord.seal(record, 0, record.length, seq, System.currentTimeMillis(), crc);
            long position = ++lastSeq;
            pending.add(new Pending(position, record, false));
            pendingBytes += record.length;
            appended++;
            owner.appended.incrementAndGet();
            owner.wake();
            return position;
        }

        @Override
        public void keepFailed(Turn turn) {
            order.lock();
            try {
                if (lostReason != null || closing && released) {
                    return; // the new holder replays it from the log
                }
                byte[] record = SpoolRecord.encodeKept(turn);
                pending.add(new Pending(++lastSeq, record, true));
                pendingBytes += record.length;
                failedKept++;
            } finally {
                order.unlock();
            }
            owner.wake();
        }

        @Override
        public long appended() {
            order.lock();
            try {
                return lastSeq;
            } finally {
                order.unlock();
            }
        }

        @Override
        public boolean awaitDurable(long position, long timeoutNanos) {
            long deadline = System.nanoTime() + Math.max(0, timeoutNanos);
            return withLock(() -> {
                if (awaitUnderLock(() -> committedSeq >= position || lostReason != null, deadline)
                        && committedSeq < position) {
                    throw lostException("writes up to position " + position + " were not committed");
                }
                return committedSeq >= position;
            });
        }

        @Override
        public boolean awaitDeliverable() {
            if (lostReason == null && System.nanoTime() - validUntilNanos < 0) {
                return true;
            }
            return withLock(() -> {
                while (true) {
                    if (lostReason != null || released || closing) {
                        return false;
                    }
                    long left = validUntilNanos - System.nanoTime();
                    if (left > 0) {
                        return true;
                    }
                    if (-left > owner.leaseNanos) {
                        // unrenewed for a whole lease past its end: another replica may hold it; the writes
                        // count as failed and are kept in the log for whoever holds the agent next
                        return false;
                    }
                    owner.renewNow();
                    changed.awaitNanos(TimeUnit.MILLISECONDS.toNanos(100));
                }
            });
        }

        @Override
        public void delivered(long position, int writes) {
            order.lock();
            try {
                if (position > deliveredSeq) {
                    deliveredSeq = position;
                }
                delivered += writes;
            } finally {
                order.unlock();
            }
        }

        @Override
        public long replay(Replayer into) {
            long n = owner.replay(AgentLog.this, deliveredSeq, (turn, position) -> {
                replayedUpTo = position;
                return into.accept(turn, position);
            });
            order.lock();
            try {
                replayed += n;
            } finally {
                order.unlock();
            }
            return n;
        }

        @Override
        public SpoolFigures figures() {
            return AgentLog.this.figures();
        }

        @Override
        public void close() {
            order.lock();
            try {
                if (closing) {
                    return;
                }
                closing = true;
            } finally {
                order.unlock();
            }
            owner.release(AgentLog.this);
        }
    }

    /** The replica's log is closing: release this lease at the next round, without waiting here. */
    void closeForShutdown() {
        order.lock();
        try {
            closing = true;
        } finally {
            order.unlock();
        }
    }

    /** Waits until the release was committed, the lease lost, or {@code timeoutNanos} passed. */
    boolean awaitReleased(long timeoutNanos) {
        long deadline = System.nanoTime() + timeoutNanos;
        return withLock(() -> awaitUnderLock(() -> released || lostReason != null, deadline));
    }

    /** A wait that holds the order lock and may be interrupted; it answers whether what it waited for holds. */
    @FunctionalInterface
    private interface LockedWait {
        boolean await() throws InterruptedException;
    }

    /** Runs {@code wait} holding the order lock; an interrupt answers false and keeps the thread's flag. */
    private boolean withLock(LockedWait wait) {
        order.lock();
        try {
            return wait.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            order.unlock();
        }
    }

    /**
     * Waits, holding the order lock, until {@code done} holds or {@code deadline} passes, nudging the
     * worker; each commit, renewal, loss or close signals.
     *
     * @return whether {@code done} holds
     */
    private boolean awaitUnderLock(BooleanSupplier done, long deadline) throws InterruptedException {
        while (!done.getAsBoolean()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            owner.wake();
            changed.awaitNanos(left);
        }
        return true;
    }

    /** Writes appended and not committed, for the figures and the warnings. */
    int pendingWrites() {
        order.lock();
        try {
            return (int) pending.stream().filter(p -> !p.kept).count();
        } finally {
            order.unlock();
        }
    }

    String idPrefix() {
        return idPrefix;
    }
}
