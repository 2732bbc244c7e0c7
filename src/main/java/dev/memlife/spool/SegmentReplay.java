package dev.memlife.spool;

import dev.memlife.Turn;
import dev.memlife.internal.WriteAheadLog.Replayer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Replays a spool's segments, one after another as they are read: each record after the delivery
 * mark is decoded straight from the segment's bytes and queued, in order. A record that passed its
 * checksum but is not a write is counted as corrupt, logged with its offset, and skipped. Used
 * once, by the thread that replays; not thread-safe.
 */
final class SegmentReplay implements SegmentFormat.RecordVisitor {

    private static final Logger LOG = LoggerFactory.getLogger(Spool.class);

    private final Path dir;
    private final long mark;
    private final Replayer into;
    private final AtomicLong replayedFigure;
    private final AtomicLong corruptFigure;

    private long number;
    private Path file;
    private String idPrefix;
    private long replayed;
    private boolean stopped;

    /**
     * @param mark the delivery mark: records that end at or before it were delivered
     * @param replayedFigure counts each write queued, for the spool's figures
     * @param corruptFigure counts each record that is not a write
     */
    SegmentReplay(Path dir, long mark, Replayer into, AtomicLong replayedFigure, AtomicLong corruptFigure) {
        this.dir = dir;
        this.mark = mark;
        this.into = into;
        this.replayedFigure = replayedFigure;
        this.corruptFigure = corruptFigure;
    }

    /**
     * Replays segment {@code number}'s writes after the mark.
     *
     * @return false if the manager refused one (it is shutting down): the rest stays for the next start
     * @throws UncheckedIOException if the segment cannot be read
     */
    boolean replay(long number) {
        this.number = number;
        this.file = SpoolFiles.segmentPath(dir, number);
        try {
            SpoolFiles.read(file, this);
        } catch (IOException e) {
            throw new UncheckedIOException("could not read spool segment " + file, e);
        }
        return !stopped;
    }

    /** {@return the writes queued so far, in every segment} */
    long replayed() {
        return replayed;
    }

    @Override
    public void header(String idPrefix) {
        this.idPrefix = idPrefix;
    }

    @Override
    public boolean record(long offset, byte[] bytes, int payloadAt, int length) {
        long end = SpoolFiles.end(number, offset, length);
        if (end <= mark) {
            return true;
        }
        Turn turn;
        try {
            turn = SpoolRecord.decode(idPrefix, bytes, payloadAt, length);
        } catch (IllegalArgumentException bad) {
            corruptFigure.incrementAndGet();
            LOG.warn("spool {}: the record at offset {} of {} passed its checksum but is not a write ({}); skipped",
                    dir, offset, file.getFileName(), bad.getMessage());
            return true;
        }
        if (!into.accept(turn, end)) {
            stopped = true;
            return false;
        }
        replayed++;
        replayedFigure.incrementAndGet();
        return true;
    }
}
