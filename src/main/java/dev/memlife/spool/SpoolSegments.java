package dev.memlife.spool;

import static dev.memlife.spool.SpoolFiles.offset;
import static dev.memlife.spool.SpoolFiles.position;
import static dev.memlife.spool.SpoolFiles.segment;
import static dev.memlife.spool.SpoolFiles.segmentPath;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A spool's segment files on disk and its delivery mark: each commit's records forced (the windows
 * the appends moved past forced and unmapped, a segment they finished sealed), the sealed segments
 * kept, and those the mark has passed deleted. Not thread-safe: the spool uses it under its commit
 * lock (only {@link #count} and {@link #markTried} may be read anywhere).
 */
final class SpoolSegments {

    private static final Logger LOG = LoggerFactory.getLogger(Spool.class);

    /**
     * Run before each commit's force, if set: for crash tests that hold a force in flight (a slow
     * disk's stand-in). Null in production.
     */
    static volatile Runnable beforeForce;

    private final Path dir;
    private final DeliveryMark mark;
    /** The spool's count of bytes on disk beyond this run's appends: deletions take from it. */
    private final AtomicLong bytes;
    /** Sealed segments on disk (from earlier runs, or rolled): number to size. */
    private final TreeMap<Long, Long> sealed = new TreeMap<>();
    /** The number of this run's segment being written, and how far its records are forced. */
    private long current = -1;
    private long forced;
    private int headerLength;
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

    /** This run's first segment, numbered {@code number}, was created with a header of {@code headerLength}. */
    void start(long number, int headerLength) {
        this.current = number;
        this.forced = position(number, 0); // its header is forced with its first records
        this.headerLength = headerLength;
        count = sealed.size() + 1;
        bytes.addAndGet(headerLength);
    }

    /**
     * Forces a commit's records to disk, up to position {@code upTo}: the windows the appends moved
     * past, in order, each forced and unmapped (and its segment sealed where it ended one), then
     * the window written now. After a failure the windows moved past are still unmapped and their
     * segments sealed, unforced: what was forced before it stays durable.
     *
     * @param upTo how far to force: the appends' position, or less (the start of the page they are
     *     filling, which a force would make the next append fault on); every segment the appends
     *     finished is forced whole
     * @param forcing false to unmap and seal only (a spool whose disk failed, closing)
     * @return how far every record is forced now
     */
    long force(SpoolAppender.Taken taken, long upTo, boolean forcing) throws IOException {
        Runnable hook = beforeForce;
        if (forcing && hook != null) {
            hook.run();
        }
        IOException failed = null;
        for (SpoolAppender.Retired r : taken.retired()) {
            boolean noRecord = r.lastOfSegment() && r.window().start() == 0 && r.end() == headerLength;
            if (forcing && failed == null && !noRecord) { // a segment that holds no record is deleted, not forced
                try {
                    forceUpTo(r.window(), r.end(), upTo);
                } catch (IOException e) {
                    failed = e;
                }
            }
            r.window().unmap(); // what it left unforced is forced through the next window: they share the page
            if (r.lastOfSegment()) {
                long number = r.window().segment().number;
                r.window().segment().seal(r.end());
                sealed.put(number, r.end());
                current = number + 1;
                forced = position(current, 0); // the next segment's header is forced with its first records
                count = sealed.size() + 1;
            }
        }
        if (failed != null) {
            throw failed;
        }
        MappedSegment.Window now = taken.current();
        if (forcing && now != null && now.segment().number == segment(taken.position())) {
            forceUpTo(now, offset(taken.position()), upTo);
        }
        return forced;
    }

    /**
     * Forces the window's records from where the last force ended up to segment offset {@code to},
     * or to position {@code upTo} if that comes first.
     */
    private void forceUpTo(MappedSegment.Window w, long to, long upTo) throws IOException {
        long number = w.segment().number;
        long end = segment(upTo) > number ? to : Math.min(to, offset(upTo));
        long from = segment(forced) == number ? Math.max(offset(forced), w.start()) : w.start();
        if (end > from) {
            w.force(from, end);
            forced = position(number, end);
        }
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
            Long last = sealed.get(current - 1);
            if (closing && last != null && last == headerLength && sealed.lastKey() == current - 1) {
                // this run's last segment, sealed at close, holds no write: nothing to replay in it
                bytes.addAndGet(-sealed.remove(current - 1));
                Files.deleteIfExists(segmentPath(dir, current - 1));
                deleted = true;
            }
            count = sealed.size() + (closing ? 0 : 1);
            if (deleted) {
                SegmentFile.forceDirectory(dir);
            }
        } catch (IOException e) {
            LOG.warn("spool {}: could not record the delivery mark or delete delivered segments ({}); the next "
                    + "start replays writes the store already holds", dir, e.toString());
        }
    }

    /**
     * Closes the mark file, after the final commit sealed this run's last segment.
     *
     * @return whether no segment is left on disk
     */
    boolean close() throws IOException {
        mark.close();
        return sealed.isEmpty();
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
