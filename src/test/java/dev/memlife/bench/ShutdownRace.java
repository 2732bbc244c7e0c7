package dev.memlife.bench;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.store.JdbcMemoryProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * The shutdown race: {@code turns} writes queued behind a real SQLite store, then {@code
 * shutdownAll} with a fixed budget. How many writes are in the database when it returns, with the
 * store writing batches versus one write per transaction.
 */
final class ShutdownRace {

    /** Writes persisted, and the drain report, for one run. */
    record Result(long persisted, DrainReport report) {}

    private ShutdownRace() {}

    static Result run(int turns, int maxBatchSize, Duration budget) throws IOException {
        Path dir = Files.createTempDirectory("memlife-shutdown-race");
        try {
            Path file = dir.resolve("race.db");
            JdbcMemoryProvider store = JdbcMemoryProvider.sqlite(file);
            MemoryManager manager = MemoryManager.builder().name("race-" + maxBatchSize).maxBatchSize(maxBatchSize)
                    .queueCapacity(turns).build();
            manager.addProvider(store);
            String assistant = "an assistant reply of a typical length, ".repeat(8);
            for (int i = 0; i < turns; i++) {
                manager.syncAll("user message " + i, assistant, "session-" + (i % 64));
            }
            DrainReport report = manager.shutdownAll(budget);
            JdbcMemoryProvider reader = JdbcMemoryProvider.sqlite(file);
            long persisted = reader.countTurns();
            reader.shutdown();
            return new Result(persisted, report);
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
