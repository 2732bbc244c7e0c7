package dev.memlife.bench;

import dev.memlife.MemoryManager;
import dev.memlife.WriteFigures;
import dev.memlife.spool.Spool;
import dev.memlife.spool.SpoolInspection;
import dev.memlife.store.JdbcMemoryProvider;
import dev.memlife.testing.GatedProvider;
import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.stream.Stream;

/**
 * Replay (issue 14, part 4): a spool holding {@code turns} undelivered writes, as a crash leaves
 * it, replayed by a new manager into the JDBC store on a fresh SQLite file.
 *
 * <p>The image is made once ({@link #makeImage}): a manager on a spool whose provider holds the
 * first write it gets, so none is delivered, accepts the writes (the rows of {@link StoreDrainRace}:
 * the same sessions and contents), waits until they are durable, and the spool's files but its
 * lock are copied, as {@code SpoolTest.crashImage} does: what {@code kill -9} leaves on disk
 * (forced, as a restarted machine finds it).
 * Each round copies the image afresh ({@link #replay}) and times {@code replaySpool()} plus {@code
 * flushPending} until every write is stored; opening the spool (which reads and checks every
 * segment) is timed apart. Then the rows are counted, the distinct write ids, and the ids of the
 * crashed run.
 */
final class SpoolReplay {

    /** A spool image of {@code writes} undelivered writes whose ids start with {@code prefix}. */
    record Image(Path dir, long writes, String prefix, long bytes, int segments) {}

    /** One replay: the open, the replay until stored, and what the database holds after. */
    record Result(long replayed, long openNanos, long replayNanos, long rows, long distinctIds, long idsOfCrashedRun,
            long batches, long largestBatch, long replayThreadCpuNanos, long gcMillis) {
        double rowsPerSecond() {
            return replayed / (replayNanos / 1e9);
        }

        boolean everyIdLanded(long expected) {
            return replayed == expected && rows == expected && distinctIds == expected && idsOfCrashedRun == expected;
        }
    }

    private SpoolReplay() {}

    static Image makeImage(Path root, int turns) throws Exception {
        Path live = root.resolve("live");
        Path image = root.resolve("image");
        // The provider holds the first write it gets, so no write is delivered (the spool's own
        // committer thread still runs: a gated thread factory would hold it too).
        GatedProvider held = new GatedProvider("held", t -> true);
        MemoryManager manager = MemoryManager.builder().name("spool-replay-crashed").spool(Spool.open(live))
                .queueCapacity(turns).build();
        manager.addProvider(held);
        for (int i = 0; i < turns; i++) {
            if (!manager.syncAll("user message " + i, StoreDrainRace.ASSISTANT, "session-" + (i % 64))) {
                throw new IllegalStateException("write " + i + " was rejected");
            }
        }
        if (!manager.awaitDurable(Duration.ofMinutes(1))) {
            throw new IllegalStateException("the image's writes were not durable within a minute");
        }
        copySpool(live, image);
        manager.stop(Duration.ZERO); // abandons the queued writes; the live spool is not used again
        held.open();
        Files2.deleteTree(live);
        SpoolInspection inspection = SpoolInspection.of(image); // reads the files, opens nothing
        if (inspection.pending() != turns || inspection.segments().stream().map(SpoolInspection.Segment::idPrefix)
                .distinct().count() != 1) {
            throw new IllegalStateException("the image is not " + turns + " pending writes of one run: " + inspection);
        }
        long bytes = inspection.segments().stream().mapToLong(SpoolInspection.Segment::bytes).sum();
        int segments = inspection.segments().size();
        String prefix = inspection.segments().get(0).idPrefix();
        return new Image(image, turns, prefix, bytes, segments);
    }

    /** Copies the image, opens a manager on it with the store on a fresh file, and replays into it. */
    static Result replay(Image image, Path root) throws Exception {
        Path dir = root.resolve("round");
        Files2.deleteTree(dir);
        try {
            Path spoolDir = dir.resolve("spool");
            copySpool(image.dir(), spoolDir);
            Path file = dir.resolve("replay.db");
            JdbcMemoryProvider store = JdbcMemoryProvider.sqlite(file);
            long t0 = System.nanoTime();
            Spool spool = Spool.open(spoolDir);
            MemoryManager manager = MemoryManager.builder().name("spool-replay").spool(spool).build();
            long openNanos = System.nanoTime() - t0;
            // Used, not owned, as in StoreDrainRace: closing the store (a WAL checkpoint) is not timed.
            manager.useProvider(store);
            long backlog = manager.figures().spool().backlog();
            if (backlog != image.writes()) {
                throw new IllegalStateException("the new manager sees a backlog of " + backlog + ", not "
                        + image.writes());
            }
            long gcBefore = gcMillis();
            long cpuBefore = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
            long start = System.nanoTime();
            long replayed = manager.replaySpool(); // reads, decodes and queues on this thread; the writer stores
            long replayCpu = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() - cpuBefore;
            if (!manager.flushPending(Duration.ofMinutes(5))) {
                throw new IllegalStateException("the replay did not finish within 5 minutes: " + manager.figures());
            }
            long nanos = System.nanoTime() - start;
            long gc = gcMillis() - gcBefore;
            WriteFigures figures = manager.figures();
            if (figures.failed() > 0) {
                throw new IllegalStateException("replayed writes failed: " + figures);
            }
            manager.stop(Duration.ofSeconds(30));
            store.close();
            long[] counts = count(file, image.prefix());
            return new Result(replayed, openNanos, nanos, counts[0], counts[1], counts[2], figures.batches(),
                    figures.largestBatch(), replayCpu, gc);
        } finally {
            Files2.deleteTree(dir);
        }
    }

    static long gcMillis() {
        return ManagementFactory.getGarbageCollectorMXBeans().stream()
                .mapToLong(GarbageCollectorMXBean::getCollectionTime).sum();
    }

    /** Rows, distinct write ids, and write ids starting with {@code prefix + ':'}. */
    private static long[] count(Path file, String prefix) throws SQLException {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath());
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT COUNT(*), COUNT(DISTINCT write_id), "
                        + "SUM(CASE WHEN substr(write_id, 1, " + (prefix.length() + 1) + ") = '" + prefix + ":' "
                        + "THEN 1 ELSE 0 END) FROM memlife_turns")) {
            rs.next();
            return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
        }
    }

    /**
     * A spool's files but its lock, as a crash leaves them (see {@code SpoolTest.crashImage}), then
     * forced to disk: after a crash and a restart the files are on disk, not hundreds of megabytes
     * of dirty page cache that the kernel would write back during the timed replay, competing with
     * the store's own forces.
     */
    static void copySpool(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                if (!f.getFileName().toString().equals("spool.lock")) {
                    Path copy = to.resolve(f.getFileName());
                    Files.copy(f, copy);
                    try (FileChannel ch = FileChannel.open(copy, StandardOpenOption.WRITE)) {
                        ch.force(true);
                    }
                }
            }
        }
        try (FileChannel d = FileChannel.open(to, StandardOpenOption.READ)) {
            d.force(true);
        }
    }
}
