package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The spool's in-memory buffer: records go into chunks, never across two and each chunk in one
 * segment; what a commit takes is every record appended since, in order; the chunks it gives back
 * are reused, up to {@link SpoolBuffer#CHUNKS_KEPT}.
 */
class SpoolBufferTest {

    private static final byte[] HEADER = new byte[20];

    /** A record of {@code length} bytes (its length prefix first), every other byte {@code mark}. */
    private static byte[] record(int length, int mark) {
        byte[] r = new byte[length];
        Arrays.fill(r, (byte) mark);
        SegmentFormat.putInt(r, 0, length - SegmentFormat.RECORD_OVERHEAD);
        return r;
    }

    @Test
    void aTakeHoldsEveryRecordInOrderInChunksOfOneSegmentEachAndNoRecordSpansTwoChunks() {
        long segmentBytes = 600_000; // a few chunks a segment: the appends below start several
        AtomicInteger wakes = new AtomicInteger();
        SpoolBuffer buffer = new SpoolBuffer(segmentBytes, wakes::incrementAndGet);
        buffer.start(3, HEADER);
        Random random = new Random(7);
        Map<Long, ByteArrayOutputStream> expected = new LinkedHashMap<>();
        List<Long> positions = new ArrayList<>();
        long segment = 3;
        long end = HEADER.length;
        for (int i = 0; i < 3_000; i++) {
            int length = i == 1_000 ? SpoolBuffer.CHUNK + 5_000 : 8 + random.nextInt(900); // one record larger than a chunk
            byte[] r = record(length, i);
            if (end > HEADER.length && end + length > segmentBytes) {
                segment++;
                end = HEADER.length;
            }
            end += length;
            expected.computeIfAbsent(segment, s -> new ByteArrayOutputStream()).write(r, 0, length);
            positions.add(buffer.append(r, false, 0));
            assertThat(positions.get(i)).isEqualTo(SpoolFiles.position(segment, end));
        }
        assertThat(wakes).as("only the first append of a commit wakes the committer").hasValue(1);

        SpoolBuffer.Taken taken = buffer.take();

        assertThat(taken.writes()).isEqualTo(3_000);
        assertThat(taken.position()).isEqualTo(positions.get(2_999));
        assertThat(taken.segmentsStarted()).isEqualTo(expected.size() - 1);
        Map<Long, ByteArrayOutputStream> found = new LinkedHashMap<>();
        long bytes = 0;
        long previousSegment = 3;
        for (SpoolBuffer.Chunk chunk : taken.chunks()) {
            assertThat(chunk.segment()).isGreaterThanOrEqualTo(previousSegment);
            previousSegment = chunk.segment();
            assertThat(chunk.length()).isPositive().isLessThanOrEqualTo(chunk.bytes().length);
            if (chunk.bytes().length > SpoolBuffer.CHUNK) {
                assertThat(chunk.length()).as("a chunk of its own for the large record").isEqualTo(SpoolBuffer.CHUNK + 5_000);
            }
            assertRecordsEndAtTheChunksEnd(chunk);
            found.computeIfAbsent(chunk.segment(), s -> new ByteArrayOutputStream()).write(chunk.bytes(), 0,
                    chunk.length());
            bytes += chunk.length();
        }
        assertThat(bytes).isEqualTo(taken.bytes());
        assertThat(found.keySet()).containsExactlyElementsOf(expected.keySet());
        expected.forEach((s, out) -> assertThat(found.get(s).toByteArray()).as("segment %d", s)
                .isEqualTo(out.toByteArray()));

        SpoolBuffer.Taken empty = buffer.take();
        assertThat(empty.chunks()).isEmpty();
        assertThat(empty.writes()).isZero();
        assertThat(empty.position()).isEqualTo(taken.position());
    }

    /** Walks the chunk's records by their length prefixes: the last ends exactly at the chunk's length. */
    private static void assertRecordsEndAtTheChunksEnd(SpoolBuffer.Chunk chunk) {
        int at = 0;
        while (at < chunk.length()) {
            at += SegmentFormat.RECORD_OVERHEAD + SpoolRecord.getInt(chunk.bytes(), at);
        }
        assertThat(at).isEqualTo(chunk.length());
    }

    @Test
    void chunksGivenBackAreReusedAndAtMostChunksKeptAreHeldAfterABurst() {
        SpoolBuffer buffer = new SpoolBuffer(1L << 40, () -> {});
        buffer.start(1, HEADER);
        int perChunk = SpoolBuffer.CHUNK / 1_000;
        for (int i = 0; i < perChunk * (SpoolBuffer.CHUNKS_KEPT * 3); i++) { // a burst of three times the chunks kept
            buffer.append(record(1_000, i), false, 0);
        }
        SpoolBuffer.Taken burst = buffer.take();
        assertThat(burst.chunks()).hasSizeGreaterThanOrEqualTo(SpoolBuffer.CHUNKS_KEPT * 3);
        assertThat(buffer.chunksKept()).isZero();

        buffer.giveBack(burst);
        assertThat(buffer.chunksKept()).isEqualTo(SpoolBuffer.CHUNKS_KEPT);

        buffer.append(record(1_000, 1), false, 0);
        SpoolBuffer.Taken next = buffer.take();
        assertThat(buffer.chunksKept()).isEqualTo(SpoolBuffer.CHUNKS_KEPT - 1);
        List<byte[]> burstArrays = burst.chunks().stream().map(SpoolBuffer.Chunk::bytes).toList();
        assertThat(burstArrays).as("the next append reuses a chunk given back")
                .anySatisfy(b -> assertThat(b).isSameAs(next.chunks().get(0).bytes()));
    }

    @Test
    void aRecordLargerThanAChunkIsNotKeptForReuse() {
        SpoolBuffer buffer = new SpoolBuffer(1L << 40, () -> {});
        buffer.start(1, HEADER);
        buffer.append(record(SpoolBuffer.CHUNK * 2, 1), false, 0);
        SpoolBuffer.Taken taken = buffer.take();
        assertThat(taken.chunks()).singleElement().satisfies(c -> assertThat(c.length()).isEqualTo(SpoolBuffer.CHUNK * 2));

        buffer.giveBack(taken);

        assertThat(buffer.chunksKept()).isZero();
    }
}
