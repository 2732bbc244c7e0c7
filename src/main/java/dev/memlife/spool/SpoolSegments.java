package dev.memlife.spool;

import static dev.memlife.spool.SpoolFiles.offset;
import static dev.memlife.spool.SpoolFiles.position;
import static dev.memlife.spool.SpoolFiles.segment;
import static dev.memlife.spool.SpoolFiles.segmentPath;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A spool's segment files on disk and its delivery mark: this run's segment being written, the
 * sealed ones before it, each commit written and forced into them, and the segments the mark has
 * passed deleted. Not thread-safe: the spool uses it under its commit lock (only {@link #count}
 * and {@link #markTried} may be read anywhere).
 */
final class SpoolSegments {

    private static final Logger LOG = LoggerFactory.getLogger(Spool.class);

    private final Path dir;
    private final DeliveryMark mark;
    /** The spool's count of bytes on disk beyond this run's appends: deletions take from it. */
    private final AtomicLong bytes;
    /** Sealed segments on disk (from earlier runs, or rolled): number to size. */
    private final TreeMap<Long, Long> sealed = new TreeMap<>();
    private SegmentFile current;
    private byte[] header;
    private long markWritten;
    /** The last position {@link #markAndClean} was given, written or not; read anywhere. */
    private volatile long markTried;
    private volatile int count;

    /** The segments an open found, whose writes after {@code found.mark} are still to be delivered. */
    SpoolSegments(Path dir, DeliveryMark mark, SpoolScan found, AtomicLong bytes) {
        this.dir = dir;
        this.mark = mark;
        this.bytes = bytes;
        this.markWritten = found.mark;
        this.markTried = found.mark;
        this.sealed.putAll(found.segments);
        this.count = sealed.size();
        bytes.addAndGet(found.bytes());
    }

    /** Creates this run's first segment, numbered {@code number}, with {@code header} (forced). */
    void start(long number, byte[] header) throws IOException {
        current = SegmentFile.create(number, segmentPath(dir, number), header);
        this.header = header;
        count = sealed.size() + 1;
        bytes.addAndGet(header.length);
    }

    /**
     * Writes a commit's records and forces them: each segment the appends started is created (its
     * header and directory forced) after the one before it is written, forced and sealed.
     *
     * @param chunks the records, in order, each chunk in one segment: this one or a later one
     */
    void write(List<SpoolBuffer.Chunk> chunks) throws IOException {
        for (SpoolBuffer.Chunk chunk : chunks) {
            while (chunk.segment() > current.number) {
                roll();
            }
            current.write(chunk.bytes(), 0, chunk.length());
        }
        current.force();
    }

    /** Forces and seals the segment being written, and creates the next. */
    private void roll() throws IOException {
        current.force();
        sealed.put(current.number, current.size());
        current.close();
        long next = current.number + 1;
        current = SegmentFile.create(next, segmentPath(dir, next), header);
        count = sealed.size() + 1;
    }

    /**
     * Writes the delivery mark if it moved, then deletes the segments it has passed (a segment may
     * be sealed after the mark passed its end: the writer can deliver a write before its commit),
     * and at close the last segment too once every write in it was delivered, or when it holds no
     * write at all (a run that only replayed, or wrote nothing: the mark is then in an older
     * segment, or at none). A failure is logged: the next start replays writes the store holds.
     */
    void markAndClean(long delivered, boolean closing) {
        markTried = Math.max(markTried, delivered);
        try {
            if (delivered > markWritten) {
                mark.write(delivered);
                markWritten = delivered;
            }
            long seg = segment(markWritten);
            boolean deleted = false;
            while (!sealed.isEmpty()) {
                long first = sealed.firstKey();
                if (first > seg || first == seg && sealed.get(first) > offset(markWritten)) {
                    break;
                }
                bytes.addAndGet(-sealed.remove(first));
                Files.deleteIfExists(segmentPath(dir, first));
                deleted = true;
            }
            boolean lastDelivered = current != null && (current.size() == header.length // no write in it
                    || markWritten >= position(current.number, current.size()));
            if (closing && lastDelivered) {
                current.close();
                Files.deleteIfExists(current.path);
                bytes.addAndGet(-current.size());
                current = null;
                deleted = true;
            }
            count = sealed.size() + (current == null ? 0 : 1);
            if (deleted) {
                SegmentFile.forceDirectory(dir);
            }
        } catch (IOException e) {
            LOG.warn("spool {}: could not record the delivery mark or delete delivered segments ({}); the next "
                    + "start replays writes the store already holds", dir, e.toString());
        }
    }

    /**
     * Closes the segment being written and the mark file.
     *
     * @return whether no segment is left on disk
     */
    boolean close() throws IOException {
        if (current != null) {
            current.close();
        }
        mark.close();
        return current == null && sealed.isEmpty();
    }

    /** {@return the delivery mark last written to the mark file} */
    long markWritten() {
        return markWritten;
    }

    /** {@return the last position the mark was to record, whether or not it could; read anywhere} */
    long markTried() {
        return markTried;
    }

    /** {@return the segment files on disk; read anywhere} */
    int count() {
        return count;
    }
}
