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

    public static void main(String[] args) throws Exception {
        boolean full = List.of(args).contains("--full");
        if (List.of(args).contains("--help")) {
            System.out.println("usage: BenchMain [--quick|--full] [--only=hot,latency,flush,memory,shutdown,drain]\n"
                    + "  --quick  the whole suite in a few minutes on 2 cores (default)\n"
                    + "  --full   more forks and iterations: tighter error bars\n"
                    + "  --only   run just these sections (for working on one figure)");
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
