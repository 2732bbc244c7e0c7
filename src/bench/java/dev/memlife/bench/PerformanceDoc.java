package dev.memlife.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;

/**
 * Writes {@code docs/performance.md} from {@code target/bench/results.json}: the machine once, the
 * command that reproduces the page, and one table per area of {@link BenchMain}, each row a figure
 * with its unit, memlife's value, its peers', the target and whether it is met. A figure whose part
 * is not in the results file, or was skipped, reads "not measured". The text around the tables is
 * fixed here; every number comes from the results file.
 */
final class PerformanceDoc {

    /** The areas, in the page's order, each with the parts {@link BenchMain} measures it in. */
    static final Map<String, List<String>> AREAS = areas();
    /** Every part, in the order {@link BenchMain} runs them. */
    static final List<String> PARTS = AREAS.values().stream().flatMap(List::stream).toList();

    static final String COMMAND = "mvn -q -Pbench test-compile exec:exec";

    private PerformanceDoc() {}

    private static Map<String, List<String>> areas() {
        Map<String, List<String>> a = new LinkedHashMap<>();
        a.put("hot", List.of("hot"));
        a.put("latency", List.of("latency"));
        a.put("flush", List.of("flush"));
        a.put("memory", List.of("memory"));
        a.put("shutdown", List.of("shutdown"));
        a.put("drain", List.of("drain"));
        a.put("service", List.of("storedrain", "gatewaystop", "pgpool", "idleagents"));
        a.put("spool", List.of("spoolthroughput", "spoollatency", "spoolhot", "spoolreplay"));
        a.put("longterm", List.of("advisorlatency", "embedbatch"));
        a.put("sharedlog", List.of("sharedlogthroughput", "sharedloglatency"));
        return a;
    }

    /** The area a part belongs to. */
    static String areaOf(String part) {
        for (Map.Entry<String, List<String>> e : AREAS.entrySet()) {
            if (e.getValue().contains(part)) {
                return e.getKey();
            }
        }
        throw new IllegalArgumentException("no area has a part named " + part);
    }

    /** The parts in a results file, by name; empty if there is no file or it holds no parts. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> parts(Path results) throws IOException {
        Map<String, Object> parts = new LinkedHashMap<>();
        if (Files.exists(results)) {
            Object root = Json.read(Files.readString(results));
            if (root instanceof Map && ((Map<String, Object>) root).get("parts") instanceof Map) {
                Map<String, Object> stored = (Map<String, Object>) ((Map<String, Object>) root).get("parts");
                for (String name : PARTS) {
                    if (stored.containsKey(name)) {
                        parts.put(name, stored.get(name));
                    }
                }
            }
        }
        return parts;
    }

    /** The parts missing from {@code parts}, in run order. */
    static List<String> missing(Map<String, Object> parts) {
        return PARTS.stream().filter(p -> !parts.containsKey(p)).toList();
    }

    /** Writes the page at {@code doc} from the results file at {@code results}. */
    static void write(Path results, Path doc) throws IOException {
        if (!Files.exists(results)) {
            throw new IllegalStateException("no " + results + ": run the suite first (" + COMMAND + ")");
        }
        Files.writeString(doc, render(parts(results)));
    }

    // ---- the page ------------------------------------------------------------------------------

    /** The page, from the parts of a results file. */
    static String render(Map<String, Object> parts) {
        Map<String, Part> byName = new LinkedHashMap<>();
        parts.forEach((name, value) -> byName.put(name, new Part(new F(value))));
        StringBuilder out = new StringBuilder();
        out.append("# Performance\n\n");
        out.append("What memlife costs on the paths an application calls, and how fast it empties its queues when a\n"
                + "conversation or the process ends, each figure beside the peers an application could use instead.\n"
                + "Every number on this page comes from one file, `target/bench/results.json`, which the benchmark\n"
                + "suite writes with each figure's method; the suite writes this page from it. In brackets after a\n"
                + "peer's figure: memlife's figure over the peer's, unless the cell says otherwise.\n\n");
        out.append("## Machine and command\n\n");
        out.append(machine(byName)).append("\n\n");
        out.append("```bash\n").append(command(byName)).append("\n```\n\n");
        out.append("It runs every area below, writes `target/bench/results.json` and then this page. "
                + "`-Dbench.args=--full`\nruns more rounds; `-Dbench.args=--only=spool` (any area, or a part such as "
                + "`gatewaystop`) measures\nagain just that, merged into the results file, and rewrites the page "
                + "once every part is in it;\n`-Dbench.args=--docs` rewrites the page from the results file "
                + "without measuring. The PostgreSQL\nfigure needs a server: `source .ci/postgres.sh; "
                + "memlife_pg_start` starts one and sets `MEMLIFE_PG_URL`.\n");
        for (Area area : layout()) {
            out.append("\n## ").append(area.title).append("\n\n").append(area.intro).append("\n\n");
            out.append("| figure | memlife | peer(s) | target | met |\n|---|---|---|---|---|\n");
            for (Row row : area.rows) {
                out.append(line(row, byName.get(row.part)));
            }
        }
        return out.toString();
    }

    private static String line(Row row, Part part) {
        F f = part == null ? F.EMPTY : part.figures;
        String label = row.label.apply(f);
        String skipped = part == null ? null : part.skipped();
        if (part == null || skipped != null) {
            String why = skipped == null ? "not measured" : "not measured (" + skipped + ")";
            return cells(label, why, "—", row.target, "—");
        }
        String met = "—";
        if (!row.targetIds.isEmpty()) {
            met = "yes";
            for (String id : row.targetIds) {
                Boolean m = part.met(id);
                if (m == null) {
                    met = "—";
                    break;
                }
                if (!m) {
                    met = "**no**";
                }
            }
        }
        return cells(label, row.memlife.apply(f), row.peers.apply(f), row.target, met);
    }

    private static String cells(String... cells) {
        StringBuilder out = new StringBuilder("|");
        for (String c : cells) {
            out.append(' ').append(c.replace("|", "\\|")).append(" |");
        }
        return out.append('\n').toString();
    }

    private static String command(Map<String, Part> parts) {
        boolean full = !parts.isEmpty() && parts.values().stream().allMatch(p -> "full".equals(p.meta.s("mode")));
        return full ? COMMAND + " -Dbench.args=--full" : COMMAND;
    }

    /** The machine, the run's date, length and load: one paragraph. */
    private static String machine(Map<String, Part> parts) {
        if (parts.isEmpty()) {
            return "Nothing is measured yet: the results file holds no part.";
        }
        Map<Object, List<String>> machines = new LinkedHashMap<>();
        parts.forEach((name, p) -> machines.computeIfAbsent(p.meta.get("machine"), m -> new ArrayList<>()).add(name));
        StringBuilder out = new StringBuilder();
        if (machines.size() == 1) {
            out.append("Measured on ").append(describe(new F(machines.keySet().iterator().next()))).append('.');
        } else {
            out.append("Measured on ").append(machines.size()).append(" machines:");
            machines.forEach((m, names) -> out.append(' ').append(describe(new F(m))).append(" (")
                    .append(String.join(", ", names)).append(");"));
            out.setLength(out.length() - 1);
            out.append('.');
        }
        List<String> dates = parts.values().stream().map(p -> p.meta.s("measuredAt")).filter(Objects::nonNull)
                .map(d -> d.substring(0, 10)).sorted().toList();
        boolean full = command(parts).endsWith("--full");
        boolean mixed = parts.values().stream().map(p -> p.meta.s("mode")).distinct().count() > 1;
        double seconds = parts.values().stream().mapToDouble(p -> p.meta.d("seconds")).sum();
        out.append(mixed ? " Some areas in quick mode, some in full," : full ? " Full mode," : " Quick mode,");
        out.append(dates.isEmpty() ? "" : dates.get(0).equals(dates.get(dates.size() - 1)) ? " on " + dates.get(0)
                : " from " + dates.get(0) + " to " + dates.get(dates.size() - 1));
        out.append("; every part together took ").append(seconds >= 90
                ? String.format(Locale.ROOT, "%.0f minutes", seconds / 60) : String.format(Locale.ROOT, "%.0f s", seconds))
                .append('.');
        String first = parts.values().stream().filter(p -> p.meta.s("measuredAt") != null)
                .min((a, b) -> a.meta.s("measuredAt").compareTo(b.meta.s("measuredAt")))
                .map(p -> p.meta.s("loadAverageAtStart")).orElse(null);
        if (first != null && !"unknown".equals(first)) {
            out.append(" The load average (1, 5, 15 minutes) when the first part started: ").append(first).append('.');
        }
        StringBuilder others = new StringBuilder();
        double most = 0;
        for (Area area : layout()) {
            double weighted = 0;
            double time = 0;
            for (String name : AREAS.get(area.key)) {
                Part p = parts.get(name);
                if (p != null && p.meta.get("otherProcessesCores") instanceof Number) {
                    weighted += p.meta.d("otherProcessesCores") * p.meta.d("seconds");
                    time += p.meta.d("seconds");
                }
            }
            if (time > 0) {
                others.append(others.length() == 0 ? "" : ", ").append(area.title.toLowerCase(Locale.ROOT)).append(' ')
                        .append(String.format(Locale.ROOT, "%.2f", weighted / time));
                most = Math.max(most, weighted / time);
            }
        }
        if (others.length() > 0) {
            Object cores = new F(machines.keySet().iterator().next()).get("cores");
            out.append(" Cores kept busy by other processes while each area ran, on average (of ").append(cores)
                    .append("): ").append(others).append('.');
            out.append(most >= 0.25 ? " The machine was shared, so the figures that need the cores are noisy."
                    : " The machine was otherwise quiet.");
        }
        return wrap(out.toString());
    }

    private static String describe(F m) {
        return m.get("cores") + " cores of " + m.s("cpu") + ", " + m.get("memoryGiB") + " GiB of memory, " + m.s("java")
                + ", " + m.s("os") + ", the benchmarks' files on " + m.s("disk");
    }

    /** Wraps a paragraph at about 100 columns. */
    private static String wrap(String text) {
        StringBuilder out = new StringBuilder();
        int column = 0;
        for (String word : text.split(" ")) {
            if (column > 0 && column + 1 + word.length() > 100) {
                out.append('\n');
                column = 0;
            } else if (column > 0) {
                out.append(' ');
                column++;
            }
            out.append(word);
            column += word.length();
        }
        return out.toString();
    }

    // ---- the areas and their rows --------------------------------------------------------------

    private record Area(String key, String title, String intro, List<Row> rows) {}

    /** One figure: the part it comes from, its label, target text and the ids of the targets it is held to. */
    private record Row(String part, Function<F, String> label, Function<F, String> memlife, Function<F, String> peers,
            String target, List<String> targetIds) {}

    private static Row row(String part, String label, Function<F, String> memlife, Function<F, String> peers,
            String target, String... targetIds) {
        return new Row(part, f -> label, memlife, peers, target, List.of(targetIds));
    }

    private static List<Area> layout() {
        List<Area> areas = new ArrayList<>();
        areas.add(new Area("hot", "Hot path", wrap("JMH: one operation hands 20,000 writes to the contender from 1 or 2 "
                + "producer threads and waits until every one reached the same no-op sink, so a contender cannot look "
                + "fast by piling writes up or dropping them; each holds at most "
                + String.format(Locale.ROOT, "%,d", Contender.CAPACITY) + " pending writes."), List.of(hot(1), hot(2))));
        areas.add(new Area("latency", "Latency", wrap("JMH samples every `syncAll` call while the provider parks 1 ms "
                + "per write: the caller must never wait for the provider. Calls are paced one every "
                + LatencyBenchmark.PACE_NANOS / 1000 + " µs, so the queue grows but never fills."), List.of(
                row("latency", "`syncAll` behind a 1 ms provider, p50 / p99 / p99.9",
                        f -> percentiles(f.f("syncAllLatencyBehind1msProvider")), f -> "—", "p99 < 10 µs", "p99"))));
        areas.add(new Area("flush", "Flush", wrap("JMH, the time of one `flushPending` call: on a manager whose "
                + "writes all went through, and with 1,000 writes queued behind a gate the call opens."), List.of(
                row("flush", "`flushPending` with nothing queued, time per call",
                        f -> time(f.d("flushPending.idleNanos")), f -> "—", "< 1 µs", "idle"),
                row("flush", "`flushPending` with 1,000 writes queued, time per call",
                        f -> time(f.d("flushPending.with1000QueuedNanos")), f -> "—", "—"))));
        areas.add(new Area("memory", "Memory", wrap("Used heap after five `System.gc()` calls, the difference over "
                + "1,000,000 queued writes sharing one payload, and over 1,000,000 dirty tracked sessions whose ids "
                + "were made beforehand, divided."), List.of(
                row("memory", "heap per queued write, beyond its payload, bytes",
                        f -> bytes(f.d("memory.bytesPerQueuedWrite")), f -> "—", "≤ 150 B", "perQueuedWrite"),
                row("memory", "heap per dirty tracked session, bytes",
                        f -> bytes(f.d("sessionMemory.bytesPerDirtySession")), f -> "—", "≤ 300 B", "perDirtySession"))));
        areas.add(new Area("shutdown", "Shutdown", wrap("Turns queued behind the JDBC store on a fresh SQLite file, "
                + "then a shutdown with a 5 s budget: the writes in the database when it returns, batched (the default "
                + "`maxBatchSize`) against one write per transaction. With 1,000,000 queued both are still writing at "
                + "the deadline; with 200,000 the batched one finishes first, which caps its ratio."), List.of(
                row("shutdown", "writes persisted within a 5 s shutdown, 1,000,000 queued",
                        f -> count(f.d("shutdownRace.queued1m.persistedBatched")),
                        f -> "`maxBatchSize` 1: " + count(f.d("shutdownRace.queued1m.persistedBatchSize1")) + " ("
                                + ratio(f.d("shutdownRace.queued1m.ratio")) + ")", "≥ 20x", "ratio"),
                row("shutdown", "writes persisted within a 5 s shutdown, 200,000 queued", PerformanceDoc::shutdown200k,
                        f -> "`maxBatchSize` 1: " + count(f.d("shutdownRace.queued200k.persistedBatchSize1")) + " ("
                                + ratio(f.d("shutdownRace.queued200k.ratio")) + ")", "—"))));
        areas.add(new Area("drain", "Session drain", wrap("Dirty sessions whose commit (an extraction) waits 5 ms, "
                + "committed at shutdown by the session tracker's parallel drain, against committing one session at a "
                + "time."), List.of(
                row("drain", "10,000 dirty sessions × 5 ms commit, time to drain them all",
                        f -> seconds(f.d("sessionDrain.memlifeDrainSeconds")),
                        f -> "one at a time: " + seconds(f.d("sessionDrain.peerSeconds")) + " ("
                                + ratio(f.d("sessionDrain.ratio")) + " as long)", "≥ 10x faster", "ratio"))));
        areas.add(new Area("service", "Many agents in one service", wrap("Rows into SQLite (WAL, `synchronous=FULL`) "
                + "against a plain JDBC loop into the same schema: one prepared `INSERT`, `executeBatch` and a commit "
                + "every " + String.format(Locale.ROOT, "%,d", PlainJdbcLoop.ROWS_PER_TRANSACTION) + " rows; rates "
                + "pooled over the rounds, the order alternating. Then agents by the thousand behind one "
                + "`AgentGateway`, on one store."), service()));
        areas.add(new Area("spool", "Durable spool", wrap("A manager on `Spool.open(dir)`, whose every accepted write "
                + "is safe from kill -9, against its peers on the same disk. The hot path's peers append a record of "
                + "the spool's size into memory-mapped files, as the spool does, and force nothing. Latency behind a "
                + "provider that takes 1 ms per write, beside this disk's own append and force paced the same; "
                + "percentiles over every round's samples."), spool()));
        areas.add(new Area("longterm", "Long-term memory off the request path", wrap("Spring AI's "
                + "`VectorStoreChatMemoryAdvisor` embeds on the request thread: it searches earlier turns (embedding "
                + "the query) and adds the user's message before the model's call and the answer after it, two more "
                + "embeddings. Requests through a `ChatClient` over a chat model that answers at once, the advisor "
                + "over a `SimpleVectorStore` against the same advisor over a `WriteBehindVectorStore` (batch size "
                + LongTermMemoryBench.BATCH + ") in front of one, and no advisor; the same all-MiniLM-L6-v2 in "
                + "process (LangChain4j's ONNX packaging) behind every store; latency percentiles nearest-rank over "
                + "rounds whose order rotates. The query's embedding stays on the request path either way. "
                + "LangChain4j's model runs one ONNX call per text whatever the batch, spreading a batch's texts "
                + "over as many threads as cores: what batching gains is bounded by the cores. `SimpleVectorStore` "
                + "(Spring AI 1.1) embeds one document per model call whatever the batch it is given; most of "
                + "Spring AI's stores (Redis, MariaDB, Elasticsearch...) embed an add in one call, hence the "
                + "throughput's second memlife figure, over such a store."), longTerm()));
        areas.add(new Area("sharedlog", "Shared write-ahead log", wrap("`SharedLog`, the write-ahead log the "
                + "replicas of a service share on PostgreSQL, on the server `MEMLIFE_PG_URL` names: one replica, "
                + BenchMain.SHARED_LOG_PRODUCERS + " agents with a manager each (`MemoryManager.builder().spool("
                + "log.agent(key))`, a no-op provider), a producer thread per agent; a write counts once "
                + "`awaitDurable` confirmed it, which waits for the replica's group commit. Against it, what an "
                + "application would write by hand: " + BenchMain.SHARED_LOG_PRODUCERS + " threads, a JDBC "
                + "connection each, one `INSERT` and one `commit` per write, into a table with the shared log's "
                + "columns, each row carrying the bytes the shared log stores for the same write. Every run on "
                + "tables under a fresh prefix, dropped afterwards; rates pooled over rounds whose order rotates, "
                + "latency percentiles nearest-rank over every round's samples."), sharedLog()));
        return areas;
    }

    private static Row hot(int producers) {
        return new Row("hot", f -> "writes/s delivered, " + producers + (producers == 1 ? " producer" : " producers"),
                f -> rate(hotRate(f, producers, "memlife")),
                f -> "`newSingleThreadExecutor` " + hotPeer(f, producers, "executor") + "; Logback `AsyncAppender` "
                        + hotPeer(f, producers, "logback") + "; OTel `BatchSpanProcessor` " + hotPeer(f, producers, "otel"),
                "≥ 2x the executor, ≥ 1x Logback", List.of("executor" + producers, "logback" + producers));
    }

    private static double hotRate(F f, int producers, String contender) {
        return f.find("hotPath", "producers", producers, "contender", contender).d("writesPerSecond");
    }

    private static String hotPeer(F f, int producers, String peer) {
        double p = hotRate(f, producers, peer);
        return rate(p) + " (" + ratio(hotRate(f, producers, "memlife") / p) + ")";
    }

    private static String shutdown200k(F f) {
        F q = f.f("shutdownRace.queued200k");
        if (Boolean.TRUE.equals(q.get("batchedFinishedEverything"))) {
            return "all " + count(q.d("queuedTurns")) + ", in " + time(q.d("batchedMillis") * 1e6);
        }
        return count(q.d("persistedBatched"));
    }

    private static List<Row> service() {
        List<Row> rows = new ArrayList<>();
        rows.add(new Row("storedrain", f -> "one manager draining " + f.countOr("storeDrainVsPlainLoop.rows", "its")
                + " queued rows into SQLite, rows/s", f -> count(f.d("storeDrainVsPlainLoop.memlifeRowsPerSecond")),
                f -> "plain JDBC loop: " + count(f.d("storeDrainVsPlainLoop.plainRowsPerSecond")) + " ("
                        + ratio(f.d("storeDrainVsPlainLoop.ratio")) + ")", "≥ 0.9x the loop", List.of("ratio")));
        rows.add(row("gatewaystop", "`gateway.stop` of 1,000 agents with 1,000,000 queued writes, one SQLite store, "
                + "5 s; rows/s", f -> count(f.d("gatewayStopVsPlainLoop.memlifeRowsPerSecond")),
                f -> "plain JDBC loop for the same 5 s: " + count(f.d("gatewayStopVsPlainLoop.plainRowsPerSecond"))
                        + " (" + ratio(f.d("gatewayStopVsPlainLoop.ratio")) + ")", "≥ 0.9x the loop", "ratio"));
        rows.add(row("gatewaystop", "`gateway.stop`: every write accounted by id", f -> accounting(f, "accounted"),
                f -> "—", "all", "accounted"));
        rows.add(row("pgpool", "PostgreSQL: 128 agents writing at once through a pool of 10 connections",
                f -> count(f.d("postgresPool.stored")) + " of " + count(f.d("postgresPool.accepted"))
                        + " writes stored once each; " + count(f.d("postgresPool.connectionErrors"))
                        + " connection errors, " + count(f.d("postgresPool.failedWrites")) + " failed; at most "
                        + count(f.d("postgresPool.peakActivePoolConnections")) + " connections active; "
                        + count(f.d("postgresPool.writesPerSecond")) + " writes/s", f -> "—",
                "no error, every write stored once", "ok"));
        rows.add(row("idleagents", "10,000 idle agents on one SQLite store: memlife threads alive 5 s after the last write",
                f -> count(f.d("idleAgents.memlifeThreadsAliveAfterIdle")) + " (at most "
                        + count(f.d("idleAgents.peakMemlifeThreads")) + " while writing)", f -> "—", "≤ 8", "threads"));
        rows.add(row("idleagents", "10,000 idle agents: connections borrowed / opened at most",
                f -> count(f.d("idleAgents.peakConnectionsBorrowedByStore")) + " / "
                        + count(f.d("idleAgents.peakPhysicalConnections")), f -> "—", "≤ the pool's 4", "connections"));
        rows.add(row("idleagents", "10,000 idle agents: heap per idle agent, bytes",
                f -> bytes(f.d("idleAgents.bytesPerIdleAgent")), f -> "—", "≤ 4,096 B", "heap"));
        rows.add(row("idleagents", "10,000 idle agents: every write accounted by id", f -> accounting(f, "accounted"),
                f -> "—", "all", "accounted"));
        return rows;
    }

    private static List<Row> spool() {
        List<Row> rows = new ArrayList<>();
        for (int producers : List.of(1, BenchMain.SPOOL_PRODUCERS)) {
            rows.add(row("spoolhot", "hot path, " + producers + (producers == 1 ? " producer" : " producers")
                    + ", writes/s delivered, not waiting for the disk",
                    f -> rate(spoolHot(f, producers).d("spoolOnWritesPerSecond")),
                    f -> "spool off " + rate(spoolHot(f, producers).d("spoolOffWritesPerSecond"))
                            + "; Chronicle Queue appender " + rate(spoolHot(f, producers).d("chronicleQueueWritesPerSecond"))
                            + "; `MappedByteBuffer.put` loop " + rate(spoolHot(f, producers).d("mappedLoopWritesPerSecond")),
                    "≥ 1 M", producers + "p"));
        }
        String latency = "spoolLatencyBehind1msProvider.";
        rows.add(row("spoollatency", "`syncAll` behind a 1 ms provider, not waiting for the disk, p50 / p99 / p99.9",
                f -> percentiles(f.f(latency + "syncAllNotWaiting")), f -> "—", "p99 < 10 µs", "syncAllP99"));
        for (String key : List.of("syncAllDurable1Producer", "syncAllDurable" + BenchMain.SPOOL_PRODUCERS + "Producers")) {
            int producers = key.endsWith("1Producer") ? 1 : BenchMain.SPOOL_PRODUCERS;
            rows.add(row("spoollatency", "`syncAllDurable` (confirmed on disk), " + producers
                    + (producers == 1 ? " producer" : " producers") + ", p50 / p99 / p99.9",
                    f -> percentiles(f.f(latency + key)) + " (p99 " + ratio(f.d(latency + key + ".p99Nanos")
                            / f.d(latency + "rawAppendAndForce.p99Nanos")) + " the disk's)",
                    f -> "this disk's append + force: " + percentiles(f.f(latency + "rawAppendAndForce")),
                    "p99 ≤ 1.5x the disk's", "durable" + producers + "P99"));
        }
        rows.add(row("spoolthroughput", "writes/s confirmed on disk, " + BenchMain.SPOOL_PRODUCERS + " producers, "
                + BenchMain.SPOOL_PIPELINE + " `syncAll` per `awaitDurable`",
                f -> rate(durable(f, "memlife:" + BenchMain.SPOOL_PIPELINE)) + " (" + pipelines(f) + ")",
                f -> "Square Tape `QueueFile` " + rate(durable(f, "tape")) + "; SQLite `synchronous=FULL`, a transaction "
                        + "per write " + rate(durable(f, "sqlite:1")) + ", per " + BenchMain.SPOOL_PIPELINE + " rows "
                        + rate(durable(f, "sqlite:" + BenchMain.SPOOL_PIPELINE)), "≥ 1 M", "durable"));
        rows.add(new Row("spoolreplay", f -> "replay of " + f.countOr("spoolReplay.writes", "its") + " undelivered writes"
                + (f.get("spoolReplay.spoolBytes") == null ? "" : " (" + String.format(Locale.ROOT, "%.0f MB, %d segments",
                f.d("spoolReplay.spoolBytes") / 1e6, (long) f.d("spoolReplay.segments")) + ")") + " into SQLite, rows/s",
                f -> count(f.d("spoolReplay.replayRowsPerSecond")),
                f -> "the store draining as many queued writes " + count(f.d("spoolReplay.storeDrainRowsPerSecond")) + " ("
                        + ratio(f.d("spoolReplay.replayOverDrain")) + "); plain JDBC loop "
                        + count(f.d("spoolReplay.plainLoopRowsPerSecond")), "≥ 0.95x the store's drain", List.of("ratio")));
        rows.add(row("spoolreplay", "replay: every write id stored once",
                f -> Boolean.TRUE.equals(f.get("spoolReplay.everyIdLanded")) ? "yes, all " + count(f.d("spoolReplay.writes"))
                        : "no", f -> "—", "all", "everyId"));
        return rows;
    }

    private static List<Row> longTerm() {
        List<Row> rows = new ArrayList<>();
        rows.add(new Row("advisorlatency", f -> "request with the advisor, " + f.countOr("advisorLatency.requestsPerRound",
                "its") + " × " + f.countOr("advisorLatency.rounds", "its") + " requests: latency added over no "
                + "advisor, p50 / p99", f -> added(f, "writebehind"),
                f -> "over `SimpleVectorStore`: " + added(f, "sync") + "; no advisor: "
                        + pair(f.f("advisorLatency.request.none")), "—", List.of()));
        rows.add(row("advisorlatency", "the advisor's calls into its store during those requests, per call, p50 / p99",
                f -> "`add` " + pair(f.f("advisorLatency.storeAddPerCall.writebehind")) + "; search "
                        + pair(f.f("advisorLatency.storeSearchPerCall.writebehind")),
                f -> "`SimpleVectorStore`: `add` " + pair(f.f("advisorLatency.storeAddPerCall.sync")) + "; search "
                        + pair(f.f("advisorLatency.storeSearchPerCall.sync")), "—"));
        rows.add(row("advisorlatency", "the write-behind `add`s during those requests, by what its writer was doing, "
                + "p50 / p99", f -> "waking an idle writer: " + byWriter(f, "wakingAnIdleWriter") + "; while it writes: "
                        + byWriter(f, "whileTheWriterWrites"), f -> "—", "—"));
        rows.add(row("advisorlatency", "`add` of 1 document on the caller's thread, at most one per "
                + LongTermMemoryBench.ADD_PACE_NANOS / 1_000_000 + " ms, p50 / p99",
                f -> pair(f.f("addAlone.byContender.writebehind")),
                f -> "`SimpleVectorStore.add`: " + pair(f.f("addAlone.byContender.sync")) + "; the model's `embed` of "
                        + "one text: " + pair(f.f("addAlone.byContender.embed")), "p99 < 1 ms", "writeBehindAddP99"));
        rows.add(new Row("embedbatch", f -> "texts embedded per second, " + f.countOr("embeddingThroughput.texts", "its")
                + " sentences, " + f.countOr("embeddingThroughput.cores", "all") + " cores, the same all-MiniLM-L6-v2 "
                + "weights with batched inference (one ONNX run per call, padded to the longest text): "
                + "`WriteBehindVectorStore`, batch size " + LongTermMemoryBench.BATCH + ", over a store that embeds "
                + "each add in one model call",
                f -> count(f.d("embeddingThroughput.textsPerSecond.batchedMemlife")) + " ("
                        + ratio(f.d("embeddingThroughput.batchedMemlifeOverBatchedPerText")) + " one call per text)",
                f -> "one `embed` call per text " + count(f.d("embeddingThroughput.textsPerSecond.batchedPerText"))
                        + "; the model's `embed(List)` in " + LongTermMemoryBench.BATCH + "s "
                        + count(f.d("embeddingThroughput.textsPerSecond.batchedRawBatch")) + "; cosine to LangChain4j's "
                        + "vectors ≥ " + String.format(Locale.ROOT, "%.4f", Math.min(
                                f.d("embeddingThroughput.batchedEquivalence.minCosineAlone"),
                                f.d("embeddingThroughput.batchedEquivalence.minCosineInOnePaddedBatch"))),
                "≥ 3x one call per text", List.of("batchOverPerText")));
        rows.add(new Row("embedbatch", f -> "texts embedded per second, " + f.countOr("embeddingThroughput.texts", "its")
                + " sentences, " + f.countOr("embeddingThroughput.cores", "all") + " cores, LangChain4j's model (one "
                + "ONNX run per text, whatever the batch): `WriteBehindVectorStore` over `SimpleVectorStore`, batch "
                + "size " + LongTermMemoryBench.BATCH,
                f -> count(f.d("embeddingThroughput.textsPerSecond.memlife")) + " ("
                        + ratio(f.d("embeddingThroughput.memlifeOverPerText")) + " one call per text)",
                f -> "over a store that embeds each add in one model call: "
                        + count(f.d("embeddingThroughput.textsPerSecond.memlifeBatchingStore")) + " ("
                        + ratio(f.d("embeddingThroughput.memlifeBatchingStoreOverPerText")) + "); one `embed` call per text "
                        + count(f.d("embeddingThroughput.textsPerSecond.perText"))
                        + "; `SimpleVectorStore.add` per text " + count(f.d("embeddingThroughput.textsPerSecond.syncAdd"))
                        + "; the model's `embed(List)` in " + LongTermMemoryBench.BATCH + "s "
                        + count(f.d("embeddingThroughput.textsPerSecond.rawBatch")), "—", List.of()));
        return rows;
    }

    private static List<Row> sharedLog() {
        List<Row> rows = new ArrayList<>();
        String t = "sharedLogThroughput.";
        rows.add(new Row("sharedlogthroughput", f -> "writes/s confirmed committed, " + BenchMain.SHARED_LOG_PRODUCERS
                + " producers on one replica, " + BenchMain.SHARED_LOG_PIPELINE + " `syncAll` per `awaitDurable`"
                + server(f.f(t + "server")),
                f -> rate(sharedLogRate(f, "sharedlog:" + BenchMain.SHARED_LOG_PIPELINE)) + " ("
                        + ratio(f.d(t + "ratio")) + " one commit per write); " + sharedLogPipelines(f),
                f -> "one `INSERT` and `commit` per write, " + BenchMain.SHARED_LOG_PRODUCERS + " connections: "
                        + rate(sharedLogRate(f, "perwrite")),
                "≥ 50x one commit per write", List.of("ratio")));
        rows.add(row("sharedlogthroughput", "transactions/s and writes per transaction, "
                + BenchMain.SHARED_LOG_PIPELINE + " `syncAll` per `awaitDurable`",
                f -> sharedLogTransactions(f, "sharedlog:" + BenchMain.SHARED_LOG_PIPELINE) + " (group commits)",
                f -> "one commit per write: " + count(f.find(t + "contenders", "key", "perwrite")
                        .d("transactionsPerSecond")) + " transactions/s", "—"));
        String l = "sharedLogLatency.";
        rows.add(row("sharedloglatency", "`syncAllDurable` (confirmed committed), " + BenchMain.SHARED_LOG_PRODUCERS
                + " producers one write at a time, p50 / p99 / p99.9",
                f -> percentiles(f.f(l + "syncAllDurable")) + writesPerSecond(f.f(l + "syncAllDurable")),
                f -> "one `INSERT` and `commit`, " + BenchMain.SHARED_LOG_PRODUCERS + " connections: "
                        + percentiles(f.f(l + "insertAndCommit")) + writesPerSecond(f.f(l + "insertAndCommit")),
                "—"));
        return rows;
    }

    /** "; N writes/s" if the figures have the rate. */
    private static String writesPerSecond(F p) {
        return p.get("writesPerSecond") instanceof Number ? "; " + rate(p.d("writesPerSecond")) + " writes/s" : "";
    }

    private static String server(F s) {
        if (s.get("server_version") == null) {
            return "";
        }
        return " (PostgreSQL " + s.s("server_version").split(" ")[0] + ", `fsync` " + s.s("fsync")
                + ", `synchronous_commit` " + s.s("synchronous_commit") + ")";
    }

    private static double sharedLogRate(F f, String key) {
        return f.find("sharedLogThroughput.contenders", "key", key).d("writesPerSecond");
    }

    private static String sharedLogTransactions(F f, String key) {
        F c = f.find("sharedLogThroughput.contenders", "key", key);
        return count(c.d("transactionsPerSecond")) + " transactions/s, "
                + String.format(Locale.ROOT, "%,.0f", c.d("writesPerTransaction")) + " writes each";
    }

    private static String sharedLogPipelines(F f) {
        StringBuilder out = new StringBuilder();
        for (int n : BenchMain.SHARED_LOG_PIPELINES) {
            if (n != BenchMain.SHARED_LOG_PIPELINE) {
                out.append(out.length() == 0 ? "" : "; ").append(String.format(Locale.ROOT, "%,d", n))
                        .append(" per wait ").append(rate(sharedLogRate(f, "sharedlog:" + n))).append(" (")
                        .append(ratio(f.d("sharedLogThroughput.ratioByPipeline." + n))).append(")");
            }
        }
        return out.toString();
    }

    private static String byWriter(F f, String state) {
        F p = f.f("advisorLatency.writeBehindAddsByWriterState." + state);
        if (!(p.get("p50Nanos") instanceof Number)) {
            return "none";
        }
        return pair(p) + " (" + count(p.d("overOneMs")) + " of " + count(p.d("samples")) + " over 1 ms)";
    }

    private static String added(F f, String contender) {
        return pair(f.f("advisorLatency.addedOverNoAdvisor." + contender));
    }

    /** p50 / p99 of a percentile map. */
    private static String pair(F p) {
        return time(p.d("p50Nanos")) + " / " + time(p.d("p99Nanos"));
    }

    private static F spoolHot(F f, int producers) {
        return f.find("spoolHotPath.figures", "producers", producers);
    }

    private static double durable(F f, String key) {
        return f.find("spoolDurableThroughput.contenders", "key", key).d("writesPerSecond");
    }

    private static String pipelines(F f) {
        StringBuilder out = new StringBuilder();
        for (int n : BenchMain.SPOOL_PIPELINES) {
            if (n != BenchMain.SPOOL_PIPELINE) {
                out.append(out.length() == 0 ? "" : "; ").append(String.format(Locale.ROOT, "%,d", n))
                        .append(" per wait ").append(rate(durable(f, "memlife:" + n)));
            }
        }
        return out.toString();
    }

    private static String accounting(F f, String targetId) {
        Object value = f.target(targetId) == null ? null : f.target(targetId).get("value");
        String text = String.valueOf(value);
        if (text.startsWith("ok: ")) {
            text = text.substring(4);
            int digits = 0;
            while (digits < text.length() && Character.isDigit(text.charAt(digits))) {
                digits++;
            }
            if (digits > 0) {
                text = String.format(Locale.ROOT, "%,d", Long.parseLong(text.substring(0, digits))) + text.substring(digits);
            }
        }
        return text;
    }

    // ---- numbers -------------------------------------------------------------------------------

    private static String percentiles(F p) {
        return time(p.d("p50Nanos")) + " / " + time(p.d("p99Nanos")) + " / " + time(p.d("p999Nanos"));
    }

    /** A rate: "2.01 M" from a million up, else "845,210". */
    static String rate(double perSecond) {
        return perSecond >= 1e6 ? String.format(Locale.ROOT, "%.2f M", perSecond / 1e6) : count(perSecond);
    }

    static String count(double n) {
        return String.format(Locale.ROOT, "%,.0f", n);
    }

    static String ratio(double r) {
        return String.format(Locale.ROOT, r >= 10 ? "%.1fx" : "%.2fx", r);
    }

    static String bytes(double b) {
        return String.format(Locale.ROOT, "%,.0f B", b);
    }

    static String seconds(double s) {
        return time(s * 1e9);
    }

    /** A duration in nanoseconds, in the unit that keeps it between 1 and 1,000, with two or three digits. */
    static String time(double nanos) {
        String[] units = {"ns", "µs", "ms", "s"};
        double v = nanos;
        int u = 0;
        while (v >= 1000 && u < units.length - 1) {
            v /= 1000;
            u++;
        }
        String number = v >= 100 ? String.format(Locale.ROOT, "%.0f", v)
                : v >= 10 ? String.format(Locale.ROOT, "%.1f", v) : String.format(Locale.ROOT, "%.2f", v);
        return number + " " + units[u];
    }

    // ---- reading the results -------------------------------------------------------------------

    /** One part of the results file: its figures, targets and how it was measured. */
    private static final class Part {
        final F meta;
        final F figures;

        Part(F part) {
            this.meta = part;
            this.figures = part.f("figures").withTargets(part.get("targets"));
        }

        /** Why the part was skipped (the PostgreSQL one, without a server), or null. */
        String skipped() {
            for (Object value : figures.map.values()) {
                if (value instanceof Map && ((Map<?, ?>) value).get("skipped") != null) {
                    String why = String.valueOf(((Map<?, ?>) value).get("skipped"));
                    int paren = why.indexOf(" (");
                    return paren > 0 ? why.substring(0, paren) : why;
                }
            }
            return null;
        }

        Boolean met(String id) {
            Map<?, ?> t = figures.target(id);
            return t == null ? null : Boolean.TRUE.equals(t.get("met"));
        }
    }

    /** A map of the results file, read by dotted paths. */
    private static final class F {
        static final F EMPTY = new F(Map.of());

        final Map<?, ?> map;
        final List<?> targets;

        F(Object value) {
            this(value, List.of());
        }

        private F(Object value, List<?> targets) {
            this.map = value instanceof Map ? (Map<?, ?>) value : Map.of();
            this.targets = targets;
        }

        F withTargets(Object targets) {
            return new F(map, targets instanceof List ? (List<?>) targets : List.of());
        }

        Object get(String path) {
            Object at = map;
            for (String key : path.split("\\.")) {
                at = at instanceof Map ? ((Map<?, ?>) at).get(key) : null;
            }
            return at;
        }

        String s(String path) {
            Object v = get(path);
            return v == null ? null : v.toString();
        }

        /** A number; throws naming the path if the results file has none there. */
        double d(String path) {
            Object v = get(path);
            if (!(v instanceof Number)) {
                throw new IllegalStateException("results.json: no number at " + path);
            }
            return ((Number) v).doubleValue();
        }

        F f(String path) {
            return new F(get(path));
        }

        String countOr(String path, String otherwise) {
            return get(path) instanceof Number ? count(d(path)) : otherwise;
        }

        /** The entry of the list at {@code path} whose fields have the given values. */
        F find(String path, Object... keysAndValues) {
            Object list = get(path);
            if (list instanceof List) {
                for (Object e : (List<?>) list) {
                    F entry = new F(e);
                    boolean all = true;
                    for (int i = 0; i < keysAndValues.length; i += 2) {
                        all &= same(entry.get((String) keysAndValues[i]), keysAndValues[i + 1]);
                    }
                    if (all) {
                        return entry;
                    }
                }
            }
            throw new IllegalStateException("results.json: no entry of " + path + " with " + List.of(keysAndValues));
        }

        private static boolean same(Object stored, Object wanted) {
            if (stored instanceof Number && wanted instanceof Number) {
                return ((Number) stored).doubleValue() == ((Number) wanted).doubleValue();
            }
            return Objects.equals(stored, wanted);
        }

        Map<?, ?> target(String id) {
            for (Object t : targets) {
                if (t instanceof Map && id.equals(((Map<?, ?>) t).get("id"))) {
                    return (Map<?, ?>) t;
                }
            }
            return null;
        }
    }
}
