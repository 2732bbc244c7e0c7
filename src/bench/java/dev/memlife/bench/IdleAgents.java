package dev.memlife.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.WriteStatus;
import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownMode;
import dev.memlife.agent.TeardownReport;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.gateway.AgentLease;
import dev.memlife.gateway.GatewayStopReport;
import dev.memlife.store.CountingDataSource;
import dev.memlife.store.JdbcMemoryProvider;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import javax.management.ObjectName;
import org.sqlite.SQLiteDataSource;

/**
 * Many live agents, then idle (issue 12's first benchmark): {@code agents} agents on one gateway,
 * each a manager that uses one shared SQLite store built on a pool (HikariCP over a counting
 * DataSource, so both the connections borrowed by the store and the physical ones are counted),
 * each writing {@code turnsEach} turns through a lease; then nothing for {@code idle}. Measured:
 * platform threads named {@code memlife-*} alive {@code idle} after the last write (and the most
 * alive at once while the agents were writing, sampled every few milliseconds), connections open,
 * heap retained per idle agent (used heap after full collections, the difference over the agents,
 * divided; the classes that grew most come from two class histograms), and every write accounted
 * for by id in the database and in its manager's report after the gateway stops (in RELEASE mode:
 * 10,000 session ends would only time the database's commits).
 */
final class IdleAgents {

    /** One run's figures. */
    record Result(int agents, int turnsEach, int poolSize, int memlifeThreadsAfterIdle, int peakMemlifeThreads,
            List<String> threadNamesAfterIdle, long pendingAtLastWrite, long pendingAfterIdle, int peakBorrowed, int peakPhysical, int openBorrowedAfterIdle,
            int refused, double bytesPerAgent, List<Map<String, Object>> topClasses, long accepted, long stored,
            String accounting, int memlifeThreadsAfterStop, double setupSeconds, int commitsForTheWrites) {}

    private IdleAgents() {}

    static Result run(int agents, int turnsEach, Duration idle, int poolSize) throws Exception {
        Path dir = Files.createTempDirectory("memlife-idle-agents");
        SQLiteDataSource sqlite = new SQLiteDataSource();
        sqlite.setUrl("jdbc:sqlite:" + dir.resolve("agents.db").toAbsolutePath());
        CountingDataSource physical = new CountingDataSource(sqlite);
        HikariConfig config = new HikariConfig();
        config.setDataSource(physical);
        config.setMaximumPoolSize(poolSize);
        config.setPoolName("bench-sqlite-pool");
        HikariDataSource pool = new HikariDataSource(config);
        CountingDataSource borrowed = new CountingDataSource(pool);
        ThreadSampler sampler = new ThreadSampler();
        try {
            JdbcMemoryProvider store = JdbcMemoryProvider.builder(borrowed).build();
            warmUp(store);
            Map<String, Long> before = histogram();
            int commitsBefore = borrowed.commits();
            long baseline = Heap.usedAfterGc();

            AgentGateway gateway = AgentGateway.builder().name("idle").maxAgents(agents).stopMode(TeardownMode.RELEASE)
                    .build();
            sampler.start();
            long accepted = 0;
            long start = System.nanoTime();
            for (int a = 0; a < agents; a++) {
                String key = "agent-" + a;
                try (AgentLease lease = gateway.acquire(key, k -> {
                    MemoryManager m = MemoryManager.builder().name(k).build();
                    m.useProvider(store);
                    return AgentMemory.create(m);
                })) {
                    for (int t = 0; t < turnsEach; t++) {
                        accepted += lease.agent().memory().syncAll("turn " + t + " of " + key, "reply " + t, key)
                                ? 1 : 0;
                    }
                }
            }
            long lastWrite = System.nanoTime();
            long pendingAtLastWrite = pending(gateway, agents);
            flushAll(gateway, agents);
            int commits = borrowed.commits() - commitsBefore;
            double setupSeconds = (lastWrite - start) / 1e9;
            long left = idle.toNanos() - (System.nanoTime() - lastWrite);
            if (left > 0) {
                Thread.sleep(left / 1_000_000, (int) (left % 1_000_000)); // sleep-ok: the idle time is what is measured
            }
            List<String> names = memlifeThreads();
            sampler.stop();
            long pendingAfterIdle = pending(gateway, agents);
            int openAfterIdle = borrowed.open();
            long used = Heap.usedAfterGc();
            Map<String, Long> after = histogram();
            double perAgent = (used - baseline) / (double) agents;
            List<Map<String, Object>> top = growth(before, after, agents);

            GatewayStopReport stop = gateway.stop(Duration.ofMinutes(2));
            Map<String, DrainReport> drains = new HashMap<>();
            for (Map.Entry<String, TeardownReport> e : stop.closed().entrySet()) {
                e.getValue().drainReport().ifPresent(d -> drains.put(e.getKey(), d));
            }
            String accounting = account(store, drains, agents, turnsEach, stop);
            long stored = store.countTurns();
            store.close();
            int afterStop = awaitNoMemlifeThreads(Duration.ofSeconds(5));
            return new Result(agents, turnsEach, poolSize, names.size(), sampler.peak(),
                    names.subList(0, Math.min(10, names.size())), pendingAtLastWrite, pendingAfterIdle, borrowed.peak(), physical.peak(), openAfterIdle,
                    borrowed.refused() + physical.refused(), perAgent, top, accepted, stored, accounting, afterStop,
                    setupSeconds, commits);
        } finally {
            sampler.stop();
            pool.close();
            Files2.deleteTree(dir);
        }
    }

    /** Waits until every agent's writes are delivered (at once when they are). */
    private static void flushAll(AgentGateway gateway, int agents) {
        for (int a = 0; a < agents; a++) {
            gateway.peek("agent-" + a).ifPresent(agent -> agent.memory().flushPending(Duration.ofMinutes(1)));
        }
    }

    /** Writes accepted by the agents' managers and not yet delivered. */
    private static long pending(AgentGateway gateway, int agents) {
        long n = 0;
        for (int a = 0; a < agents; a++) {
            n += gateway.peek("agent-" + a).map(agent -> agent.memory().pendingWrites()).orElse(0L);
        }
        return n;
    }

    /** Loads and compiles the classes the agents use, so the baseline has them: 50 agents, stopped. */
    private static void warmUp(JdbcMemoryProvider store) {
        AgentGateway warm = AgentGateway.builder().name("warm-up").stopMode(TeardownMode.RELEASE).build();
        for (int a = 0; a < 50; a++) {
            try (AgentLease lease = warm.acquire("warm-" + a, k -> {
                MemoryManager m = MemoryManager.builder().name(k).build();
                m.useProvider(store);
                return AgentMemory.create(m);
            })) {
                lease.agent().memory().syncAll("warm-up turn", "reply", "warm-" + a);
            }
        }
        warm.stop(Duration.ofMinutes(1));
    }

    /** Every write of every agent: stored once under its manager's id, and delivered in its report. */
    private static String account(JdbcMemoryProvider store, Map<String, DrainReport> drains, int agents, int turnsEach,
            GatewayStopReport stop) throws Exception {
        List<String> problems = new ArrayList<>();
        if (drains.size() != agents) {
            problems.add("the stop closed " + drains.size() + " of " + agents + " agents: " + stop);
        }
        Map<String, boolean[]> seen = new HashMap<>();
        for (Map.Entry<String, DrainReport> e : drains.entrySet()) {
            DrainReport d = e.getValue();
            if (d.delivered() != turnsEach || d.failed() + d.abandoned() + d.stillRunning() > 0) {
                problems.add(e.getKey() + ": " + d);
            }
            seen.put(e.getKey(), new boolean[turnsEach + 1]);
        }
        long rows = 0;
        for (int a = 0; a < agents; a++) {
            String key = "agent-" + a;
            DrainReport d = drains.get(key);
            for (var t : store.turns(key)) {
                rows++;
                String id = t.writeId();
                long seq = Long.parseLong(id.substring(id.lastIndexOf(':') + 1));
                boolean[] s = seen.get(key);
                if (d == null || s == null || d.statusOf(id) != WriteStatus.DELIVERED) {
                    problems.add(key + ": stored write " + id + " is not delivered in its manager's report");
                } else if (seq < 1 || seq > turnsEach || s[(int) seq]) {
                    problems.add(key + ": write " + id + " stored twice or unknown");
                } else {
                    s[(int) seq] = true;
                    if (!t.userContent().equals("turn " + (seq - 1) + " of " + key)) {
                        problems.add(key + ": write " + id + " holds another write's contents");
                    }
                }
            }
        }
        for (Map.Entry<String, boolean[]> e : seen.entrySet()) {
            for (int seq = 1; seq <= turnsEach; seq++) {
                if (!e.getValue()[seq]) {
                    problems.add(e.getKey() + ": write " + seq + " is not in the database");
                }
            }
        }
        if (problems.isEmpty()) {
            return "ok: " + rows + " writes, each stored once under its manager's id and delivered in its report";
        }
        return problems.size() + " problems, first: " + problems.subList(0, Math.min(5, problems.size()));
    }

    /** Names of the live platform threads named memlife-*. */
    static List<String> memlifeThreads() {
        List<String> names = new ArrayList<>();
        for (Thread t : allThreads()) {
            if (t != null && t.isAlive() && t.getName().startsWith("memlife-")) {
                names.add(t.getName());
            }
        }
        names.sort(null);
        return names;
    }

    /** Every live thread, from the root thread group down; cheap enough to sample 10,000 threads often. */
    private static Thread[] allThreads() {
        ThreadGroup root = Thread.currentThread().getThreadGroup();
        while (root.getParent() != null) {
            root = root.getParent();
        }
        Thread[] threads = new Thread[root.activeCount() + 64];
        while (true) {
            int n = root.enumerate(threads, true);
            if (n < threads.length) {
                return java.util.Arrays.copyOf(threads, n);
            }
            threads = new Thread[threads.length * 2];
        }
    }

    private static int awaitNoMemlifeThreads(Duration timeout) throws InterruptedException {
        long end = System.nanoTime() + timeout.toNanos();
        int n;
        while ((n = memlifeThreads().size()) > 0 && System.nanoTime() < end) {
            Thread.sleep(50); // sleep-ok: polling threads that end on their own
        }
        return n;
    }

    /** Counts live memlife-* threads every few milliseconds, keeping the peak. */
    private static final class ThreadSampler implements Runnable {
        private final AtomicInteger peak = new AtomicInteger();
        private volatile boolean running;
        private Thread thread;

        void start() {
            running = true;
            thread = new Thread(this, "bench-thread-sampler");
            thread.setDaemon(true);
            thread.start();
        }

        void stop() throws InterruptedException {
            running = false;
            if (thread != null) {
                thread.join();
            }
        }

        int peak() {
            return peak.get();
        }

        @Override
        public void run() {
            while (running) {
                int n = 0;
                for (Thread t : allThreads()) {
                    if (t.getName().startsWith("memlife-")) {
                        n++;
                    }
                }
                peak.accumulateAndGet(n, Math::max);
                try {
                    Thread.sleep(5); // sleep-ok: sampling interval
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    /** Bytes per class of the live heap (the JVM's class histogram, which collects first). */
    static Map<String, Long> histogram() throws Exception {
        String out = (String) ManagementFactory.getPlatformMBeanServer().invoke(
                new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
                new Object[] {new String[0]}, new String[] {String[].class.getName()});
        Map<String, Long> bytes = new HashMap<>();
        for (String line : out.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 4 && f[0].endsWith(":")) {
                bytes.merge(f[3], Long.parseLong(f[2]), Long::sum);
            }
        }
        return bytes;
    }

    /** The classes whose live bytes grew most between the two histograms, per agent. */
    private static List<Map<String, Object>> growth(Map<String, Long> before, Map<String, Long> after, int agents) {
        List<Map.Entry<String, Long>> grown = new ArrayList<>();
        for (Map.Entry<String, Long> e : after.entrySet()) {
            long d = e.getValue() - before.getOrDefault(e.getKey(), 0L);
            if (d > 0) {
                grown.add(Map.entry(e.getKey(), d));
            }
        }
        grown.sort((x, y) -> Long.compare(y.getValue(), x.getValue()));
        List<Map<String, Object>> top = new ArrayList<>();
        for (Map.Entry<String, Long> e : grown.subList(0, Math.min(12, grown.size()))) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("class", e.getKey());
            m.put("bytesPerAgent", e.getValue() / (double) agents);
            top.add(m);
        }
        return top;
    }
}
