package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where the spool's appends go: each record is in its segment file, as another reader of the file
 * sees it, the moment {@link SpoolAppender#append} returns, with no force; records never span two
 * windows, a segment is started where the next record would pass its size, and a take hands the
 * committer the windows the appends moved past, in order.
 */
@Timeout(30)
class SpoolAppenderTest {

    private static final byte[] HEADER = SegmentFormat.header("t");

    @TempDir
    Path dir;

    /** A record of {@code length} bytes (its length prefix first), every other byte {@code mark}. */
    private static byte[] record(int length, int mark) {
        byte[] r = new byte[length];
        Arrays.fill(r, (byte) (mark | 1)); // never zero: a record's bytes are told from unwritten space
        SegmentFormat.putInt(r, 0, length - SegmentFormat.RECORD_OVERHEAD);
        return r;
    }

    /** The file's bytes {@code [from, to)}, read through a channel of its own, not the mapping. */
    private static byte[] readFile(Path file, long from, long to) throws IOException {
        ByteBuffer into = ByteBuffer.allocate((int) (to - from));
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            while (into.hasRemaining() && ch.read(into, from + into.position()) >= 0) {
                // read on
            }
        }
        return into.array();
    }

    @Test
    void aRecordIsInItsFileTheMomentAppendReturnsAndSegmentsAndWindowsFollowTheSizes() throws IOException {
        long segmentBytes = 3L * MappedSegment.WINDOW; // three windows a segment: the appends below start several
        AtomicInteger wakes = new AtomicInteger();
        SpoolAppender appender = new SpoolAppender(dir, segmentBytes, wakes::incrementAndGet);
        appender.start(3, HEADER);
        Random random = new Random(7);
        Map<Long, ByteArrayOutputStream> expected = new LinkedHashMap<>();
        long segment = 3;
        long end = HEADER.length;
        long lastPosition = 0;
        for (int i = 0; i < 12_000; i++) {
            int length = i == 5_000 ? MappedSegment.WINDOW + 5_000 : 8 + random.nextInt(900); // one larger than a window
            byte[] r = record(length, i);
            byte[] copy = r.clone();
            if (end > HEADER.length && end + length > segmentBytes) {
                segment++;
                end = HEADER.length;
            }
            appender.prepare(length);
            long position = appender.append(r, false, 0);
            assertThat(position).isEqualTo(SpoolFiles.position(segment, end + length));
            assertThat(readFile(SpoolFiles.segmentPath(dir, segment), end, end + length))
                    .as("record %d, read from the file at once", i).isEqualTo(copy);
            expected.computeIfAbsent(segment, s -> new ByteArrayOutputStream()).write(copy, 0, length);
            end += length;
            lastPosition = position;
        }
        assertThat(wakes).as("only the first append of a commit wakes the committer").hasValue(1);

        SpoolAppender.Taken taken = appender.take();

        assertThat(taken.writes()).isEqualTo(12_000);
        assertThat(taken.position()).isEqualTo(lastPosition);
        assertThat(taken.segmentsStarted()).isEqualTo(expected.size() - 1);
        assertThat(taken.current().segment().number).isEqualTo(segment);
        long previous = -1;
        List<Long> sealedAt = new ArrayList<>();
        for (SpoolAppender.Retired r : taken.retired()) {
            long at = SpoolFiles.position(r.window().segment().number, r.window().start());
            assertThat(at).as("windows retired in order").isGreaterThan(previous);
            previous = at;
            assertThat(r.end()).isBetween(r.window().start(), r.window().end());
            if (r.lastOfSegment()) {
                sealedAt.add(r.window().segment().number);
            }
        }
        assertThat(sealedAt).as("each segment but the last ends in a retired window").hasSize(expected.size() - 1);
        assertThat(taken.retired()).anySatisfy(r -> assertThat(r.window().bytes().capacity())
                .as("a window large enough for the large record").isGreaterThanOrEqualTo(MappedSegment.WINDOW + 5_000));
        expected.forEach((s, out) -> {
            byte[] want = out.toByteArray();
            try {
                assertThat(readFile(SpoolFiles.segmentPath(dir, s), HEADER.length, HEADER.length + want.length))
                        .as("segment %d", s).isEqualTo(want);
                assertThat(readFile(SpoolFiles.segmentPath(dir, s), 0, HEADER.length)).isEqualTo(HEADER);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        });

        SpoolAppender.Taken empty = appender.take();
        assertThat(empty.retired()).isEmpty();
        assertThat(empty.writes()).isZero();
        assertThat(empty.position()).isEqualTo(taken.position());
        release(taken);
        appender.close();
        release(appender.take());
    }

    @Test
    void anInterruptedAppenderMapsItsWindowsKeepsItsInterruptAndNeverClosesTheFile() throws IOException {
        SpoolAppender appender = new SpoolAppender(dir, 1L << 30, () -> {});
        appender.start(1, HEADER);
        byte[] r = record(100_000, 5);
        long expectedEnd = HEADER.length;
        Thread.currentThread().interrupt();
        try {
            for (int i = 0; i < 30; i++) { // three windows' worth, each mapped by an interrupted caller
                appender.prepare(r.length);
                appender.append(r.clone(), false, 0);
                expectedEnd += r.length;
                assertThat(Thread.currentThread().isInterrupted()).as("the caller's interrupt is kept").isTrue();
            }
        } finally {
            Thread.interrupted();
        }
        assertThat(appender.appendedPosition()).isEqualTo(SpoolFiles.position(1, expectedEnd));
        assertThat(readFile(SpoolFiles.segmentPath(dir, 1), expectedEnd - r.length, expectedEnd)).isEqualTo(r);
        SpoolAppender.Taken taken = appender.take();
        assertThat(taken.retired()).hasSizeGreaterThanOrEqualTo(2);
        release(taken);
        appender.close();
        release(appender.take());
    }

    @Test
    void aClosedAppenderRefusesToPrepareAndAWindowMappedAheadIsDiscarded() throws IOException {
        SpoolAppender appender = new SpoolAppender(dir, 4096, () -> {});
        appender.start(1, HEADER);
        appender.prepare(3000);
        appender.append(record(3000, 1), false, 0);
        appender.prepare(3000); // maps segment 2 ahead: the write is then not reserved, say
        assertThat(Files.exists(SpoolFiles.segmentPath(dir, 2))).isTrue();

        appender.close();

        assertThat(Files.exists(SpoolFiles.segmentPath(dir, 2))).as("the segment mapped ahead, never used").isFalse();
        assertThatThrownBy(() -> appender.prepare(10)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        SpoolAppender.Taken last = appender.take();
        assertThat(last.current()).isNull();
        assertThat(last.retired()).singleElement().satisfies(r -> {
            assertThat(r.lastOfSegment()).isTrue();
            assertThat(r.end()).isEqualTo(HEADER.length + 3000);
        });
        release(last);
    }

    /** Unmaps the windows taken and seals their segments, as the committer does. */
    private static void release(SpoolAppender.Taken taken) {
        for (SpoolAppender.Retired r : taken.retired()) {
            r.window().unmap();
            if (r.lastOfSegment()) {
                r.window().segment().seal(r.end());
            }
        }
    }
}
