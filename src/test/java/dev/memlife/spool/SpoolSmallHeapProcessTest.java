package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.memlife.MemoryManager;
import dev.memlife.testing.GatedProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A spool a crash left with a whole default segment (64 MiB) is replayed by a JVM whose heap is
 * smaller than that segment: opening and replaying read a segment a chunk at a time, so a service
 * started with a small heap after a crash replays its spool instead of failing with an
 * {@link OutOfMemoryError} at the worst moment. Real child JVM, real SQLite store.
 */
@Timeout(180)
class SpoolSmallHeapProcessTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    /** Writes of about 1 KiB each: enough to fill the first 64 MiB segment and start a second. */
    private static final int WRITES = 66_000;
    private static final String REPLY = "a reply of about a kilobyte. ".repeat(35);

    @TempDir
    Path tmp;

    @Test
    void aSpoolWithASegmentLargerThanTheHeapIsReplayedWhole() throws Exception {
        Path dir = tmp.resolve("spool");
        GatedProvider held = new GatedProvider("store", t -> true); // holds the first write: none is delivered
        MemoryManager crashed = MemoryManager.builder().name("crashed").spool(Spool.open(dir))
                .queueCapacity(WRITES).build();
        crashed.addProvider(held);
        for (int i = 0; i < WRITES; i++) {
            assertThat(crashed.syncAll("u" + i, i + " " + REPLY, "s" + (i % 8))).isTrue();
        }
        assertThat(crashed.awaitDurable(WAIT)).isTrue();
        assertThat(held.awaitHeld(WAIT)).isTrue();
        Path image = tmp.resolve("image");
        SpoolTest.crashImage(dir, image);
        crashed.stop(Duration.ZERO);
        held.open();

        List<Path> segments = SpoolTest.segments(image);
        assertThat(segments).hasSize(2);
        long firstSegment = Files.size(segments.get(0));
        assertThat(firstSegment).as("the first segment is a whole default one").isGreaterThan(
                Spool.DEFAULT_SEGMENT_BYTES - 2 * 1024);
        SpoolInspection inspection = SpoolInspection.of(image);
        assertThat(inspection.pending()).isEqualTo(WRITES);
        String prefix = inspection.segments().get(0).idPrefix();

        Path db = tmp.resolve("store.db");
        Files.createDirectories(tmp.resolve("stderr"));
        long heap = 40L << 20;
        try (ChildJvm child = ChildJvm.start("small-heap", tmp.resolve("stderr"), List.of("-Xmx" + (heap >> 20) + "m"),
                SmallHeapReplayChildMain.class, image.toString(), db.toString())) {
            long maxHeap = Long.parseLong(child.awaitLine("STARTING", WAIT).split("=")[1]);
            assertThat(maxHeap).as("the child's heap is smaller than the segment it replays")
                    .isLessThan(firstSegment);
            assertThat(child.awaitLine("REPLAYED", WAIT)).isEqualTo("REPLAYED " + WRITES);
            assertThat(child.awaitLine("DRAINED", WAIT))
                    .isEqualTo("DRAINED delivered=" + WRITES + " failed=0 complete=true");
            assertThat(child.awaitExit(WAIT)).as("exit status; stderr:\n%s", child.stderr()).isZero();
        }

        List<String> expected = IntStream.rangeClosed(1, WRITES).mapToObj(seq -> prefix + ':' + seq).toList();
        assertThat(storedIds(db)).as("every write stored once, in order, with its id").isEqualTo(expected);
        assertThat(SpoolInspection.of(image).pending()).isZero();
    }

    private static List<String> storedIds(Path db) throws Exception {
        List<String> ids = new ArrayList<>();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db.toAbsolutePath());
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT write_id FROM memlife_turns ORDER BY id")) {
            while (rs.next()) {
                ids.add(rs.getString(1));
            }
        }
        return ids;
    }
}
