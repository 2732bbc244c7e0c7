package dev.memlife.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import dev.memlife.MemoryManager;
import dev.memlife.agent.TeardownMode;
import dev.memlife.session.SessionCommitTracker;
import java.time.Duration;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * Runs the benchmark suite and writes {@code target/bench/results.json}: every figure with its peer
 * and ratio, and whether each target of the performance issue is met. Run it with
 * {@code mvn -q -Pbench test-compile exec:exec} (quick) or add {@code -Dbench.args=--full}.
 */
public final class BenchMain {

    private final boolean full;
    private final List<String> only;
    private final Map<String, Object> results = new LinkedHashMap<>();
    private final List<Map<String, Object>> targets = new ArrayList<>();
    private final List<String> table = new ArrayList<>();

    private BenchMain(boolean full, List<String> only) {
        this.full = full;
        this.only = only;
    }

    public static void main(String[] given) throws Exception {
        // The bench profile passes -Dbench.args as one argument: "--full --only=service" is two options.
        String[] args = String.join(" ", given).trim().split("\\s+");
        boolean full = List.of(args).contains("--full");
        if (List.of(args).contains("--help")) {
            System.out.println("usage: BenchMain [--quick|--full] [--only=hot,latency,flush,memory,shutdown,drain,service]\n"
                    + "  --quick  the whole suite in a few minutes on 2 cores (default)\n"
                    + "  --full   more forks and iterations: tighter error bars\n"
                    + "  --only   run just these sections (for working on one figure); service is the many-agents\n"
                    + "           section of issue 12, also runnable in parts: storedrain, gatewaystop, pgpool, idleagents");
            return;
        }
        List<String> only = List.of();
        for (String arg : args) {
            if (arg.startsWith("--only=")) {
                only = List.of(arg.substring("--only=".length()).split(","));
            }
        }
        new BenchMain(full, only).run();
    }

    private void run() throws Exception {
        long start = System.nanoTime();
        results.put("mode", full ? "full" : "quick");
        results.put("machine", Machine.describe());
        if (wanted("hot")) {
            hotPath();
        }
        if (wanted("latency")) {
            latency();
        }
        if (wanted("flush")) {
            flush();
        }
        if (wanted("memory")) {
            memory();
        }
        if (wanted("shutdown")) {
            shutdownRace();
        }
        if (wanted("drain")) {
            sessionDrain();
        }
        if (wanted("service") || only.contains("storedrain")) {
            storeDrain();
        }
        if (wanted("service") || only.contains("gatewaystop")) {
            gatewayStop();
        }
        if (wanted("service") || only.contains("pgpool")) {
            postgresPool();
        }
        if (wanted("service") || only.contains("idleagents")) {
            idleAgents();
        }
        results.put("targets", targets);
        results.put("suiteSeconds", (System.nanoTime() - start) / 1e9);
        Path out = Path.of("target", "bench", "results.json");
        Files.createDirectories(out.getParent());
        Files.writeString(out, Json.write(results));
        System.out.println();
        System.out.println("memlife benchmarks (" + (full ? "full" : "quick") + ") on " + Machine.summary());
        table.forEach(System.out::println);
        System.out.println();
        for (Map<String, Object> t : targets) {
            System.out.printf("%-4s %s: %s (target %s)%n", (Boolean) t.get("met") ? "MET" : "MISS", t.get("name"),
                    t.get("value"), t.get("target"));
        }
        System.out.println("\nwrote " + out.toAbsolutePath());
    }

    // ---- sections ----------------------------------------------------------------------------

    private void hotPath() throws RunnerException {
        Collection<RunResult> runs = jmh(HotPathBenchmark.class.getSimpleName());
        List<Map<String, Object>> figures = new ArrayList<>();
        List<Map<String, Object>> ratios = new ArrayList<>();
        table.add("hot path, writes/s delivered end to end (20k writes per op, same no-op sink):");
        for (String producers : List.of("1", "2")) {
            Map<String, Double> rate = new LinkedHashMap<>();
            for (RunResult r : runs) {
                if (producers.equals(r.getParams().getParam("producers"))) {
                    double micros = r.getPrimaryResult().getScore();
                    rate.put(r.getParams().getParam("contender"), HotPathBenchmark.WRITES / micros * 1e6);
                }
            }
            StringBuilder line = new StringBuilder("  " + producers + " producer(s):");
            for (Map.Entry<String, Double> e : rate.entrySet()) {
                figures.add(entry("producers", Integer.parseInt(producers), "contender", e.getKey(),
                        "writesPerSecond", e.getValue()));
                line.append(String.format("  %s %,.0f", e.getKey(), e.getValue()));
            }
            table.add(line.toString());
            double memlife = rate.get("memlife");
            StringBuilder ratioLine = new StringBuilder("    memlife ÷");
            for (String peer : List.of("executor", "logback", "otel")) {
                double ratio = memlife / rate.get(peer);
                ratios.add(entry("producers", Integer.parseInt(producers), "peer", peer, "ratio", ratio));
                ratioLine.append(String.format("  %s %.2fx", peer, ratio));
            }
            table.add(ratioLine.toString());
            target("hot path vs newSingleThreadExecutor, " + producers + " producer(s)", memlife / rate.get("executor"),
                    ">= 2.0x", memlife / rate.get("executor") >= 2.0);
            target("hot path vs Logback AsyncAppender, " + producers + " producer(s)", memlife / rate.get("logback"),
                    ">= 1.0x", memlife / rate.get("logback") >= 1.0);
        }
        results.put("hotPath", figures);
        results.put("hotPathRatios", ratios);
    }

    private void latency() throws RunnerException {
        RunResult r = jmh(LatencyBenchmark.class.getSimpleName()).iterator().next();
        var stats = r.getPrimaryResult().getStatistics();
        double p50 = stats.getPercentile(50);
        double p99 = stats.getPercentile(99);
        double p999 = stats.getPercentile(99.9);
        results.put("syncAllLatencyBehind1msProvider", entry("p50Nanos", p50, "p99Nanos", p99, "p999Nanos", p999,
                "samples", stats.getN()));
        table.add(String.format("syncAll latency behind a 1 ms provider: p50 %.0f ns, p99 %.0f ns, p99.9 %.0f ns",
                p50, p99, p999));
        target("p99 syncAll behind a 1 ms provider", p99 / 1000.0 + " µs", "< 10 µs", p99 < 10_000);
    }

    private void flush() throws RunnerException {
        double idle = 0;
        double queued = 0;
        for (RunResult r : jmh(FlushBenchmark.class.getSimpleName())) {
            if (r.getParams().getBenchmark().endsWith("idleFlush")) {
                idle = r.getPrimaryResult().getScore();
            } else {
                queued = r.getPrimaryResult().getScore();
            }
        }
        results.put("flushPending", entry("idleNanos", idle, "with1000QueuedNanos", queued));
        table.add(String.format("flushPending: idle %.1f ns; with 1,000 queued %.0f ns", idle, queued));
        target("idle flushPending", idle + " ns", "< 1 µs", idle < 1_000);
    }

    private void memory() throws InterruptedException {
        int n = 1_000_000;
        double perWrite = QueuedWriteFootprint.bytesPerQueuedWrite(n);
        results.put("memory", entry("queuedWrites", n, "bytesPerQueuedWrite", perWrite,
                "method", "used heap after 5 System.gc() calls, difference over 1,000,000 queued writes sharing one payload"));
        table.add(String.format("memory: %.1f bytes retained per queued write (beyond its payload)", perWrite));
        target("bytes per queued write", perWrite, "<= 150", perWrite <= 150);
        double perSession = DirtySessionFootprint.bytesPerDirtySession(n);
        results.put("sessionMemory", entry("dirtySessions", n, "bytesPerDirtySession", perSession,
                "method", "used heap after 5 System.gc() calls, difference over 1,000,000 dirty sessions, ids made beforehand"));
        table.add(String.format("memory: %.1f bytes retained per dirty tracked session", perSession));
        target("bytes per dirty session", perSession, "<= 300", perSession <= 300);
    }

    private void sessionDrain() {
        int sessions = 10_000;
        long commitMillis = 5;
        System.out.println("running the session drain (" + sessions + " sessions x " + commitMillis + " ms) ...");
        double parallel = SessionDrainRace.parallel(sessions, commitMillis);
        double serial = SessionDrainRace.oneAtATime(sessions, commitMillis);
        double ratio = serial / parallel;
        results.put("sessionDrain", entry("dirtySessions", sessions, "commitMillis", commitMillis,
                "memlifeDrainSeconds", parallel, "peer", "one-at-a-time drain (the reference web UI)",
                "peerSeconds", serial, "ratio", ratio,
                "drainParallelism", SessionCommitTracker.Builder.DEFAULT_DRAIN_PARALLELISM));
        table.add(String.format("session drain, %,d dirty sessions x %d ms commits: memlife %.2f s vs one at a time "
                + "%.2f s (%.1fx)", sessions, commitMillis, parallel, serial, ratio));
        target("session drain vs one-at-a-time", ratio, ">= 10x", ratio >= 10);
    }

    private void shutdownRace() throws Exception {
        Duration budget = Duration.ofSeconds(5);
        System.out.println("running the shutdown race (4 x " + budget.toSeconds() + " s) ...");
        // The issue's scenario. Batching usually persists every queued write before the deadline,
        // and then the ratio measures the 200,000, not batching: it is reported, not the target.
        Map<String, Object> issueScenario = shutdownRace(200_000, budget);
        // Enough queued that both runs are still writing at the deadline: writes persisted within
        // the budget, uncapped. This is the figure the target is checked against.
        Map<String, Object> deadlineBound = shutdownRace(1_000_000, budget);
        results.put("shutdownRace", entry("budgetSeconds", budget.toSeconds(), "peer",
                "the same SQLite store with maxBatchSize 1", "queued200k", issueScenario, "queued1m", deadlineBound));
        double ratio = (Double) deadlineBound.get("ratio");
        target("writes persisted within the shutdown budget, batched vs batch size 1 (both still writing at the "
                + "deadline)", ratio, ">= 20x", ratio >= 20);
    }

    private Map<String, Object> shutdownRace(int turns, Duration budget) throws Exception {
        ShutdownRace.Result batched = ShutdownRace.run(turns, MemoryManager.Builder.DEFAULT_MAX_BATCH_SIZE, budget);
        ShutdownRace.Result single = ShutdownRace.run(turns, 1, budget);
        double ratio = batched.persisted() / (double) Math.max(1, single.persisted());
        table.add(String.format("shutdown race, %,d turns queued, %d s budget: %,d persisted batched (in %,d ms) vs "
                + "%,d one per transaction (%.1fx)", turns, budget.toSeconds(), batched.persisted(),
                batched.report().elapsed().toMillis(), single.persisted(), ratio));
        return entry("queuedTurns", turns, "persistedBatched", batched.persisted(),
                "persistedBatchSize1", single.persisted(), "ratio", ratio,
                "batchedFinishedEverything", batched.report().complete(),
                "reportBatched", batched.report().toString(), "reportBatchSize1", single.report().toString());
    }

    // ---- many agents, one service (issue 12) -------------------------------------------------

    /**
     * One manager's drain into SQLite against the plain JDBC loop, the same rows into the same
     * schema (issue 12, part 7). Rounds alternate which runs first; the figure is the ratio of the
     * pooled rates (all rows over all time, each side).
     */
    private void storeDrain() throws Exception {
        int turns = full ? 500_000 : 200_000;
        int rounds = full ? 7 : 5;
        System.out.println("running the store drain vs the plain JDBC loop (" + rounds + " rounds x " + turns
                + " rows each) ...");
        StoreDrainRace.memlife(50_000); // warm-up of both paths, not counted
        StoreDrainRace.plain(50_000);
        List<Map<String, Object>> perRound = new ArrayList<>();
        double memlifeSeconds = 0;
        double plainSeconds = 0;
        List<Double> ratios = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            double m;
            double p;
            if (r % 2 == 0) {
                m = StoreDrainRace.memlife(turns);
                p = StoreDrainRace.plain(turns);
            } else {
                p = StoreDrainRace.plain(turns);
                m = StoreDrainRace.memlife(turns);
            }
            memlifeSeconds += turns / m;
            plainSeconds += turns / p;
            ratios.add(m / p);
            perRound.add(entry("memlifeRowsPerSecond", m, "plainRowsPerSecond", p, "ratio", m / p));
        }
        double memlife = rounds * turns / memlifeSeconds;
        double plain = rounds * turns / plainSeconds;
        double ratio = memlife / plain;
        results.put("storeDrainVsPlainLoop", entry("rows", turns, "rounds", rounds, "memlifeRowsPerSecond", memlife,
                "plainRowsPerSecond", plain, "ratio", ratio, "medianRoundRatio", median(ratios), "perRound", perRound,
                "peer", "plain JDBC loop: one prepared INSERT, executeBatch and commit every "
                        + PlainJdbcLoop.ROWS_PER_TRANSACTION + " rows, WAL, synchronous=FULL, same schema and rows"));
        table.add(String.format("store drain, one manager, %,d queued rows into SQLite: memlife %,.0f rows/s vs plain "
                + "JDBC loop %,.0f rows/s (%.2fx; rounds %s)", turns, memlife, plain, ratio, ratios(ratios)));
        target("one manager's drain into SQLite vs the plain JDBC loop, rows/s", ratio, ">= 0.9x", ratio >= 0.9);
    }

    /**
     * The gateway stop of issue 12: 1,000 agents, 1,000,000 queued writes, one shared SQLite store, a
     * 5 s stop, against the plain loop for 5 s into the same schema, run just before and just after
     * each stop (their mean is the round's peer, which evens out a drift of the machine).
     */
    private void gatewayStop() throws Exception {
        int agents = 1_000;
        int perAgent = 1_000;
        Duration budget = Duration.ofSeconds(5);
        int rounds = full ? 5 : 3;
        System.out.println("running the gateway stop (" + agents + " agents, " + agents * perAgent + " queued writes, "
                + budget.toSeconds() + " s) vs the plain JDBC loop, " + rounds + " rounds ...");
        GatewayStopRace.run(200, 500, budget, TeardownMode.CLOSE); // warm-up, not counted
        StoreDrainRace.plainFor(agents, perAgent, Duration.ofSeconds(1));
        List<Map<String, Object>> perRound = new ArrayList<>();
        List<Double> ratios = new ArrayList<>();
        double memlifeRows = 0;
        double memlifeSeconds = 0;
        double plainRows = 0;
        double plainSeconds = 0;
        boolean accounted = true;
        String accounting = "";
        for (int r = 0; r < rounds; r++) {
            PlainJdbcLoop.Result before = StoreDrainRace.plainFor(agents, perAgent, budget);
            GatewayStopRace.Result g = GatewayStopRace.run(agents, perAgent, budget, TeardownMode.CLOSE);
            PlainJdbcLoop.Result after = StoreDrainRace.plainFor(agents, perAgent, budget);
            double plain = (before.rows() + after.rows()) / ((before.nanos() + after.nanos()) / 1e9);
            double ratio = g.rowsPerSecond() / plain;
            ratios.add(ratio);
            memlifeRows += g.rowsMeasured();
            memlifeSeconds += g.nanosMeasured() / 1e9;
            plainRows += before.rows() + after.rows();
            plainSeconds += (before.nanos() + after.nanos()) / 1e9;
            accounted &= g.accounting().startsWith("ok");
            accounting = g.accounting();
            perRound.add(entry("persistedWhenStopReturned", g.persistedAtReturn(), "stopSeconds", g.stopNanos() / 1e9,
                    "allPersistedAfterSeconds", g.allPersistedNanos() > 0 ? g.allPersistedNanos() / 1e9 : null,
                    "memlifeRowsPerSecond", g.rowsPerSecond(), "plainRowsPerSecondBefore", before.rowsPerSecond(),
                    "plainRowsPerSecondAfter", after.rowsPerSecond(), "ratio", ratio,
                    "agentsClosedWithinStop", g.report().closed().size(),
                    "agentsNotFinishedAtDeadline", g.report().notFinished().size(),
                    "storedInTheEnd", g.storedInTheEnd(), "writesByStatus", g.statuses().toString(),
                    "accounting", g.accounting()));
            System.out.printf("  round %d: memlife %,d rows in %.2f s (%,.0f/s; the stop returned after %.2f s with %,d); "
                    + "plain %,.0f/s before, %,.0f/s after; %.2fx; %s%n", r + 1, g.rowsMeasured(),
                    g.nanosMeasured() / 1e9, g.rowsPerSecond(), g.stopNanos() / 1e9, g.persistedAtReturn(),
                    before.rowsPerSecond(), after.rowsPerSecond(), ratio, g.accounting());
        }
        double memlife = memlifeRows / memlifeSeconds;
        double plain = plainRows / plainSeconds;
        double ratio = memlife / plain;
        results.put("gatewayStopVsPlainLoop", entry("agents", agents, "queuedWrites", agents * perAgent,
                "budgetSeconds", budget.toSeconds(), "stopMode", "CLOSE", "rounds", rounds,
                "memlifeRowsPerSecond", memlife, "plainRowsPerSecond", plain, "ratio", ratio,
                "medianRoundRatio", median(ratios), "perRound", perRound,
                "method", "writes persisted per second: if every queued write was in the database before gateway.stop "
                        + "returned, all of them over the time until the last was (sampled every "
                        + GatewayStopRace.SAMPLE_MILLIS + " ms; the stop then goes on with session ends and "
                        + "shutdowns), else the rows in the database when it returned over its time; the plain loop "
                        + "for at most the same 5 s and rows, just before and just after each stop, rows over the time "
                        + "to its last commit"));
        table.add(String.format("gateway stop, %,d agents, %,d queued writes, %d s, one shared SQLite store: %,.0f rows/s "
                + "vs plain JDBC loop %,.0f rows/s (%.2fx; rounds %s); every write accounted by id: %s", agents,
                agents * perAgent, budget.toSeconds(), memlife, plain, ratio, ratios(ratios), accounted));
        target("gateway stop, 1,000 agents, 1,000,000 queued writes, rows/s vs the plain JDBC loop", ratio, ">= 0.9x",
                ratio >= 0.9);
        target("gateway stop: every write accounted by id", accounting, "all", accounted);
    }

    /** 128 agents against PostgreSQL through a pool of 10 connections, all writing at once. */
    private void postgresPool() throws Exception {
        String why = PostgresPool.unavailable();
        if (why != null) {
            System.out.println("skipping the PostgreSQL pool benchmark: " + why);
            results.put("postgresPool", entry("skipped", why));
            table.add("PostgreSQL, 128 agents through a pool of 10: skipped (" + why + ")");
            return;
        }
        int agents = 128;
        int poolSize = 10;
        int turns = full ? 1_000 : 250;
        System.out.println("running 128 agents against PostgreSQL through a pool of " + poolSize + " ...");
        PostgresPool.Result r = PostgresPool.run(agents, poolSize, turns);
        results.put("postgresPool", entry("agents", agents, "poolSize", poolSize, "turnsEach", turns,
                "accepted", r.accepted(), "stored", r.stored(), "distinctWriteIds", r.distinctIds(),
                "sessionEnds", r.sessionEnds(), "distinctSessionsNamedBySessionEnds", r.sessionEndSessions(),
                "connectionErrors", r.connectionErrors(),
                "failedWrites", r.failedWrites(), "agentThreadFailures", r.threadFailures(),
                "peakActivePoolConnections", r.peakActive(), "peakConnectionsBorrowedByStore", r.peakBorrowedByStore(),
                "seconds", r.seconds(), "writesPerSecond", r.writesPerSecond(), "accounting", r.accounting()));
        table.add(String.format("PostgreSQL, %d agents writing at once through a pool of %d: %,d of %,d writes stored "
                + "once each, %d connection errors, %d failed, at most %d pool connections active (%,.0f writes/s)",
                agents, poolSize, r.stored(), r.accepted(), r.connectionErrors(), r.failedWrites(), r.peakActive(),
                r.writesPerSecond()));
        target("PostgreSQL, 128 agents through a pool of 10: no connection error, every write stored once",
                r.accounting() + "; " + r.connectionErrors() + " connection errors", "no error, all stored once",
                r.ok());
    }

    /** 10,000 live agents over one shared SQLite store on a pool, each writing a few turns, then idle. */
    private void idleAgents() throws Exception {
        int agents = 10_000;
        int turns = 3;
        int poolSize = 4;
        Duration idle = Duration.ofSeconds(5);
        System.out.println("running " + agents + " live agents, " + turns + " turns each, then idle for "
                + idle.toSeconds() + " s ...");
        IdleAgents.Result r = IdleAgents.run(agents, turns, idle, poolSize);
        results.put("idleAgents", entry("agents", agents, "turnsEach", turns, "idleSeconds", idle.toSeconds(),
                "poolSize", poolSize, "memlifeThreadsAliveAfterIdle", r.memlifeThreadsAfterIdle(),
                "peakMemlifeThreads", r.peakMemlifeThreads(), "someThreadsAfterIdle", r.threadNamesAfterIdle(),
                "pendingWritesAtLastWrite", r.pendingAtLastWrite(), "pendingWritesAfterIdle", r.pendingAfterIdle(),
                "peakConnectionsBorrowedByStore", r.peakBorrowed(), "peakPhysicalConnections", r.peakPhysical(),
                "connectionsBorrowedAfterIdle", r.openBorrowedAfterIdle(), "connectionErrors", r.refused(),
                "bytesPerIdleAgent", r.bytesPerAgent(), "topHeapGrowthPerAgent", r.topClasses(),
                "accepted", r.accepted(), "storedRows", r.stored(), "accounting", r.accounting(),
                "memlifeThreadsAfterStop", r.memlifeThreadsAfterStop(), "secondsToCreateAndWrite", r.setupSeconds(),
                "commitsForTheWrites", r.commitsForTheWrites(),
                "method", "threads named memlife-* alive " + idle.toSeconds() + " s after the last syncAll; heap: "
                        + "used after 5 System.gc() calls, difference over the agents (manager, agent, cache entry "
                        + "and whatever they keep), divided; connections counted around and under a HikariCP pool"));
        table.add(String.format("%,d idle agents, one SQLite store, pool of %d: %d memlife threads alive %d s after the "
                + "last write (peak %,d), %d connections borrowed at most, %,.0f bytes of heap per idle agent; every "
                + "write accounted: %s", agents, poolSize, r.memlifeThreadsAfterIdle(), idle.toSeconds(),
                r.peakMemlifeThreads(), r.peakBorrowed(), r.bytesPerAgent(), r.accounting().startsWith("ok")));
        target("10,000 idle agents: memlife threads alive 5 s after the last write", r.memlifeThreadsAfterIdle(),
                "<= 8", r.memlifeThreadsAfterIdle() <= 8);
        target("10,000 idle agents: connections open", r.peakBorrowed() + " borrowed at most, " + r.peakPhysical()
                + " physical", "<= pool size " + poolSize, r.peakBorrowed() <= poolSize && r.peakPhysical() <= poolSize);
        target("10,000 idle agents: retained heap per idle agent, bytes", r.bytesPerAgent(), "<= 4096",
                r.bytesPerAgent() <= 4096);
        target("10,000 idle agents: every write accounted", r.accounting(), "all", r.accounting().startsWith("ok"));
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(null);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    private static String ratios(List<Double> ratios) {
        StringBuilder out = new StringBuilder();
        for (double r : ratios) {
            out.append(out.length() == 0 ? "" : ", ").append(String.format("%.2f", r));
        }
        return out.toString();
    }

    // ---- helpers -----------------------------------------------------------------------------

    private boolean wanted(String section) {
        return only.isEmpty() || only.contains(section);
    }

    private Collection<RunResult> jmh(String benchmark) throws RunnerException {
        ChainedOptionsBuilder options = new OptionsBuilder()
                .include("dev\\.memlife\\.bench\\." + benchmark + "\\.")
                .shouldFailOnError(true)
                .jvmArgsAppend("-Xmx2g")
                .verbosity(VerboseMode.SILENT)
                .forks(full ? 2 : 1)
                .warmupIterations(full ? 3 : 1)
                .warmupTime(TimeValue.seconds(full ? 2 : 1))
                .measurementIterations(full ? 5 : 3)
                .measurementTime(TimeValue.seconds(full ? 2 : 1));
        System.out.println("running " + benchmark + " ...");
        return new Runner(options.build()).run();
    }

    private void target(String name, Object value, String target, boolean met) {
        targets.add(entry("name", name, "value", value, "target", target, "met", met));
    }

    static Map<String, Object> entry(Object... keysAndValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }

    /** Where the figures were measured. */
    static final class Machine {
        static Map<String, Object> describe() {
            return entry("cores", Runtime.getRuntime().availableProcessors(),
                    "java", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"),
                    "os", System.getProperty("os.name") + " " + System.getProperty("os.arch"),
                    "cpu", cpuModel());
        }

        static String summary() {
            return Runtime.getRuntime().availableProcessors() + " cores, " + cpuModel() + ", Java "
                    + System.getProperty("java.version");
        }

        private static String cpuModel() {
            try {
                for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                    if (line.startsWith("model name")) {
                        return line.substring(line.indexOf(':') + 1).trim();
                    }
                }
            } catch (IOException | RuntimeException e) {
                // not Linux: the model stays unknown
            }
            return "unknown CPU";
        }
    }
}
