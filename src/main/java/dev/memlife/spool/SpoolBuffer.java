package dev.memlife.spool;

import static dev.memlife.spool.SpoolFiles.position;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The writes a spool's callers appended since its committer last took them: records in memory,
 * in queue order, in chunks of {@link #CHUNK} bytes. A record never spans two chunks, and a chunk
 * holds the records of one segment. Chunks are reused: the committer gives back those it wrote,
 * and up to {@link #CHUNKS_KEPT} of them wait for the next appends. So a burst that outruns the
 * disk for a while holds its records in chunks, none of them copied again as the backlog grows,
 * and leaves at most {@code CHUNKS_KEPT} chunks held once it was written. Everything but {@link
 * #appendedPosition} is used under the spool's order lock: appends by the callers, {@link #take}
 * and {@link #giveBack} by the committer.
 */
final class SpoolBuffer {

    /**
     * The bytes of a chunk: 128 KiB, a few hundred records; a record larger than that gets a chunk
     * of its own size. Small enough that the chunks a busy spool cycles through stay in a core's
     * cache, and that none is a humongous object for G1 (half a region of at least 1 MiB).
     */
    static final int CHUNK = 128 * 1024;
    /** The most written chunks kept for reuse: 2 MiB. */
    static final int CHUNKS_KEPT = 16;

    private static final VarHandle APPENDED_POSITION;

    static {
        try {
            APPENDED_POSITION = MethodHandles.lookup().findVarHandle(SpoolBuffer.class, "appendedPosition", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The records {@code bytes[0, length)}, all of segment {@code segment}. */
    record Chunk(byte[] bytes, int length, long segment) {}

    /**
     * What a commit takes: the chunks in order, their bytes, how far they reach, their writes, and
     * how many segments they start.
     */
    record Taken(List<Chunk> chunks, long bytes, long position, long writes, int segmentsStarted) {}

    private final long segmentBytes;
    /** Called, under the order lock, by the first append after a take: the committer has work. */
    private final Runnable firstOfCommit;
    private final CRC32C sealCrc = new CRC32C();
    /** Chunks written and given back, the last given back first: its bytes are the likeliest cached. */
    private final ArrayDeque<byte[]> free = new ArrayDeque<>();
    /** Chunks filled since the last take, before {@link #chunk}. */
    private final List<Chunk> filled = new ArrayList<>();
    private byte[] header;
    /** The chunk appends go into, or null before the first append after a take. */
    private byte[] chunk;
    private int used;
    private long chunkSegment;
    /** Bytes appended since the last take, and the segments they started. */
    private long buffered;
    private int rolls;
    /** The time the records of the commit being gathered get: read when its first write came. */
    private long clockMillis;
    private long segment;
    private long segmentEnd;
    /** Whether the next append starts a new segment, though it would fit in this one. */
    private boolean rollNext;
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
     * Copies a record into a chunk, starting a new segment first if it would not fit in this one,
     * and seals it with its sequence number and the time ({@link SpoolRecord#seal}) unless it is
     * sealed already (a failed write carried over).
     *
     * @param record a record at the array's start; a new write's is in its caller's scratch buffer
     * @return the record's position: just past its end
     */
    long append(byte[] record, boolean seal, long seq) {
        int length = SpoolRecord.length(record);
        if (segmentEnd > header.length && (rollNext || segmentEnd + length > segmentBytes)) {
            rollNext = false;
            segment++;
            segmentEnd = header.length;
            appendedBytes += header.length;
            rolls++;
        }
        if (chunk == null || chunkSegment != segment || used + length > chunk.length) {
            nextChunk(length);
        }
        boolean first = buffered == 0;
        if (first) {
            clockMillis = System.currentTimeMillis(); // one clock read per commit, not per write
        }
        System.arraycopy(record, 0, chunk, used, length);
        if (seal) {
            SpoolRecord.seal(chunk, used, length, seq, clockMillis, sealCrc);
        }
        used += length;
        buffered += length;
        segmentEnd += length;
        appendedCount++;
        appendedBytes += length;
        long position = position(segment, segmentEnd);
        // A release store, not a volatile one: readers see it in order with the chunk's bytes, and
        // the one place that needs a full fence after it, the committer's wake-up, has its own.
        APPENDED_POSITION.setRelease(this, position);
        if (first) {
            firstOfCommit.run(); // the first write of a commit wakes the committer; the rest ride along
        }
        return position;
    }

    /** Sets the chunk being filled aside and starts one for a record of {@code length} bytes in this segment. */
    private void nextChunk(int length) {
        setAsideFilled();
        if (chunk == null || chunk.length < length) { // an empty chunk of enough room is kept, for the new segment
            if (chunk != null) {
                keep(chunk);
            }
            chunk = length > CHUNK ? new byte[length] : free.isEmpty() ? new byte[CHUNK] : free.pop();
        }
        used = 0;
        chunkSegment = segment;
    }

    /**
     * Makes the next append start a new segment even if it fits in this one, so that this one is
     * sealed and, once the delivery mark passes its end, deleted; nothing happens if it holds no
     * record yet.
     */
    void rollBeforeNext() {
        rollNext = segmentEnd > header.length;
    }

    /** Takes what was appended since the last take: the chunks are the committer's until {@link #giveBack}. */
    Taken take() {
        List<Chunk> chunks;
        setAsideFilled();
        if (filled.isEmpty()) {
            chunks = List.of();
        } else {
            chunks = new ArrayList<>(filled);
            filled.clear();
        }
        Taken t = new Taken(chunks, buffered, appendedPosition, appendedCount - takenCount, rolls);
        takenCount = appendedCount;
        buffered = 0;
        rolls = 0;
        return t;
    }

    /** Moves the chunk being filled, if it holds a record, to the filled ones; a new one is started for the next. */
    private void setAsideFilled() {
        if (chunk != null && used > 0) {
            filled.add(new Chunk(chunk, used, chunkSegment));
            chunk = null;
        }
    }

    /** The committer is done with a take's chunks: they are kept for reuse, up to {@link #CHUNKS_KEPT}. */
    void giveBack(Taken written) {
        for (Chunk c : written.chunks()) {
            keep(c.bytes());
        }
    }

    private void keep(byte[] bytes) {
        if (bytes.length == CHUNK && free.size() < CHUNKS_KEPT) {
            free.push(bytes);
        }
    }

    /** {@return how many chunks wait for reuse; for tests} */
    int chunksKept() {
        return free.size();
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
