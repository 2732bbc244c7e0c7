package dev.memlife.bench;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.store.JdbcMemoryProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * One manager's drain into SQLite against the plain JDBC loop (issue 12, part 7): {@code turns}
 * writes queued behind a held writer, then {@code stop} with a budget long enough to store
 * them all; rows per second from the moment the writer is let go until the drain returns. The plain
 * loop puts the same rows (same write ids' form, sessions and contents) into the same schema in a
 * fresh file; neither side's time includes closing the database.
 */
final class StoreDrainRace {

    static final String ASSISTANT = "an assistant reply of a typical length, ".repeat(8);

    private StoreDrainRace() {}

    /** memlife's drain of {@code turns} queued writes into a fresh SQLite file: rows per second. */
    static double memlife(int turns) throws Exception {
        Path dir = Files.createTempDirectory("memlife-drain-race");
        try {
            Path file = dir.resolve("drain.db");
            JdbcMemoryProvider store = JdbcMemoryProvider.sqlite(file);
            Gate gate = new Gate("drain-race-writer");
            MemoryManager manager = MemoryManager.builder().name("drain-race").queueCapacity(turns)
                    .threadFactory(gate).build();
            // Used, not owned: the manager's shutdown leaves the store open, so closing it (SQLite checkpoints
            // the WAL when its last connection closes) is not timed, as the plain loop's close is not.
            manager.useProvider(store);
            for (int i = 0; i < turns; i++) {
                manager.syncAll("user message " + i, ASSISTANT, "session-" + (i % 64));
            }
            long start = System.nanoTime();
            gate.open();
            DrainReport report = manager.stop(Duration.ofMinutes(5));
            long nanos = System.nanoTime() - start;
            store.close();
            long rows = PlainJdbcLoop.countRows(file);
            if (report.delivered() != turns || rows != turns) {
                throw new IllegalStateException("drain of " + turns + ": " + report + ", rows " + rows);
            }
            return turns / (nanos / 1e9);
        } finally {
            Files2.deleteTree(dir);
        }
    }

    static double plain(int turns) throws Exception {
        Path dir = Files.createTempDirectory("memlife-plain-loop");
        try {
            Path file = dir.resolve("plain.db");
            PlainJdbcLoop.createSchema(file);
            PlainJdbcLoop.Result r = PlainJdbcLoop.run(file, turns, Duration.ofMinutes(5),
                    PlainJdbcLoop.writeIds(turns, 1), i -> "session-" + (i % 64),
                    i -> "user message " + i, ASSISTANT);
            if (r.rows() != turns || PlainJdbcLoop.countRows(file) != turns) {
                throw new IllegalStateException("plain loop stored " + r.rows() + " of " + turns);
            }
            return r.rowsPerSecond();
        } finally {
            Files2.deleteTree(dir);
        }
    }

    /**
     * The plain loop, for the gateway stop: the rows {@code agents} agents of {@code perAgent}
     * writes each would store, in sessions of {@code perAgent} consecutive rows, for at most {@code
     * budget}.
     */
    static PlainJdbcLoop.Result plainFor(int agents, int perAgent, Duration budget) throws Exception {
        Path dir = Files.createTempDirectory("memlife-plain-loop");
        try {
            Path file = dir.resolve("plain.db");
            PlainJdbcLoop.createSchema(file);
            return PlainJdbcLoop.run(file, agents * perAgent, budget, PlainJdbcLoop.writeIds(perAgent, agents),
                    i -> "agent-" + (i / perAgent),
                    i -> "user message " + (i % perAgent) + " of agent-" + (i / perAgent), ASSISTANT);
        } finally {
            Files2.deleteTree(dir);
        }
    }
}
