package dev.memlife.bench;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.store.JdbcMemoryProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.stream.Stream;

/**
 * The shutdown race: {@code turns} writes queued behind a real SQLite store, then {@code
 * stop} with a fixed budget. How many writes the store had committed when it returns, with
 * the store writing batches versus one write per transaction. The writer is held until shutdown
 * begins, so every write is still queued when the race starts, for both.
 */
final class ShutdownRace {

    /**
     * Writes persisted within the budget (those the store had committed when the drain returned),
     * and the drain report, for one run.
     */
    record Result(long persisted, DrainReport report) {}

    private ShutdownRace() {}

    static Result run(int turns, int maxBatchSize, Duration budget) throws IOException {
        Path dir = Files.createTempDirectory("memlife-shutdown-race");
        try {
            Path file = dir.resolve("race.db");
            JdbcMemoryProvider store = JdbcMemoryProvider.sqlite(file);
            CountDownLatch shutdownBegins = new CountDownLatch(1);
            MemoryManager manager = MemoryManager.builder().name("race-" + maxBatchSize).maxBatchSize(maxBatchSize)
                    .queueCapacity(turns).threadFactory(heldUntil(shutdownBegins)).build();
            manager.addProvider(store);
            String assistant = "an assistant reply of a typical length, ".repeat(8);
            for (int i = 0; i < turns; i++) {
                manager.syncAll("user message " + i, assistant, "session-" + (i % 64));
            }
            shutdownBegins.countDown();
            DrainReport report = manager.stop(budget);
            JdbcMemoryProvider reader = JdbcMemoryProvider.sqlite(file);
            long rows = reader.countTurns(); // may include the batch still running at the deadline
            reader.shutdown();
            if (rows < report.delivered()) {
                throw new IllegalStateException("the drain reported " + report.delivered() + " writes delivered but "
                        + "the database holds only " + rows);
            }
            return new Result(report.delivered(), report);
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** Daemon threads that start their work only once {@code gate} opens. */
    private static ThreadFactory heldUntil(CountDownLatch gate) {
        return work -> {
            Thread t = new Thread(() -> {
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
                work.run();
            }, "shutdown-race-writer");
            t.setDaemon(true);
            return t;
        };
    }
}
