package dev.memlife.spool;

import static java.util.Objects.requireNonNull;

import dev.memlife.Turn;
import dev.memlife.internal.Attempts;
import dev.memlife.internal.Checks;
import dev.memlife.internal.WriteAheadLog;
import dev.memlife.store.JdbcBuilder;
import java.io.ByteArrayOutputStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A write-ahead log shared by every replica of a service, on PostgreSQL: the durable spool for
 * deployments whose replicas have no disk of their own, or whose disk does not come back with
 * them. Each agent's writes go to its own log ({@link #agent}), held by one replica at a time
 * under a lease; an accepted write is durable once the replica's next group commit has committed
 * it, so the replica may then die at any point: another replica takes the agent over and delivers
 * what it left, in its order and with its ids.
 *
 * <pre>{@code
 * SharedLog log = SharedLog.postgres(url).user(user).password(password)
 *         .adopt(agent -> gateway.acquire(agent, factory).close()) // delivers a dead replica's backlog
 *         .open();
 * // the gateway's factory
 * MemoryManager manager = MemoryManager.builder().spool(log.agent(agent)).build();
 * manager.addProvider(store);
 * manager.replaySpool(); // the writes the agent's last holder left undelivered, first
 * }</pre>
 *
 * <h2>Leases and fencing</h2>
 *
 * {@link #agent} claims the agent's lease (owner, epoch, expiry): at once if it is free, released
 * or expired, else it waits, up to the claim timeout, for the holder to let it go. Claiming bumps
 * the epoch. The replica renews the leases it holds in its group commits, and at least every
 * third of the lease; every append, delivery mark and renewal names the epoch it holds, in a
 * transaction that locks the lease row, so once another replica has claimed the agent nothing the
 * old holder sends is accepted ({@link LeaseLostException}). The writer delivers to the providers
 * only while the lease is valid by this replica's own clock, which keeps running while a process
 * is frozen: a replica that wakes from a freeze longer than its lease delivers nothing more.
 *
 * <h2>Takeover</h2>
 *
 * A replica that dies stops renewing; its leases expire. Each replica's sweeper looks every sweep
 * interval for expired leases with undelivered writes and hands each such agent to the adopter
 * ({@link Builder#adopt}): typically {@code gateway.acquire(agent, factory).close()}, which builds
 * the agent's manager on {@link #agent}, replays the backlog to its providers and lets the agent
 * go again. So a dead replica's writes are delivered within the lease plus one sweep interval,
 * whether or not its sessions come back; a session that does come back, to any replica, waits for
 * or performs the same takeover when its agent is acquired.
 *
 * <p>Thread-safe. Close it after the managers on it (the gateway) have stopped: what is still
 * pending is committed and every lease released.
 *
 * <p>One idea past 500 lines: one replica's hold on the log. Claiming an agent (the lease, the
 * epoch, the kept rows, the replay), releasing it, the figures and the inspection all read the
 * replica's one connection, lease clock and counters, and its builder (a third of the file) sets
 * them. The group commit is {@link SharedLogWorker}'s, the SQL {@link SharedLogSql}'s, and one
 * agent's pending writes {@link AgentLog}'s.
 */
public final class SharedLog implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(SharedLog.class);
    /** The first wait after a failed try on the database; the next ones double it. */
    static final Duration FIRST_WAIT = Duration.ofMillis(50);

    /** Connects to the database. */
    @FunctionalInterface
    interface Connector {
        Connection connect() throws SQLException;
    }

    final SharedLogSql sql;
    final String replica;
    final long leaseNanos;
    final long marginNanos;
    final long sweepNanos;
    /** The waits between tries to claim an agent, and to read its writes for a replay: from 50 ms, doubling. */
    private final Attempts claimWaits;
    private final Attempts replayWaits;
    private final long claimTimeoutNanos;
    private final long closeTimeoutNanos;
    private final long maxPendingBytes;
    private final Connector connector;
    final Consumer<String> adopter;
    private final String description;

    /** The agents this replica holds, by agent. */
    final ConcurrentHashMap<String, AgentLog> held = new ConcurrentHashMap<>();
    private final SharedLogWorker worker;

    final AtomicLong groupCommits = new AtomicLong();
    final AtomicLong committedWrites = new AtomicLong();
    private final AtomicLong replayed = new AtomicLong();
    private final AtomicLong takeovers = new AtomicLong();
    final AtomicLong adoptions = new AtomicLong();
    final AtomicLong fencedLeases = new AtomicLong();
    final AtomicLong databaseFailures = new AtomicLong();
    final AtomicLong appended = new AtomicLong();
    final AtomicLong fencedWrites = new AtomicLong();
    private volatile Duration lastTakeoverLag = Duration.ZERO;

    private SharedLog(Builder b) throws SQLException {
        this.sql = new SharedLogSql(b.tablePrefix());
        this.replica = b.replica;
        this.leaseNanos = b.lease.toNanos();
        this.marginNanos = leaseNanos / 5;
        this.sweepNanos = b.sweepInterval.toNanos();
        this.claimWaits = Attempts.backoff(FIRST_WAIT, min(Duration.ofMillis(400), b.sweepInterval));
        this.replayWaits = Attempts.backoff(FIRST_WAIT, min(Duration.ofMillis(800), b.sweepInterval));
        this.claimTimeoutNanos = Checks.saturatedNanos(b.claimTimeout != null ? b.claimTimeout
                : b.lease.plus(b.sweepInterval.multipliedBy(2)));
        this.closeTimeoutNanos = b.closeTimeout.toNanos();
        this.maxPendingBytes = b.maxPendingBytes;
        this.adopter = b.adopter;
        this.connector = b.connector(b.lease);
        this.description = "'" + sql.log + "' (replica " + replica + ")";
        createTables();
        this.worker = new SharedLogWorker(this);
        worker.start();
    }

    /**
     * A builder for a shared log in the PostgreSQL database at {@code url}.
     *
     * @param url a JDBC URL, {@code jdbc:postgresql://host:port/database}
     * @return the builder
     * @throws IllegalArgumentException if {@code url} does not start with {@code jdbc:}
     */
    public static Builder postgres(String url) {
        return new Builder(url);
    }

    /**
     * A builder for a shared log in the PostgreSQL database {@code dataSource} connects to. Give it
     * a socket timeout (pgjdbc's {@code socketTimeout}) so a connection the network dropped
     * silently is given up.
     *
     * @param dataSource the database
     * @return the builder
     */
    public static Builder postgres(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /**
     * Claims {@code agent}'s lease and opens its log, for one manager: waits, up to the claim
     * timeout, while another live replica holds it. What the agent's last holder left undelivered
     * is replayed by the manager's {@code replaySpool()}, before its first new write.
     *
     * @param agent the agent's key, as the gateway's
     * @return the agent's log, holding its lease
     * @throws LeaseHeldException if another replica held the lease past the claim timeout
     * @throws IllegalStateException if the database could not be reached within the claim timeout,
     *     or this log is closed
     */
    public AgentLog agent(String agent) {
        Checks.notBlank(agent, "agent");
        if (worker.stopping()) {
            throw new IllegalStateException("shared log " + description + " is closed");
        }
        // the adopter tries once: if another replica holds the agent already, it is not an orphan any more
        long deadline = System.nanoTime() + (SharedLogWorker.isAdopterThread() ? 0 : claimTimeoutNanos);
        awaitOtherManager(agent, deadline);
        SQLException failure = null;
        for (int attempt = 1; ; attempt++) {
            try {
                AgentLog log = claim(agent, deadline);
                if (log != null) {
                    AgentLog before = held.put(agent, log);
                    if (before != null) {
                        before.lost("claimed again by this replica at epoch " + log.epoch());
                    }
                    return log;
                }
            } catch (SQLException e) {
                failure = e;
            } catch (LeaseHeldException e) {
                if (System.nanoTime() - deadline >= 0) {
                    throw e;
                }
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new IllegalStateException("shared log " + description + ": could not claim agent '" + agent
                        + "' within " + Duration.ofNanos(claimTimeoutNanos).toMillis() + " ms"
                        + (failure != null ? ": " + failure.getMessage() : ""), failure);
            }
            pause(Checks.saturatedNanos(claimWaits.waitAfter(attempt)));
        }
    }

    /**
     * Waits while another manager of this replica holds {@code agent}'s log: one that is letting it
     * go (a stopped or evicted agent) releases it in a moment; one that is running (two first
     * acquires of one agent at once) keeps it, and claiming over it would fence the manager in use.
     *
     * @throws LeaseHeldException if the other manager still holds it at the deadline
     */
    private void awaitOtherManager(String agent, long deadline) {
        for (AgentLog other = held.get(agent); other != null && !other.leaseLost(); other = held.get(agent)) {
            if (other.isReleased()) {
                return;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new LeaseHeldException("shared log " + description + ": agent '" + agent + "' is held by "
                        + "another manager of this replica (epoch " + other.epoch() + "); an agent has one manager "
                        + "at a time: acquire it once, or stop the other first");
            }
            if (other.isClosing()) {
                other.awaitReleased(left);
            } else {
                pause(Math.min(left, TimeUnit.MILLISECONDS.toNanos(20)));
            }
        }
    }

    /**
     * One attempt to claim: null if the row appeared under a concurrent insert (try again at
     * once); throws {@link LeaseHeldException} while another live replica holds the lease.
     */
    private AgentLog claim(String agent, long deadline) throws SQLException {
        try (Connection c = connector.connect()) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.execute("SET LOCAL lock_timeout = " + Math.max(100, TimeUnit.NANOSECONDS.toMillis(leaseNanos)));
            }
            long start = System.nanoTime();
            long epoch;
            long delivered;
            boolean takeover = false;
            long expiredMillis = 0;
            try (PreparedStatement lock = c.prepareStatement(sql.lockLease())) {
                lock.setString(1, agent);
                try (ResultSet r = lock.executeQuery()) {
                    if (!r.next()) {
                        try (PreparedStatement insert = c.prepareStatement(sql.insertLease())) {
                            insert.setString(1, agent);
                            insert.setString(2, replica);
                            insert.setLong(3, TimeUnit.NANOSECONDS.toMillis(leaseNanos));
                            if (insert.executeUpdate() == 0) {
                                c.rollback();
                                return null;
                            }
                        }
                        c.commit();
                        return new AgentLog(this, agent, 1, 0, 0, start + leaseNanos - marginNanos);
                    }
                    String owner = r.getString(1);
                    boolean expired = r.getBoolean(3);
                    boolean released = r.getBoolean(4);
                    delivered = r.getLong(5);
                    expiredMillis = r.getLong(6);
                    if (!expired && !released && !owner.equals(replica)) {
                        c.rollback();
                        throw new LeaseHeldException("shared log " + description + ": agent '" + agent
                                + "' is held by replica " + owner + " at epoch " + r.getLong(2) + " for "
                                + -expiredMillis + " ms more");
                    }
                    takeover = expired && !released && !owner.equals(replica);
                }
            }
            try (PreparedStatement take = c.prepareStatement(sql.takeLease())) {
                take.setString(1, replica);
                take.setLong(2, TimeUnit.NANOSECONDS.toMillis(leaseNanos));
                take.setString(3, agent);
                try (ResultSet r = take.executeQuery()) {
                    r.next();
                    epoch = r.getLong(1);
                }
            }
            long last = delivered;
            try (PreparedStatement max = c.prepareStatement(sql.lastSeq())) {
                max.setString(1, agent);
                try (ResultSet r = max.executeQuery()) {
                    if (r.next() && r.getObject(1) != null) {
                        last = Math.max(last, r.getLong(1));
                    }
                }
            }
            last = moveKeptToTail(c, agent, epoch, last);
            c.commit();
            AgentLog log = new AgentLog(this, agent, epoch, last, delivered, start + leaseNanos - marginNanos);
            if (takeover) {
                takeovers.incrementAndGet();
                log.takeover(Math.max(0, expiredMillis), start);
                LOG.info("shared log {}: took over agent '{}' at epoch {}, {} ms after its lease expired", description,
                        agent, epoch, expiredMillis);
            }
            return log;
        }
    }

    /**
     * Moves the writes providers failed (kept rows) to the end of the agent's log as ordinary
     * writes, in the claim's transaction, so this holder's replay delivers them once more.
     *
     * @return the new last position
     */
    private long moveKeptToTail(Connection c, String agent, long epoch, long last) throws SQLException {
        List<Object[]> rows = new ArrayList<>();
        try (PreparedStatement kept = c.prepareStatement(sql.keptRows())) {
            kept.setString(1, agent);
            try (ResultSet r = kept.executeQuery()) {
                while (r.next()) {
                    rows.add(new Object[] {r.getString(2), r.getBytes(3)});
                }
            }
        }
        if (rows.isEmpty()) {
            return last;
        }
        try (PreparedStatement delete = c.prepareStatement(sql.deleteKept());
                PreparedStatement insert = c.prepareStatement(sql.insertRows())) {
            delete.setString(1, agent);
            delete.executeUpdate();
            for (Object[] row : rows) {
                byte[] records = (byte[]) row[1];
                int n = recordOffsets(records).size();
                insert.setString(1, agent);
                insert.setLong(2, last + 1);
                insert.setLong(3, last + n);
                insert.setLong(4, epoch);
                insert.setBoolean(5, false);
                insert.setString(6, (String) row[0]);
                insert.setBytes(7, records);
                insert.addBatch();
                last += n;
            }
            insert.executeBatch();
        }
        return last;
    }

    /**
     * Hands {@code log}'s writes after {@code mark} to {@code into}, in their order.
     *
     * @return how many were handed over
     */
    long replay(AgentLog log, long mark, WriteAheadLog.Replayer into) {
        long[] handed = {0, mark}; // writes handed over, and the position of the last one
        long deadline = System.nanoTime() + claimTimeoutNanos;
        try {
            for (int attempt = 1; ; attempt++) {
                try {
                    replayFrom(log, handed, into);
                    return handed[0];
                } catch (SQLException e) {
                    // a lost connection or a restart: read on after the last write handed over
                    databaseFailures.incrementAndGet();
                    if (System.nanoTime() - deadline >= 0) {
                        throw new IllegalStateException("shared log " + description + ": could not read agent '"
                                + log.agent() + "''s writes after position " + handed[1] + " to replay them ("
                                + handed[0] + " replayed; the rest stays in the log for the next claim): "
                                + e.getMessage(), e);
                    }
                    pause(Checks.saturatedNanos(replayWaits.waitAfter(attempt)));
                }
            }
        } finally {
            replayed.addAndGet(handed[0]);
            Duration lag = log.replayFinished();
            if (lag != null) {
                lastTakeoverLag = lag;
            }
        }
    }

    /** Hands over the writes after {@code handed[1]}, counting them in {@code handed[0]}; stops if {@code into} says so. */
    private void replayFrom(AgentLog log, long[] handed, WriteAheadLog.Replayer into) throws SQLException {
        long after = handed[1];
        try (Connection c = connector.connect()) {
            c.setAutoCommit(false);
            try (PreparedStatement q = c.prepareStatement(sql.replay())) {
                q.setFetchSize(64);
                q.setString(1, log.agent());
                q.setLong(2, after);
                try (ResultSet r = q.executeQuery()) {
                    while (r.next()) {
                        long seq = r.getLong(1);
                        String prefix = r.getString(2);
                        byte[] records = r.getBytes(3);
                        for (int at : recordOffsets(records)) {
                            if (seq > after) {
                                int length = SpoolRecord.getInt(records, at);
                                Turn turn = SpoolRecord.decode(prefix, records, at + SegmentFormat.RECORD_OVERHEAD,
                                        length);
                                if (!into.accept(turn, seq)) {
                                    return;
                                }
                                handed[0]++;
                                handed[1] = seq;
                            }
                            seq++;
                        }
                    }
                }
            }
            c.rollback();
        }
    }

    /** The offsets of the records in a row's {@code records}, one after another. */
    static List<Integer> recordOffsets(byte[] records) {
        List<Integer> offsets = new ArrayList<>();
        for (int at = 0; at < records.length; at += SegmentFormat.RECORD_OVERHEAD + SpoolRecord.getInt(records, at)) {
            offsets.add(at);
        }
        return offsets;
    }

    /** Concatenates records for one row. */
    static byte[] concat(List<AgentLog.Pending> records, int from, int to) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = from; i < to; i++) {
            out.writeBytes(records.get(i).record());
        }
        return out.toByteArray();
    }

    /** Stops renewing {@code log}'s lease: commits what it holds, writes its mark and releases the lease. */
    void release(AgentLog log) {
        wake();
        // while the database is out of reach, the manager's stop does not wait for it: the worker releases
        // the lease when it can, and until then the lease expires by itself
        long wait = worker.failing() ? 0 : closeTimeoutNanos;
        if (!log.awaitReleased(wait)) {
            LOG.warn("shared log {}: agent '{}' is not released yet (the database is out of reach); its lease is "
                    + "released when the database answers, or expires by itself; {} writes appended and not committed "
                    + "were never confirmed durable", description, log.agent(), log.pendingWrites());
        }
    }

    /** Removes a released or lost log from the held agents. */
    void forget(AgentLog log) {
        held.remove(log.agent(), log);
    }

    /** {@return the figures of this replica's log now} */
    public SharedLogFigures figures() {
        long pending = 0;
        Collection<AgentLog> logs = held.values();
        for (AgentLog log : logs) {
            pending += log.pendingWrites();
        }
        return new SharedLogFigures(logs.size(), appended.get(), committedWrites.get(), pending, groupCommits.get(),
                replayed.get(), takeovers.get(), adoptions.get(), fencedWrites.get(), fencedLeases.get(),
                databaseFailures.get(), lastTakeoverLag);
    }

    /**
     * One agent's lease and backlog, as {@link #inspect} reads them.
     *
     * @param agent the agent
     * @param owner the replica that holds or last held the lease
     * @param epoch the lease's epoch
     * @param expiresAt when the lease ends (or ended)
     * @param live whether it has not ended
     * @param released whether its holder let it go
     * @param deliveredPosition the position up to which its writes were delivered
     * @param lastPosition the position of its last write
     * @param keptRows rows of writes a provider failed, delivered again at the next claim
     */
    public record Lease(String agent, String owner, long epoch, Instant expiresAt, boolean live, boolean released,
            long deliveredPosition, long lastPosition, long keptRows) {

        /** {@return the writes appended and not yet marked delivered} */
        public long backlog() {
            return Math.max(0, lastPosition - deliveredPosition);
        }
    }

    /**
     * Reads every agent's lease and backlog from a shared log's tables: what the CLI's {@code
     * shared-log} command lists.
     *
     * @param connection a connection to the database
     * @param tablePrefix the log's table prefix
     * @return the leases, by agent
     * @throws SQLException if the tables cannot be read
     */
    public static List<Lease> inspect(Connection connection, String tablePrefix) throws SQLException {
        requireNonNull(connection, "connection");
        SharedLogSql sql = new SharedLogSql(requireNonNull(tablePrefix, "tablePrefix"));
        List<Lease> leases = new ArrayList<>();
        try (Statement s = connection.createStatement(); ResultSet r = s.executeQuery(sql.inspect())) {
            while (r.next()) {
                leases.add(new Lease(r.getString(1), r.getString(2), r.getLong(3), r.getTimestamp(4).toInstant(),
                        r.getBoolean(5), r.getBoolean(6), r.getLong(7), r.getLong(8), r.getLong(9)));
            }
        }
        return leases;
    }

    /** {@return the replica name this log claims leases as} */
    public String replica() {
        return replica;
    }

    /**
     * Commits what is pending, releases every lease this replica still holds, and stops the
     * worker, within the close timeout. Close the managers on it first (stop the gateway): a
     * manager still running on a released agent can no longer append or deliver.
     */
    @Override
    public void close() {
        worker.stop(closeTimeoutNanos);
    }

    /**
     * {@return the log's tables, this replica's name and its settings, such as {@code
     * SharedLog'memlife_shared_log' (replica r1; lease 5000 ms, sweep 1000 ms, claim 7000 ms, close
     * 10000 ms, at most 67108864 bytes pending per agent)}}
     */
    @Override
    public String toString() {
        return "SharedLog'" + sql.log + "' (replica " + replica + "; lease " + leaseNanos / 1_000_000 + " ms, sweep "
                + sweepNanos / 1_000_000 + " ms, claim " + claimTimeoutNanos / 1_000_000 + " ms, close "
                + closeTimeoutNanos / 1_000_000 + " ms, at most " + maxPendingBytes + " bytes pending per agent)";
    }

    // ---- for the agent logs and the worker ----

    String describe() {
        return description;
    }

    long maxPendingBytes() {
        return maxPendingBytes;
    }

    long groupCommits() {
        return groupCommits.get();
    }

    void wake() {
        worker.wake();
    }

    void renewNow() {
        worker.renewNow();
    }

    Connection connect() throws SQLException {
        return connector.connect();
    }

    private void createTables() throws SQLException {
        try (Connection c = connector.connect()) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.execute(sql.createLock());
                for (String ddl : sql.create()) {
                    s.execute(ddl);
                }
                s.execute(sql.recordsLz4());
            }
            c.commit();
        }
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    static void pause(long nanos) {
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the shared log", e);
        }
    }

    /** Builds a {@link SharedLog}. */
    public static final class Builder extends JdbcBuilder<Builder> {

        /** The default lease: 5 s. */
        public static final Duration DEFAULT_LEASE = Duration.ofSeconds(5);
        /** The default sweep interval: 1 s. */
        public static final Duration DEFAULT_SWEEP_INTERVAL = Duration.ofSeconds(1);
        /** The default bound on the bytes appended and not yet committed per agent: 64 MiB. */
        public static final long DEFAULT_MAX_PENDING_BYTES = 64L << 20;

        private String replica = defaultReplica();
        private Duration lease = DEFAULT_LEASE;
        private Duration sweepInterval = DEFAULT_SWEEP_INTERVAL;
        private Duration claimTimeout;
        private Duration closeTimeout = Duration.ofSeconds(10);
        private long maxPendingBytes = DEFAULT_MAX_PENDING_BYTES;
        private Consumer<String> adopter;

        private Builder(String url) {
            super(url);
        }

        private Builder(DataSource dataSource) {
            super(dataSource);
        }

        /**
         * How long a lease lasts without renewal; default 5 s. A replica that dies or freezes is
         * taken over at the earliest this long after its last renewal.
         *
         * @param lease the lease; at least 1 s
         * @return this builder
         */
        public Builder lease(Duration lease) {
            requireNonNull(lease, "lease");
            if (lease.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("lease must be at least 1 s, was " + lease.toMillis() + " ms");
            }
            this.lease = lease;
            return this;
        }

        /**
         * How often the sweeper looks for expired leases with undelivered writes; default 1 s.
         *
         * @param sweepInterval the interval; positive
         * @return this builder
         */
        public Builder sweepInterval(Duration sweepInterval) {
            this.sweepInterval = Checks.positive(sweepInterval, "sweepInterval");
            return this;
        }

        /**
         * How long {@link SharedLog#agent} waits for another replica's lease; default the lease
         * plus two sweep intervals.
         *
         * @param claimTimeout the wait; positive
         * @return this builder
         */
        public Builder claimTimeout(Duration claimTimeout) {
            this.claimTimeout = Checks.positive(claimTimeout, "claimTimeout");
            return this;
        }

        /**
         * How long releasing an agent, and closing the log, wait for the database; default 10 s.
         *
         * @param closeTimeout the wait; positive
         * @return this builder
         */
        public Builder closeTimeout(Duration closeTimeout) {
            this.closeTimeout = Checks.positive(closeTimeout, "closeTimeout");
            return this;
        }

        /**
         * The most bytes one agent may have appended and not yet committed; a write beyond it is
         * refused (the database is slow or out of reach). Default 64 MiB.
         *
         * @param maxPendingBytes the bound; positive
         * @return this builder
         */
        public Builder maxPendingBytes(long maxPendingBytes) {
            if (maxPendingBytes <= 0) {
                throw new IllegalArgumentException("maxPendingBytes must be positive, was " + maxPendingBytes);
            }
            this.maxPendingBytes = maxPendingBytes;
            return this;
        }

        /**
         * This replica's name in the leases; default the host name, the process id and a random
         * suffix, unique per process.
         *
         * @param replica the name
         * @return this builder
         */
        public Builder replica(String replica) {
            this.replica = Checks.notBlank(replica, "replica");
            return this;
        }

        /**
         * What the sweeper does with an agent whose lease expired with writes undelivered (its
         * replica died, or let it go before delivering): called on the sweeper's own thread, one
         * agent at a time. It should build the agent's manager on {@link SharedLog#agent}, replay
         * and let it go: {@code gateway.acquire(agent, factory).close()}. Without an adopter, such
         * writes wait for the agent's next acquire.
         *
         * @param adopter takes the agent's key
         * @return this builder
         */
        public Builder adopt(Consumer<String> adopter) {
            this.adopter = requireNonNull(adopter, "adopter");
            return this;
        }

        /**
         * Creates the tables if they are missing and starts the replica's worker.
         *
         * @return the log
         * @throws IllegalStateException if the database cannot be reached or the tables created
         */
        public SharedLog open() {
            try {
                return new SharedLog(this);
            } catch (SQLException e) {
                throw new IllegalStateException("could not open the shared log in " + target()
                        + " with table prefix '" + tablePrefix() + "': " + e.getMessage(), e);
            }
        }

        private Connector connector(Duration lease) {
            Properties p = credentials();
            if (dataSource() != null) {
                return dataSource()::getConnection;
            }
            long seconds = Math.max(10, lease.toSeconds() * 2);
            p.setProperty("socketTimeout", Long.toString(seconds));
            p.setProperty("connectTimeout", Long.toString(seconds));
            p.setProperty("ApplicationName", "memlife shared log");
            String url = url();
            return () -> DriverManager.getConnection(url, p);
        }

        private static String defaultReplica() {
            String host;
            try {
                host = java.net.InetAddress.getLocalHost().getHostName();
            } catch (java.io.IOException e) {
                host = "host";
            }
            return host + "-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 8);
        }
    }
}
