package dev.memlife.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.WriteStatus;
import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownReport;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.gateway.AgentLease;
import dev.memlife.gateway.GatewayStopReport;
import dev.memlife.store.CountingDataSource;
import dev.memlife.store.JdbcMemoryProvider;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Issue 12's second benchmark: {@code agents} agents against PostgreSQL through one HikariCP pool
 * of {@code poolSize} connections, all writing at once. One gateway; each agent a manager that uses
 * one store built on the pool; one platform thread per agent, all started on a latch, each leasing
 * its agent, reading its session ({@code prefetchAll}), writing {@code turnsEach} turns and reading
 * again. Then the gateway stops (CLOSE: every conversation ends, a session-end row each). Checked:
 * no connection error (no getConnection refused, no failed write, no failure in any thread), every
 * write stored exactly once (by write id, against its manager's report), one session end per agent,
 * each naming its own agent's session; the most connections the pool had active at once, sampled.
 * The tables get a prefix of their own and are dropped afterwards.
 */
final class PostgresPool {

    static final String URL = System.getenv("MEMLIFE_PG_URL");
    static final String USER = System.getenv().getOrDefault("MEMLIFE_PG_USER", "");
    static final String PASSWORD = System.getenv().getOrDefault("MEMLIFE_PG_PASSWORD", "");

    /**
     * One run's figures. {@code sessionEndSessions} is how many distinct sessions the session ends
     * name: one per agent, now that the manager hands the store the session that ended (a shared
     * store used to record the session last initialized by any manager, so all named one).
     */
    record Result(int agents, int poolSize, int turnsEach, long accepted, long stored, long distinctIds,
            long sessionEnds, long sessionEndSessions, int connectionErrors, long failedWrites, int threadFailures,
            int peakActive, int peakBorrowedByStore, double seconds, String accounting) {
        boolean ok() {
            return connectionErrors == 0 && failedWrites == 0 && threadFailures == 0 && accounting.startsWith("ok");
        }

        double writesPerSecond() {
            return accepted / seconds;
        }
    }

    private PostgresPool() {}

    /** Why the benchmark cannot run here, or null if it can. */
    static String unavailable() {
        if (URL == null || URL.isBlank()) {
            return "MEMLIFE_PG_URL is not set (set MEMLIFE_PG_URL, MEMLIFE_PG_USER and MEMLIFE_PG_PASSWORD, or source "
                    + ".ci/postgres.sh and call memlife_pg_start)";
        }
        try (Connection c = java.sql.DriverManager.getConnection(URL, USER, PASSWORD)) {
            return c.isValid(5) ? null : "the connection to PostgreSQL is not valid";
        } catch (Exception e) {
            return "PostgreSQL is unreachable: " + e.getMessage();
        }
    }

    static Result run(int agents, int poolSize, int turnsEach) throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(URL);
        config.setUsername(USER);
        config.setPassword(PASSWORD);
        config.setMaximumPoolSize(poolSize);
        config.setPoolName("bench-pg-pool");
        String prefix = "bench_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12) + "_";
        try (HikariDataSource pool = new HikariDataSource(config)) {
            CountingDataSource counted = new CountingDataSource(pool);
            JdbcMemoryProvider store = JdbcMemoryProvider.builder(counted).tablePrefix(prefix).build();
            AgentGateway gateway = AgentGateway.builder().name("pg").maxAgents(agents).build();
            HikariPoolMXBean mx = pool.getHikariPoolMXBean();
            AtomicInteger peakActive = new AtomicInteger();
            AtomicInteger threadFailures = new AtomicInteger();
            AtomicLong accepted = new AtomicLong();
            List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
            CountDownLatch ready = new CountDownLatch(agents);
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int a = 0; a < agents; a++) {
                String key = "agent-" + a;
                Thread t = new Thread(() -> {
                    ready.countDown();
                    try {
                        go.await();
                        try (AgentLease lease = gateway.acquire(key, k -> {
                            MemoryManager m = MemoryManager.builder().name(k).build();
                            m.useProvider(store);
                            return AgentMemory.create(m);
                        })) {
                            MemoryManager m = lease.agent().memory();
                            m.initializeAll(key);
                            m.prefetchAll("hello", key);
                            for (int i = 0; i < turnsEach; i++) {
                                if (m.syncAll("turn " + i + " of " + key, StoreDrainRace.ASSISTANT, key)) {
                                    accepted.incrementAndGet();
                                }
                            }
                            if (!m.flushPending(Duration.ofMinutes(2))) {
                                throw new IllegalStateException(key + ": flush not met");
                            }
                            m.prefetchAll("again", key);
                        }
                    } catch (Throwable e) {
                        threadFailures.incrementAndGet();
                        failures.add(e);
                    }
                }, "bench-pg-agent-" + a);
                t.setDaemon(true);
                threads.add(t);
                t.start();
            }
            ready.await();
            Thread sampler = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    peakActive.accumulateAndGet(mx.getActiveConnections(), Math::max);
                    try {
                        Thread.sleep(2); // sleep-ok: sampling interval
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "bench-pg-sampler");
            sampler.setDaemon(true);
            sampler.start();
            long start = System.nanoTime();
            go.countDown();
            for (Thread t : threads) {
                t.join();
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            GatewayStopReport stop = gateway.stop(Duration.ofMinutes(1));
            sampler.interrupt();
            sampler.join();
            Map<String, DrainReport> drains = new HashMap<>();
            for (Map.Entry<String, TeardownReport> e : stop.closed().entrySet()) {
                e.getValue().drainReport().ifPresent(d -> drains.put(e.getKey(), d));
            }
            long failed = 0;
            for (DrainReport d : drains.values()) {
                failed += d.failed() + d.abandoned() + d.stillRunning();
            }
            String accounting;
            long stored;
            long distinct;
            long ends;
            long endSessions;
            try (Connection c = pool.getConnection()) {
                Set<String> ids = new HashSet<>();
                List<String> problems = new ArrayList<>();
                stored = 0;
                try (PreparedStatement ps = c.prepareStatement("SELECT write_id, session_id FROM " + prefix + "turns");
                        ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        stored++;
                        String id = rs.getString(1);
                        DrainReport d = drains.get(rs.getString(2));
                        if (!ids.add(id)) {
                            problems.add("write " + id + " stored twice");
                        }
                        if (d == null || d.statusOf(id) != WriteStatus.DELIVERED) {
                            problems.add("write " + id + " of " + rs.getString(2) + " is not delivered in its report");
                        }
                    }
                }
                distinct = ids.size();
                try (Statement s = c.createStatement();
                        ResultSet rs = s.executeQuery("SELECT COUNT(DISTINCT session_id), COUNT(*) FROM " + prefix
                                + "session_ends")) {
                    rs.next();
                    ends = rs.getLong(2);
                    endSessions = rs.getLong(1);
                    // One row per agent, each naming the agent's own session (its key).
                    if (ends != agents || endSessions != agents) {
                        problems.add(ends + " session ends naming " + endSessions + " sessions, for " + agents
                                + " agents");
                    }
                }
                long delivered = drains.values().stream().mapToLong(DrainReport::delivered).sum();
                if (drains.size() != agents || delivered != accepted.get() || stored != accepted.get()) {
                    problems.add(drains.size() + " agents closed, " + delivered + " delivered, " + stored
                            + " stored, of " + accepted.get() + " accepted");
                }
                for (Throwable f : failures.subList(0, Math.min(3, failures.size()))) {
                    problems.add("agent thread failed: " + f);
                }
                accounting = problems.isEmpty()
                        ? "ok: " + stored + " writes, each stored once under its manager's id and delivered in its report"
                        : problems.size() + " problems, first: " + problems.subList(0, Math.min(5, problems.size()));
                try (Statement s = c.createStatement()) {
                    s.execute("DROP TABLE IF EXISTS " + prefix + "turns, " + prefix + "session_ends, " + prefix
                            + "schema_version");
                }
            }
            store.close();
            return new Result(agents, poolSize, turnsEach, accepted.get(), stored, distinct, ends, endSessions,
                    counted.refused(),
                    failed, threadFailures.get(), peakActive.get(), counted.peak(), seconds, accounting);
        }
    }
}
