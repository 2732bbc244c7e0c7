package dev.memlife.bench;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.WriteStatus;
import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownMode;
import dev.memlife.agent.TeardownReport;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.gateway.AgentLease;
import dev.memlife.gateway.GatewayStopReport;
import dev.memlife.store.JdbcMemoryProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The gateway stop of issue 12: {@code agents} agents on one {@link AgentGateway}, each an {@link
 * AgentMemory} over its own {@link MemoryManager} that uses one shared SQLite {@link
 * JdbcMemoryProvider}, hold {@code agents * perAgent} queued writes in all (every writer held by a
 * {@link Gate} until the stop begins); then {@code gateway.stop(budget)}. Writes persisted per
 * second: see {@link Result#rowsPerSecond()}; a sampler watches the table for when the last write
 * is in it, since the stop goes on with session ends and shutdowns after that. Afterwards it waits
 * for the teardowns that went on past the deadline and accounts for every write by id: each row's
 * write id is its manager's and reported delivered (or still running at the deadline), each write
 * is stored at most once, and every write the database lacks is reported failed or abandoned.
 */
final class GatewayStopRace {

    /**
     * One run's figures. {@code allPersistedNanos} is when the last queued write was in the
     * database (sampled every {@value #SAMPLE_MILLIS} ms), or -1 if some were not when the stop
     * returned.
     */
    record Result(int agents, int queued, long persistedAtReturn, long stopNanos, long allPersistedNanos,
            GatewayStopReport report, long storedInTheEnd, Map<WriteStatus, Long> statuses, String accounting) {
        /**
         * Writes persisted per second: all of them over the time until the last was in the
         * database, if they all were before the stop returned (the stop then goes on with the
         * teardowns: session ends, shutdowns); else those in the database when it returned, over
         * its time.
         */
        double rowsPerSecond() {
            return rowsMeasured() / (nanosMeasured() / 1e9);
        }

        /** The rows the rate counts: all queued, or those in the database when the stop returned. */
        long rowsMeasured() {
            return allPersistedNanos > 0 ? queued : persistedAtReturn;
        }

        /** The time the rate counts: until the last write was in the database, or the stop's. */
        long nanosMeasured() {
            return allPersistedNanos > 0 ? allPersistedNanos : stopNanos;
        }
    }

    static final int SAMPLE_MILLIS = 5;

    private GatewayStopRace() {}

    static Result run(int agents, int perAgent, Duration budget, TeardownMode stopMode) throws Exception {
        Path dir = Files.createTempDirectory("memlife-gateway-stop");
        try {
            Path file = dir.resolve("gateway.db");
            JdbcMemoryProvider store = JdbcMemoryProvider.sqlite(file);
            Gate gate = new Gate("gateway-stop-writer");
            AgentGateway gateway = AgentGateway.builder().name("stop-race").maxAgents(agents).stopMode(stopMode)
                    .build();
            List<AgentMemory> all = new ArrayList<>(agents);
            for (int a = 0; a < agents; a++) {
                String key = "agent-" + a;
                try (AgentLease lease = gateway.acquire(key, k -> {
                    MemoryManager m = MemoryManager.builder().name(k).queueCapacity(perAgent).threadFactory(gate)
                            .build();
                    m.useProvider(store);
                    return AgentMemory.create(m);
                })) {
                    MemoryManager m = lease.agent().memory();
                    for (int i = 0; i < perAgent; i++) {
                        if (!m.syncAll("user message " + i + " of " + key, StoreDrainRace.ASSISTANT, key)) {
                            throw new IllegalStateException("write refused");
                        }
                    }
                    all.add(lease.agent());
                }
            }
            RowSampler sampler = new RowSampler(file, agents * (long) perAgent);
            long start = System.nanoTime();
            sampler.start(start);
            gate.open();
            GatewayStopReport report = gateway.stop(budget);
            long nanos = System.nanoTime() - start;
            long persisted = PlainJdbcLoop.countRows(file);
            long allPersisted = sampler.stop();
            // The teardowns past the deadline go on; wait for them before accounting and cleaning up.
            List<DrainReport> drains = new ArrayList<>(agents);
            for (AgentMemory agent : all) {
                Optional<TeardownReport> r = agent.awaitTeardown(Duration.ofMinutes(5));
                drains.add(r.orElseThrow(() -> new IllegalStateException(agent + " not torn down")).drainReport()
                        .orElseThrow());
            }
            store.close();
            Map<WriteStatus, Long> statuses = new EnumMap<>(WriteStatus.class);
            String accounting = account(file, all, drains, agents, perAgent, statuses);
            long stored = PlainJdbcLoop.countRows(file);
            return new Result(agents, agents * perAgent, persisted, nanos, allPersisted > 0 && allPersisted <= nanos
                    ? allPersisted : -1, report, stored, statuses, accounting);
        } finally {
            Files2.deleteTree(dir);
        }
    }

    /**
     * Checks every write by id against its manager's report and the database (one scan of the
     * table); returns "ok" or what is wrong, and counts the writes by status.
     */
    private static String account(Path file, List<AgentMemory> agents, List<DrainReport> drains, int n, int perAgent,
            Map<WriteStatus, Long> statuses) throws Exception {
        List<String> problems = new ArrayList<>();
        boolean[][] seen = new boolean[n][perAgent + 1];
        String[] prefixes = new String[n];
        long inDb = 0;
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath());
                PreparedStatement ps = c.prepareStatement("SELECT write_id, session_id, user_content FROM memlife_turns");
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                inDb++;
                String id = rs.getString(1);
                String key = rs.getString(2);
                int a = Integer.parseInt(key.substring("agent-".length()));
                if (a < 0 || a >= n || !agents.get(a).name().equals(key)) {
                    problems.add("write " + id + " of an unknown session " + key);
                    continue;
                }
                WriteStatus s = drains.get(a).statusOf(id);
                if (s != WriteStatus.DELIVERED && s != WriteStatus.STILL_RUNNING) {
                    problems.add(key + ": stored write " + id + " is " + s + " in its report");
                }
                int colon = id.lastIndexOf(':');
                long seq = Long.parseLong(id.substring(colon + 1));
                String p = id.substring(0, colon);
                if (prefixes[a] == null) {
                    prefixes[a] = p;
                } else if (!prefixes[a].equals(p)) {
                    problems.add(key + ": write " + id + " of another manager in its session");
                }
                if (seq < 1 || seq > perAgent || seen[a][(int) seq]) {
                    problems.add(key + ": write " + id + " stored twice or unknown");
                } else {
                    seen[a][(int) seq] = true;
                }
                // writes are numbered in the order they were handed over: seq i is "user message i-1"
                if (!rs.getString(3).equals("user message " + (seq - 1) + " of " + key)) {
                    problems.add(key + ": write " + id + " holds another write's contents");
                }
            }
        }
        for (int a = 0; a < n; a++) {
            DrainReport drain = drains.get(a);
            String key = agents.get(a).name();
            for (int seq = 1; seq <= perAgent; seq++) {
                if (seen[a][seq]) {
                    statuses.merge(WriteStatus.DELIVERED, 1L, Long::sum);
                    continue;
                }
                String prefix = prefixes[a] != null ? prefixes[a] : prefixOf(drain);
                WriteStatus s = prefix != null ? drain.statusOf(prefix + ':' + seq) : WriteStatus.UNKNOWN;
                statuses.merge(s, 1L, Long::sum);
                if (s != WriteStatus.FAILED && s != WriteStatus.ABANDONED) {
                    problems.add(key + ": write " + seq + " is not stored but " + s + " in its report");
                }
            }
            long reported = drain.delivered() + drain.failed() + drain.abandoned() + drain.stillRunning();
            if (reported != perAgent) {
                problems.add(key + ": its report accounts for " + reported + " of " + perAgent + " writes");
            }
        }
        if (problems.isEmpty()) {
            return "ok: " + inDb + " stored once each, the rest reported failed or abandoned by id";
        }
        return problems.size() + " problems, first: " + problems.subList(0, Math.min(5, problems.size()));
    }

    /** The write-id prefix of a manager none of whose writes is stored, from the ids its report lists. */
    private static String prefixOf(DrainReport drain) {
        for (List<String> ids : List.of(drain.abandonedWriteIds(), drain.failedWriteIds(), drain.stillRunningWriteIds())) {
            if (!ids.isEmpty()) {
                return ids.get(0).substring(0, ids.get(0).lastIndexOf(':'));
            }
        }
        return null;
    }

    /**
     * Watches the turns table from a connection of its own (WAL: it never blocks the writer) every
     * {@value #SAMPLE_MILLIS} ms, for when the row count (the largest id: rows are only added)
     * reaches a target.
     */
    private static final class RowSampler implements Runnable {
        private final Path file;
        private final long target;
        private volatile boolean running = true;
        private volatile long reachedNanos = -1;
        private long start;
        private Thread thread;

        RowSampler(Path file, long target) {
            this.file = file;
            this.target = target;
        }

        void start(long startNanos) {
            start = startNanos;
            thread = new Thread(this, "bench-row-sampler");
            thread.setDaemon(true);
            thread.start();
        }

        /** Stops sampling; when the target was reached, in nanoseconds from the start, or -1. */
        long stop() throws InterruptedException {
            running = false;
            thread.join();
            return reachedNanos;
        }

        @Override
        public void run() {
            try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath());
                    PreparedStatement ps = c.prepareStatement("SELECT COALESCE(MAX(id), 0) FROM memlife_turns")) {
                while (running) {
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        if (rs.getLong(1) >= target) {
                            reachedNanos = System.nanoTime() - start;
                            return;
                        }
                    }
                    Thread.sleep(SAMPLE_MILLIS); // sleep-ok: sampling interval
                }
            } catch (Exception e) {
                throw new IllegalStateException("sampling the rows of " + file + " failed", e);
            }
        }
    }
}
