package dev.memlife.bench;

import dev.memlife.Durability;
import dev.memlife.MemoryManager;
import dev.memlife.spool.SharedLog;
import dev.memlife.spool.SharedLogFigures;
import dev.memlife.testing.GatedProvider;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The shared write-ahead log on PostgreSQL ({@link SharedLog}), against what an application would
 * write by hand to make each write durable in the same database. Both run on the PostgreSQL named
 * by {@code MEMLIFE_PG_URL} ({@link PostgresPool#URL}, its user and password), each run on tables
 * with a fresh prefix, dropped afterwards.
 *
 * <ul>
 *   <li>{@link #sharedLog}: one replica (one {@code SharedLog}), {@code producers} agents, one
 *       manager each on {@code log.agent(key)} with the counting sink as provider, one producer
 *       thread per manager: {@code pipeline} {@code syncAll} calls, then one {@code awaitDurable};
 *       a write counts once {@code awaitDurable} confirmed it (committed in PostgreSQL by the
 *       replica's group commit).
 *   <li>{@link #insertPerWrite}: {@code producers} threads, each on its own JDBC connection
 *       (autocommit off), one {@code INSERT} of one row and one {@code commit} per write, into a
 *       table with the shared log's columns, one row per write carrying the bytes the shared log
 *       stores for one write; a write counts once its commit returned.
 *   <li>{@link #latency}: {@code producers} threads, one agent each on one replica, each calling
 *       {@code syncAllDurable} one write at a time, back to back; the time of every call, from its
 *       start until the write was confirmed. The same producers on the per-write baseline, each
 *       {@code INSERT} and {@code commit} timed, for reference.
 * </ul>
 * The time of a throughput run goes from the barrier that starts the producers until the last one
 * has had its last write confirmed.
 */
final class SharedLogBench {

    /** The session of every write; the turn is {@link Contender}'s. */
    static final String SESSION = Contender.SESSION;

    /** One run's figures. */
    record Result(String contender, long writes, long nanos, long transactions, long committedWrites, String check) {
        double writesPerSecond() {
            return writes / (nanos / 1e9);
        }

        double transactionsPerSecond() {
            return transactions / (nanos / 1e9);
        }

        /** Writes per transaction, counting every write the transactions committed. */
        double writesPerTransaction() {
            return transactions == 0 ? 0 : (double) committedWrites / transactions;
        }
    }

    /** Percentiles of a run's samples, in nanoseconds. */
    record Percentiles(String what, int producers, long samples, double p50, double p99, double p999, double max,
            long[] sorted) {

        static Percentiles of(String what, int producers, long[] samples, int n) {
            if (n == 0) {
                throw new IllegalStateException(what + ": no samples");
            }
            long[] sorted = Arrays.copyOf(samples, n);
            Arrays.sort(sorted);
            return new Percentiles(what, producers, n, at(sorted, 0.50), at(sorted, 0.99), at(sorted, 0.999),
                    sorted[n - 1], sorted);
        }

        /** The percentiles of several runs' samples together. */
        static Percentiles pooled(List<Percentiles> runs) {
            long[] all = runs.stream().flatMapToLong(r -> Arrays.stream(r.sorted())).toArray();
            return of(runs.get(0).what(), runs.get(0).producers(), all, all.length);
        }

        /** The nearest-rank percentile. */
        private static double at(long[] sorted, double q) {
            int rank = (int) Math.ceil(q * sorted.length);
            return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
        }
    }

    /** One producer's loop: returns the writes it had confirmed when the deadline passed. */
    @FunctionalInterface
    private interface Producer {
        long run(int index, long deadline) throws Exception;
    }

    private SharedLogBench() {}

    static String unavailable() {
        return PostgresPool.unavailable();
    }

    /**
     * The server's version and the settings that decide what a commit costs: {@code fsync}, {@code
     * synchronous_commit}, {@code wal_sync_method}, {@code commit_delay}.
     */
    static Map<String, Object> server() throws SQLException {
        Map<String, Object> out = new LinkedHashMap<>();
        try (Connection c = connect(); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT name, setting FROM pg_settings WHERE name IN ('server_version', "
                        + "'fsync', 'synchronous_commit', 'wal_sync_method', 'commit_delay') ORDER BY name")) {
            while (rs.next()) {
                out.put(rs.getString(1), rs.getString(2));
            }
        }
        return out;
    }

    private static String prefix() {
        return "bench_sl_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12) + "_";
    }

    private static Connection connect() throws SQLException {
        return DriverManager.getConnection(PostgresPool.URL, PostgresPool.USER, PostgresPool.PASSWORD);
    }

    /** One replica on fresh tables, its agents and their managers. */
    private static final class Replica implements AutoCloseable {
        final String prefix = prefix();
        final SharedLog log;
        final List<MemoryManager> managers = new ArrayList<>();
        final List<CountingSink> sinks = new ArrayList<>();

        private boolean stopped;

        Replica(int agents, String name) throws SQLException {
            log = SharedLog.postgres(PostgresPool.URL).user(PostgresPool.USER).password(PostgresPool.PASSWORD)
                    .tablePrefix(prefix).replica(name).open();
            try {
                for (int a = 0; a < agents; a++) {
                    CountingSink sink = new CountingSink();
                    MemoryManager m = MemoryManager.builder().name(name + "-agent-" + a)
                            .spool(log.agent("agent-" + a)).queueCapacity(1 << 20)
                            .enqueueTimeout(Duration.ofMinutes(1)).build();
                    managers.add(m);
                    sinks.add(sink);
                    m.addProvider(SpoolThroughput.sinkProvider(sink));
                    m.replaySpool(); // nothing to replay on fresh tables; not left to the first write
                }
            } catch (RuntimeException e) {
                close();
                throw e;
            }
        }

        /** Stops the managers (each delivers what it holds and releases its lease); the writes the sinks got. */
        long stopManagers() {
            if (!stopped) {
                stopped = true;
                for (MemoryManager m : managers) {
                    m.stop(Duration.ofSeconds(30));
                }
            }
            return sinks.stream().mapToLong(CountingSink::count).sum();
        }

        /** Stops the managers, closes the log, drops its tables. */
        @Override
        public void close() throws SQLException {
            try {
                stopManagers();
                log.close();
            } finally {
                dropTables(prefix, "shared_log", "shared_log_leases");
            }
        }
    }

    private static void dropTables(String prefix, String... tables) throws SQLException {
        StringBuilder names = new StringBuilder();
        for (String t : tables) {
            names.append(names.length() == 0 ? "" : ", ").append(prefix).append(t);
        }
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + names);
        }
    }

    /**
     * The shared log: {@code producers} agents on one replica, each producer {@code pipeline}
     * {@code syncAll} calls, then one {@code awaitDurable}, for {@code time}.
     */
    static Result sharedLog(int producers, int pipeline, Duration time) throws Exception {
        try (Replica r = new Replica(producers, "bench-replica")) {
            SharedLogFigures before = r.log.figures();
            Result race = race("shared log, " + pipeline + " syncAll per awaitDurable", producers, time,
                    (index, deadline) -> {
                        MemoryManager m = r.managers.get(index);
                        long confirmed = 0;
                        while (System.nanoTime() - deadline < 0) {
                            for (int i = 0; i < pipeline; i++) {
                                if (!m.syncAll(Contender.USER, Contender.ASSISTANT, SESSION)) {
                                    throw new IllegalStateException("a write was rejected");
                                }
                            }
                            if (!m.awaitDurable(Duration.ofSeconds(30))) {
                                throw new IllegalStateException("not durable within 30 s");
                            }
                            confirmed += pipeline;
                        }
                        return confirmed;
                    });
            SharedLogFigures after = r.log.figures();
            long commits = after.groupCommits() - before.groupCommits();
            long committed = after.committed() - before.committed();
            long delivered = r.stopManagers();
            if (committed < race.writes() || delivered < race.writes()) {
                throw new IllegalStateException("shared log: " + committed + " writes committed and " + delivered
                        + " delivered for " + race.writes() + " confirmed");
            }
            return new Result(race.contender(), race.writes(), race.nanos(), commits, committed, "ok: " + committed
                    + " writes committed and " + delivered + " delivered for " + race.writes() + " confirmed");
        }
    }

    /**
     * The bytes the shared log stores for one of the benchmark's writes (its sealed record): what
     * each baseline row carries. Made by a shared log on fresh tables, read back from its table.
     */
    static synchronized byte[] recordOfOneWrite() throws Exception {
        if (recordOfOneWrite == null) {
            recordOfOneWrite = readRecordOfOneWrite();
        }
        return recordOfOneWrite.clone();
    }

    /** Read once per run by {@link #recordOfOneWrite}: both parts of the area use it. */
    private static byte[] recordOfOneWrite;

    private static byte[] readRecordOfOneWrite() throws Exception {
        String prefix = prefix();
        SharedLog log = SharedLog.postgres(PostgresPool.URL).user(PostgresPool.USER).password(PostgresPool.PASSWORD)
                .tablePrefix(prefix).replica("bench-record").open();
        try {
            MemoryManager m = MemoryManager.builder().name("bench-record").spool(log.agent("agent-0")).build();
            // holds the deliveries until the row is read: a delivered row is deleted by the next commit
            GatedProvider held = new GatedProvider("held");
            m.addProvider(held);
            try {
                for (int i = 0; i < 10; i++) {
                    m.syncAll(Contender.USER, Contender.ASSISTANT, SESSION);
                }
                if (!m.awaitDurable(Duration.ofSeconds(30))) {
                    throw new IllegalStateException("not durable within 30 s");
                }
                try (Connection c = connect(); Statement s = c.createStatement();
                        ResultSet rs = s.executeQuery("SELECT records, last_seq - first_seq + 1 FROM " + prefix
                                + "shared_log WHERE NOT kept ORDER BY first_seq LIMIT 1")) {
                    if (!rs.next()) {
                        throw new IllegalStateException("the shared log's table holds no row");
                    }
                    byte[] records = rs.getBytes(1);
                    return Arrays.copyOf(records, (int) (records.length / rs.getLong(2)));
                }
            } finally {
                held.open();
                m.stop(Duration.ofSeconds(30));
            }
        } finally {
            log.close();
            dropTables(prefix, "shared_log", "shared_log_leases");
        }
    }

    /**
     * The baseline's table: the shared log's columns (agent, position, epoch, kept, id prefix,
     * accepted_at, records), one row per write, keyed by agent and position as the shared log's rows.
     */
    private static void createPerWriteTable(String table) throws SQLException {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + table + " (agent TEXT NOT NULL, seq BIGINT NOT NULL, epoch BIGINT NOT NULL, "
                    + "kept BOOLEAN NOT NULL, id_prefix TEXT NOT NULL, accepted_at TIMESTAMPTZ NOT NULL DEFAULT now(), "
                    + "records BYTEA NOT NULL, PRIMARY KEY (agent, seq))");
        }
    }

    private static String insertPerWrite(String table) {
        return "INSERT INTO " + table + " (agent, seq, epoch, kept, id_prefix, records) VALUES (?, ?, 1, false, ?, ?)";
    }

    /**
     * The baseline: {@code producers} threads, a JDBC connection each, autocommit off, one {@code
     * INSERT} and one {@code commit} per write into a table with the shared log's columns.
     */
    static Result insertPerWrite(int producers, Duration time, byte[] record) throws Exception {
        String prefix = prefix();
        String table = prefix + "per_write";
        createPerWriteTable(table);
        try {
            List<Connection> connections = new ArrayList<>();
            for (int p = 0; p < producers; p++) {
                Connection c = connect();
                c.setAutoCommit(false);
                connections.add(c);
            }
            Result race;
            try {
                race = race("one INSERT and commit per write", producers, time, (index, deadline) -> {
                    Connection c = connections.get(index);
                    String agent = "agent-" + index;
                    String idPrefix = UUID.randomUUID().toString();
                    long confirmed = 0;
                    try (PreparedStatement insert = c.prepareStatement(insertPerWrite(table))) {
                        while (System.nanoTime() - deadline < 0) {
                            insert.setString(1, agent);
                            insert.setLong(2, confirmed + 1);
                            insert.setString(3, idPrefix);
                            insert.setBytes(4, record);
                            insert.executeUpdate();
                            c.commit();
                            confirmed++;
                        }
                    }
                    return confirmed;
                });
            } finally {
                for (Connection c : connections) {
                    c.close();
                }
            }
            long rows;
            try (Connection c = connect(); Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT count(*) FROM " + table)) {
                rs.next();
                rows = rs.getLong(1);
            }
            if (rows != race.writes()) {
                throw new IllegalStateException("the per-write table holds " + rows + " rows of " + race.writes());
            }
            return new Result(race.contender(), race.writes(), race.nanos(), race.writes(), race.writes(),
                    "ok: " + rows + " rows, one per confirmed write");
        } finally {
            dropTables(prefix, "per_write");
        }
    }

    /**
     * {@code syncAllDurable} latency: {@code producers} agents on one replica, each producer one
     * write at a time, back to back, for {@code time} after a warm-up second.
     */
    static Percentiles latency(int producers, Duration time) throws Exception {
        try (Replica r = new Replica(producers, "bench-latency")) {
            return sample("syncAllDurable, confirmed committed in PostgreSQL", producers, time, index -> {
                Durability d = r.managers.get(index).syncAllDurable(Contender.USER, Contender.ASSISTANT, SESSION,
                        List.of(), Duration.ofSeconds(30));
                if (d != Durability.DURABLE) {
                    throw new IllegalStateException("syncAllDurable returned " + d);
                }
            });
        }
    }

    /** The baseline's latency: each producer's {@code INSERT} and {@code commit}, one write at a time. */
    static Percentiles insertLatency(int producers, Duration time, byte[] record) throws Exception {
        String prefix = prefix();
        String table = prefix + "per_write";
        createPerWriteTable(table);
        List<Connection> connections = new ArrayList<>();
        List<PreparedStatement> inserts = new ArrayList<>();
        try {
            for (int p = 0; p < producers; p++) {
                Connection c = connect();
                c.setAutoCommit(false);
                connections.add(c);
                inserts.add(c.prepareStatement(insertPerWrite(table)));
            }
            long[] seqs = new long[producers];
            String idPrefix = UUID.randomUUID().toString();
            return sample("one INSERT and commit", producers, time, index -> {
                PreparedStatement insert = inserts.get(index);
                insert.setString(1, "agent-" + index);
                insert.setLong(2, ++seqs[index]);
                insert.setString(3, idPrefix);
                insert.setBytes(4, record);
                insert.executeUpdate();
                connections.get(index).commit();
            });
        } finally {
            for (Connection c : connections) {
                c.close();
            }
            dropTables(prefix, "per_write");
        }
    }

    /** One timed call of a producer. */
    @FunctionalInterface
    private interface Call {
        void run(int index) throws Exception;
    }

    /** Every call of {@code producers} threads, back to back, timed after a warm-up second. */
    private static Percentiles sample(String what, int producers, Duration time, Call call) throws Exception {
        Producers.Latencies latencies = new Producers.Latencies(producers);
        Producers.run(what, producers, "sharedlog-latency-", (index, startedAt) -> {
            long warmUntil = startedAt + 1_000_000_000L;
            long end = warmUntil + time.toNanos();
            while (true) {
                long t0 = System.nanoTime();
                if (t0 >= end) {
                    break;
                }
                call.run(index);
                long t1 = System.nanoTime();
                if (t0 >= warmUntil) {
                    latencies.add(index, t1 - t0);
                }
            }
        });
        long[] all = latencies.all();
        return Percentiles.of(what, producers, all, all.length);
    }

    /** Runs the producers from one barrier until {@code time} has passed; the writes they confirmed. */
    private static Result race(String contender, int threads, Duration time, Producer producer) throws Exception {
        AtomicLong confirmed = new AtomicLong();
        long nanos = Producers.run(contender, threads, "sharedlog-producer-",
                (index, startedAt) -> confirmed.addAndGet(producer.run(index, startedAt + time.toNanos())));
        return new Result(contender, confirmed.get(), nanos, 0, 0, "");
    }
}
