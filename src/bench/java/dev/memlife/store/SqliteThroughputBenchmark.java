package dev.memlife.store;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * Throughput of {@link JdbcMemoryProvider} on SQLite through a real {@link MemoryManager}: writes N
 * turns with batching (max batch 256 by default) and then with batch size 1, each into a fresh
 * file, and times from the first {@code syncAll} until {@code flushPending} returns true. Prints
 * both rates and their ratio. Not a unit test; run it on purpose:
 *
 * <pre>
 * mvn -q test-compile exec:java@sqlite-benchmark -Dexec.args="--turns 20000"
 * </pre>
 *
 * Options: {@code --turns N} (default 20000), {@code --batch N} (default 256), {@code --rounds N}
 * (default 3; the best round of each mode counts, after a warm-up run of each), {@code --dir PATH}.
 */
public final class SqliteThroughputBenchmark {

    private SqliteThroughputBenchmark() {}

    public static void main(String[] args) throws Exception {
        int turns = 20_000;
        int batch = 256;
        int rounds = 3;
        Path dir = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--turns" -> turns = Integer.parseInt(args[++i]);
                case "--batch" -> batch = Integer.parseInt(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--dir" -> dir = Path.of(args[++i]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]
                        + "; options: --turns N --batch N --rounds N --dir PATH");
            }
        }
        Path work = dir != null ? Files.createDirectories(dir) : Files.createTempDirectory("memlife-bench");
        try {
            run(work, turns, batch); // warm-up: JIT, driver loading, file system
            run(work, Math.min(turns, 5_000), 1);
            double batched = 0;
            double single = 0;
            for (int r = 1; r <= rounds; r++) {
                double b = run(work, turns, batch);
                double s = run(work, turns, 1);
                System.out.printf(Locale.ROOT, "  round %d: maxBatchSize %d %,.0f turns/s, maxBatchSize 1 %,.0f turns/s%n",
                        r, batch, b, s);
                batched = Math.max(batched, b);
                single = Math.max(single, s);
            }
            System.out.printf(Locale.ROOT, "SQLite, %d turns, best of %d rounds:%n", turns, rounds);
            System.out.printf(Locale.ROOT, "  maxBatchSize %4d: %,10.0f turns/s%n", batch, batched);
            System.out.printf(Locale.ROOT, "  maxBatchSize    1: %,10.0f turns/s%n", single);
            System.out.printf(Locale.ROOT, "  batching is %.1fx faster%n", batched / single);
        } finally {
            if (dir == null) {
                deleteTree(work);
            }
        }
    }

    /** Writes {@code turns} turns into a fresh file; returns turns per second. */
    private static double run(Path dir, int turns, int maxBatchSize) throws Exception {
        Path file = Files.createTempFile(dir, "bench-" + maxBatchSize + "-", ".db");
        JdbcMemoryProvider store = JdbcMemoryProvider.sqlite(file);
        MemoryManager memory = MemoryManager.builder().name("bench-" + maxBatchSize).maxBatchSize(maxBatchSize)
                .queueCapacity(turns).build();
        memory.addProvider(store);
        String assistant = "an assistant reply of a typical length, ".repeat(8);
        long start = System.nanoTime();
        for (int i = 0; i < turns; i++) {
            memory.syncAll("user message number " + i, assistant, "session-" + (i % 16));
        }
        if (!memory.flushPending(Duration.ofMinutes(10))) {
            throw new IllegalStateException("flush did not finish for maxBatchSize " + maxBatchSize);
        }
        long elapsed = System.nanoTime() - start;
        DrainReport report = memory.stop();
        if (report.delivered() != turns || store.countTurns() != turns) {
            throw new IllegalStateException("expected " + turns + " turns stored, report " + report + ", stored "
                    + store.countTurns());
        }
        return turns / (elapsed / 1e9);
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        }
    }
}
