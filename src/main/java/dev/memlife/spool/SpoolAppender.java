package dev.memlife.spool;

import static dev.memlife.spool.SpoolFiles.position;

import dev.memlife.spool.MappedSegment.Window;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Where a spool's appends go: each record is sealed and stored straight into the mapped window of
 * the segment being written ({@link MappedSegment}), so it is in the kernel's page cache, safe
 * from a crash of the process, before the append returns. A record that does not fit in the
 * window gets the next window of the segment, or a new segment if it would pass the segment's
 * size; both are mapped by {@link #prepare}, which may fail and so comes before the write is
 * reserved in the manager's queue, never by {@link #append}, which must not fail.
 *
 * <p>The committer {@linkplain #take takes} what the appends left since its last take: how far
 * they reach, and the windows they moved past, to force, unmap and, at the end of a segment, seal.
 * Everything but {@link #appendedPosition} is used under the spool's order lock.
 */
final class SpoolAppender {

    private static final VarHandle APPENDED_POSITION;

    static {
        try {
            APPENDED_POSITION = MethodHandles.lookup().findVarHandle(SpoolAppender.class, "appendedPosition",
                    long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * A window the appends moved past: records reach {@code end} in it, and if {@code lastOfSegment}
     * the segment ends there.
     */
    record Retired(Window window, long end, boolean lastOfSegment) {}

    /**
     * What a commit takes: how far the appends reach, the writes and bytes since the last take, the
     * segments they started, the windows they moved past (in order) and the window written now
     * (null once the appender is closed).
     */
    record Taken(long position, long writes, long bytes, int segmentsStarted, List<Retired> retired,
            Window current) {}

    private final Path dir;
    private final long segmentBytes;
    /** Called, under the order lock, by the first append after a take: the committer has work. */
    private final Runnable firstOfCommit;
    private final CRC32C sealCrc = new CRC32C();
    private byte[] header;
    /** The window appends go into; null once closed. */
    private Window window;
    /** The segment offset just past the last record. */
    private long end;
    /** The window {@link #prepare} mapped for the next append, which does not fit in {@link #window}. */
    private Window next;
    private final List<Retired> retired = new ArrayList<>();
    /** Writes and bytes appended since the last take, and the segments they started. */
    private long writesSinceTake;
    private long bytesSinceTake;
    private int rolls;
    /** The time the records of the commit being gathered get: read when its first write came. */
    private long clockMillis;
    /** Whether the next append starts a new segment, though it would fit in this one. */
    private boolean rollNext;
    private long appendedCount;
    /** Bytes appended this run: records, and the headers of the segments they started. */
    private long appendedBytes;
    /** Written with release semantics (see {@link #append}); read anywhere. */
    private volatile long appendedPosition;

    SpoolAppender(Path dir, long segmentBytes, Runnable firstOfCommit) {
        this.dir = dir;
        this.segmentBytes = segmentBytes;
        this.firstOfCommit = firstOfCommit;
    }

    /** At attach: creates this run's first segment, numbered {@code number}, with {@code header}. */
    void start(long number, byte[] header) throws IOException {
        this.header = header;
        this.window = MappedSegment.create(dir, number, header, windowBytes(0, header.length));
        this.end = header.length;
        this.appendedPosition = position(number, end);
    }

    /**
     * Makes room for a record of {@code length} bytes: maps the window it goes into if it does not
     * fit in this one (a new segment's, if it would pass this segment's size or {@link
     * #rollBeforeNext} asked for one). Called before the write is reserved, so a failure refuses it.
     *
     * @throws IOException if the window or segment cannot be mapped or created (a full disk, say)
     * @throws IllegalStateException if the appender is closed
     */
    void prepare(int length) throws IOException {
        if (window == null) {
            throw new IllegalStateException("spool " + dir + " is closed");
        }
        if (startsSegment(length)) {
            long number = window.segment().number + 1;
            if (next == null || next.segment().number != number || next.end() < header.length + length) {
                discardNext();
                next = MappedSegment.create(dir, number, header, windowBytes(0, header.length + length));
            }
        } else if (end + length > window.end()) {
            if (next == null || next.segment() != window.segment() || next.start() != end || next.end() < end + length) {
                discardNext();
                next = window.segment().map(end, windowBytes(end, length));
            }
        }
    }

    /** Whether a record of {@code length} bytes starts a new segment: this one holds a record, and it would not fit. */
    private boolean startsSegment(int length) {
        return end > header.length && (rollNext || end + length > segmentBytes);
    }

    /**
     * The size of a window mapped at segment offset {@code start} for {@code need} bytes: {@link
     * MappedSegment#WINDOW}, or less where the segment ends sooner, and never less than needed.
     */
    private int windowBytes(long start, int need) {
        return (int) Math.max(need, Math.min(MappedSegment.WINDOW, segmentBytes - start));
    }

    private void discardNext() {
        if (next != null) {
            next.unmap();
            if (next.segment() != window.segment()) {
                next.segment().discard();
            }
            next = null;
        }
    }

    /**
     * Seals a record and stores it: with its sequence number and the time ({@link SpoolRecord#seal})
     * unless it is sealed already (a failed write carried over), into the window {@link #prepare}
     * made room in. Once this returns, the record is in the page cache.
     *
     * @param record a record at the array's start; a new write's is in its caller's scratch buffer,
     *     and is sealed there
     * @return the record's position: just past its end
     */
    long append(byte[] record, boolean seal, long seq) {
        int length = SpoolRecord.length(record);
        if (window == null || startsSegment(length) || end + length > window.end()) {
            try {
                prepare(length); // a no-op when the caller prepared, as it must to be refused cleanly
            } catch (IOException e) {
                throw new UncheckedIOException("could not map room for a record in spool " + dir, e);
            }
            if (startsSegment(length)) {
                retired.add(new Retired(window, end, true));
                end = header.length;
                appendedBytes += header.length;
                rolls++;
                rollNext = false;
            } else {
                retired.add(new Retired(window, end, false));
            }
            window = next;
            next = null;
        }
        boolean first = writesSinceTake == 0;
        if (first) {
            clockMillis = System.currentTimeMillis(); // one clock read per commit, not per write
        }
        if (seal) {
            SpoolRecord.seal(record, 0, length, seq, clockMillis, sealCrc);
        }
        window.put(end, record, length);
        end += length;
        writesSinceTake++;
        bytesSinceTake += length;
        appendedCount++;
        appendedBytes += length;
        long position = position(window.segment().number, end);
        // A release store, not a volatile one: readers see it in order with the stored record, and
        // the one place that needs a full fence after it, the committer's wake-up, has its own.
        APPENDED_POSITION.setRelease(this, position);
        if (first) {
            firstOfCommit.run(); // the first write of a commit wakes the committer; the rest ride along
        }
        return position;
    }

    /**
     * Makes the next append start a new segment even if it fits in this one, so that this one is
     * sealed and, once the delivery mark passes its end, deleted; nothing happens if it holds no
     * record yet.
     */
    void rollBeforeNext() {
        rollNext = end > header.length;
    }

    /** Takes what the appends left since the last take: the retired windows are the committer's now. */
    Taken take() {
        Taken t = new Taken(appendedPosition, writesSinceTake, bytesSinceTake, rolls, List.copyOf(retired), window);
        retired.clear();
        writesSinceTake = 0;
        bytesSinceTake = 0;
        rolls = 0;
        return t;
    }

    /**
     * Ends the appends, at close: the window being written is retired as its segment's last, for
     * the committer's final take, and a window mapped ahead is discarded. Later appends are refused.
     */
    void close() {
        if (window != null) {
            discardNext();
            retired.add(new Retired(window, end, true));
            window = null;
        }
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
