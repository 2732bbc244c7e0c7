package dev.memlife.spool;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** A segment read whole into memory, for tests that look at its records one by one. */
final class SegmentBytes {

    /**
     * A record read back: where it starts in the segment, and its payload's length.
     */
    record Entry(int offset, int length) {
        /** {@return where the payload starts in the segment} */
        int payloadOffset() {
            return offset + SegmentFormat.RECORD_OVERHEAD;
        }

        /** {@return where the record ends in the segment: where the next one starts} */
        int end() {
            return payloadOffset() + length;
        }
    }

    /**
     * What a segment holds: {@link SegmentFormat.Summary}'s findings, every record that checked,
     * and the bytes that hold their payloads.
     */
    record Contents(String idPrefix, int headerLength, List<Entry> entries, List<SegmentFormat.Corruption> corrupt, long validLength,
            long tornTailBytes, long unwrittenBytes, byte[] bytes) {

        /** {@return a copy of an entry's payload} */
        byte[] payload(Entry e) {
            return Arrays.copyOfRange(bytes, e.payloadOffset(), e.end());
        }
    }

    private SegmentBytes() {}

    /** Reads {@code bytes} with {@link SegmentFormat#read(String, SegmentWindow, SegmentFormat.RecordVisitor)}. */
    static Contents read(String name, byte[] bytes) {
        List<Entry> entries = new ArrayList<>();
        SegmentFormat.Summary s = SegmentFormat.read(name, SegmentWindow.of(bytes), (offset, b, payloadAt, length) -> {
            entries.add(new Entry((int) offset, length));
            return true;
        });
        int headerLength = SegmentFormat.header(s.idPrefix()).length;
        return new Contents(s.idPrefix(), headerLength, entries, s.corrupt(), s.validLength(), s.tornTailBytes(),
                s.unwrittenBytes(), bytes);
    }

    static Contents read(Path file) throws IOException {
        return read(file.toString(), Files.readAllBytes(file));
    }
}
