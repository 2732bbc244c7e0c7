package dev.memlife.spool;

import static dev.memlife.spool.SpoolFiles.FAILED_SUFFIX;

import dev.memlife.Turn;
import dev.memlife.spool.SegmentFormat.Corruption;
import dev.memlife.spool.SegmentFormat.Summary;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What opening a spool finds in its directory: every segment checked record by record, torn tails
 * reported and cut off, the zeros a mapping left after the last record cut off, damage in the
 * middle reported with its offset, segments whose writes were
 * all delivered deleted (and so is a newest segment whose header a crash cut short), and the failed
 * writes earlier runs kept. The spool replays what is left.
 */
final class SpoolScan {

    private static final Logger LOG = LoggerFactory.getLogger(Spool.class);

    /** The delivery mark the last run left: every write up to it was delivered. */
    final long mark;
    /** The segments that hold writes after the mark, in order: number to size (their valid length). */
    final TreeMap<Long, Long> segments = new TreeMap<>();
    /** The writes after the mark in them. */
    final long pending;
    /** The number the next segment gets: past every segment and failed-writes file found. */
    final long nextSegment;
    /** Bytes cut off torn tails, and of headers a crash cut short. */
    final long tornTailBytes;
    /** Damaged stretches found in the middle of segments and failed-writes files. */
    final long corrupt;
    /** The failed writes earlier runs kept, in order, and the files they were in. */
    final List<Turn> failedEarlier = new ArrayList<>();
    final List<Path> failedFiles = new ArrayList<>();

    private SpoolScan(Path dir, long mark) throws IOException {
        this.mark = mark;
        long pendingFound = 0;
        long torn = 0;
        long damaged = 0;
        long last = SpoolFiles.segment(mark);
        boolean deleted = false;
        List<Long> numbers = SpoolFiles.segmentNumbers(dir);
        long newest = numbers.isEmpty() ? -1 : numbers.get(numbers.size() - 1);
        for (long number : numbers) {
            last = Math.max(last, number);
            Path file = SpoolFiles.segmentPath(dir, number);
            long[] undelivered = {0};
            Summary c = SpoolFiles.read(file, (offset, bytes, payloadAt, length) -> {
                if (SpoolFiles.end(number, offset, length) > mark) {
                    undelivered[0]++;
                }
                return true;
            });
            if (c == null) {
                long size = Files.size(file);
                LOG.warn("spool {}: segment {} is {} bytes, a header a crash cut short (it holds no write); deleted",
                        dir, file.getFileName(), size);
                torn += size;
                Files.delete(file);
                deleted = true;
                continue;
            }
            if (number != newest) {
                c = c.sealed(); // only the newest segment can end in a torn write
            }
            torn += cutTornTail(dir, file, c);
            if (c.tornTailBytes() == 0 && c.unwrittenBytes() > 0) {
                cut(file, Files.size(file) - c.unwrittenBytes()); // space a mapping reached and no record did
            }
            damaged += report(dir, file, c.corrupt());
            if (undelivered[0] == 0) {
                Files.delete(file); // every write in it was delivered
                deleted = true;
                continue;
            }
            pendingFound += undelivered[0];
            segments.put(number, c.validLength());
        }
        if (deleted) {
            SegmentFile.forceDirectory(dir);
        }
        for (Path file : SpoolFiles.filesEndingWith(dir, FAILED_SUFFIX)) {
            failedFiles.add(file);
            Summary c = SpoolFiles.read(file, (offset, bytes, payloadAt, length) -> {
                failedEarlier.add(SpoolRecord.decode("", bytes, payloadAt, length));
                return true;
            });
            if (c != null) {
                damaged += report(dir, file, c.corrupt());
            }
            last = Math.max(last, SpoolFiles.number(file, FAILED_SUFFIX));
        }
        this.pending = pendingFound;
        this.tornTailBytes = torn;
        this.corrupt = damaged;
        this.nextSegment = last + 1;
    }

    /**
     * Scans the spool in {@code dir}, whose delivery mark is {@code mark}.
     *
     * @throws IOException if a file cannot be read, cut or deleted
     * @throws IllegalStateException if a segment is not a memlife segment or a newer memlife wrote it
     */
    static SpoolScan of(Path dir, long mark) throws IOException {
        return new SpoolScan(dir, mark);
    }

    /** {@return the bytes of the segments found} */
    long bytes() {
        return segments.values().stream().mapToLong(Long::longValue).sum();
    }

    private static long cutTornTail(Path dir, Path file, Summary c) throws IOException {
        if (c.tornTailBytes() == 0) {
            return 0;
        }
        LOG.warn("spool {}: segment {} ends in a torn record of {} bytes at offset {} (a write a crash cut short, "
                + "never confirmed durable); cut off", dir, file.getFileName(), c.tornTailBytes(), c.validLength());
        cut(file, c.validLength());
        return c.tornTailBytes();
    }

    private static void cut(Path file, long length) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.truncate(length);
            ch.force(true);
        }
    }

    private static int report(Path dir, Path file, List<Corruption> damage) {
        for (Corruption d : damage) {
            LOG.warn("spool {}: segment {} has {} damaged bytes at offset {} ({}); skipped, the records around them "
                    + "are kept", dir, file.getFileName(), d.length(), d.offset(), d.reason());
        }
        return damage.size();
    }
}
