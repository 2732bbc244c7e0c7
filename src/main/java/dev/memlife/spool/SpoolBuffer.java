package dev.memlife.spool;

import static dev.memlife.spool.SpoolFiles.position;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The writes a spool's callers appended since its committer last took them: records in memory,
 * in queue order, with the places where they start a new segment. Everything but {@link
 * #appendedPosition} is used under the spool's order lock: appends by the callers, {@link #take}
 * by the committer.
 */
final class SpoolBuffer {

    private static final VarHandle APPENDED_POSITION;

    static {
        try {
            APPENDED_POSITION = MethodHandles.lookup().findVarHandle(SpoolBuffer.class, "appendedPosition", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** What a commit takes: the records, how far they reach, and where segments start among them. */
    record Taken(byte[] bytes, int length, long position, long writes, List<long[]> rolls) {}

    private final long segmentBytes;
    /** Called, under the order lock, by the first append after a take: the committer has work. */
    private final Runnable firstOfCommit;
    private final CRC32C sealCrc = new CRC32C();
    private byte[] header;
    private byte[] buffer = new byte[64 * 1024];
    private byte[] spare = new byte[64 * 1024];
    private int buffered;
    /** Where the buffer starts a new segment: offsets in the buffer, and the new segments' numbers. */
    private final List<long[]> rolls = new ArrayList<>();
    /** The time the records of the commit being gathered get: read when its first write came. */
    private long clockMillis;
    private long segment;
    private long segmentEnd;
    private long appendedCount;
    private long takenCount;
    /** Bytes appended this run: records, and the headers of the segments they started. */
    private long appendedBytes;
    /** Written with release semantics (see {@link #append}); read anywhere. */
    private volatile long appendedPosition;

    SpoolBuffer(long segmentBytes, Runnable firstOfCommit) {
        this.segmentBytes = segmentBytes;
        this.firstOfCommit = firstOfCommit;
    }

    /** At attach: appends go into {@code segment}, just created with {@code header}. */
    void start(long segment, byte[] header) {
        this.header = header;
        this.segment = segment;
        this.segmentEnd = header.length;
        this.appendedPosition = position(segment, header.length);
    }

    /**
     * Copies a record into the buffer, starting a new segment first if it would not fit in this
     * one, and seals it with its sequence number and the time ({@link SpoolRecord#seal}) unless it
     * is sealed already (a failed write carried over).
     *
     * @param record a record at the array's start; a new write's is in its caller's scratch buffer
     * @return the record's position: just past its end
     */
    long append(byte[] record, boolean seal, long seq) {
        int length = SpoolRecord.length(record);
        if (segmentEnd > header.length && segmentEnd + length > segmentBytes) {
            segment++;
            segmentEnd = header.length;
            rolls.add(new long[] {buffered, segment});
            appendedBytes += header.length;
        }
        if (buffered + length > buffer.length) {
            buffer = Arrays.copyOf(buffer, Math.max(buffer.length * 2, buffered + length));
        }
        boolean first = buffered == 0;
        if (first) {
            clockMillis = System.currentTimeMillis(); // one clock read per commit, not per write
        }
        System.arraycopy(record, 0, buffer, buffered, length);
        if (seal) {
            SpoolRecord.seal(buffer, buffered, length, seq, clockMillis, sealCrc);
        }
        buffered += length;
        segmentEnd += length;
        appendedCount++;
        appendedBytes += length;
        long position = position(segment, segmentEnd);
        // A release store, not a volatile one: readers see it in order with the buffer's bytes, and
        // the one place that needs a full fence after it, the committer's wake-up, has its own.
        APPENDED_POSITION.setRelease(this, position);
        if (first) {
            firstOfCommit.run(); // the first write of a commit wakes the committer; the rest ride along
        }
        return position;
    }

    /** Takes what was appended since the last take; the buffer starts empty again (the spare one). */
    Taken take() {
        Taken t = new Taken(buffer, buffered, appendedPosition, appendedCount - takenCount,
                rolls.isEmpty() ? List.of() : new ArrayList<>(rolls));
        takenCount = appendedCount;
        rolls.clear();
        buffer = spare;
        spare = t.bytes();
        buffered = 0;
        return t;
    }

    /** {@return the position of the last record appended; this run's first segment's header before any} */
    long appendedPosition() {
        return appendedPosition;
    }

    long appendedCount() {
        return appendedCount;
    }

    long appendedBytes() {
        return appendedBytes;
    }
}
