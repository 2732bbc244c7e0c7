package dev.memlife.spool;

import dev.memlife.spool.SegmentFormat.Summary;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The files of a spool's directory, by name, and the positions of its records. A segment file is
 * {@code <number>.seg} (20 digits, numbered in the order they were written), a file of failed writes
 * kept for the next start {@code <number>.failed}; a position is {@code segment << }{@link
 * #OFFSET_BITS}{@code | offset}, increasing across segments. Stateless.
 */
final class SpoolFiles {

    private static final Logger LOG = LoggerFactory.getLogger(Spool.class);

    /** The lock file's name. */
    static final String LOCK_FILE = "spool.lock";
    /** A segment file's name ends so. */
    static final String SEGMENT_SUFFIX = ".seg";
    /** A file of failed writes kept for the next start ends so. */
    static final String FAILED_SUFFIX = ".failed";
    /** A position is {@code segment << OFFSET_BITS | offset}: increasing across segments. */
    static final int OFFSET_BITS = 40;
    /** The largest offset in a segment, and so the largest segment. */
    static final long OFFSET_MASK = (1L << OFFSET_BITS) - 1;

    private SpoolFiles() {}

    static long position(long segment, long offset) {
        return segment << OFFSET_BITS | offset;
    }

    static long segment(long position) {
        return position >>> OFFSET_BITS;
    }

    static long offset(long position) {
        return position & OFFSET_MASK;
    }

    /** The position just past the record at {@code offset} of {@code segment}, with a payload of {@code length}. */
    static long end(long segment, long offset, int length) {
        return position(segment, offset + SegmentFormat.RECORD_OVERHEAD + length);
    }

    static Path segmentPath(Path dir, long number) {
        return dir.resolve(String.format("%020d", number) + SEGMENT_SUFFIX);
    }

    /** The numbers of the segment files in {@code dir}, in order. */
    static List<Long> segmentNumbers(Path dir) {
        return filesEndingWith(dir, SEGMENT_SUFFIX).stream().map(f -> number(f, SEGMENT_SUFFIX)).toList();
    }

    static Path failedPath(Path dir, long number) {
        return dir.resolve(String.format("%020d", number) + FAILED_SUFFIX);
    }

    /** The files in {@code dir} named {@code <number><suffix>}, by number; others are logged and ignored. */
    static List<Path> filesEndingWith(Path dir, String suffix) {
        List<Path> found = new ArrayList<>();
        try (var files = Files.list(dir)) {
            files.filter(p -> p.getFileName().toString().endsWith(suffix)).forEach(p -> {
                if (number(p, suffix) >= 0) {
                    found.add(p);
                } else {
                    LOG.warn("spool {}: ignoring {}, which is not named like a spool file", dir, p.getFileName());
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("could not list spool " + dir, e);
        }
        found.sort((a, b) -> Long.compare(number(a, suffix), number(b, suffix)));
        return found;
    }

    /** The number in a spool file's name; -1 if it has none. */
    static long number(Path file, String suffix) {
        String n = file.getFileName().toString();
        try {
            return Long.parseLong(n.substring(0, n.length() - suffix.length()));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * Reads a segment file record by record, in bounded memory (see {@link SegmentFormat#read(String,
     * SegmentWindow, SegmentFormat.RecordVisitor)}).
     *
     * @return what it found; null if it is a header a crash cut short ({@link
     *     SegmentFormat#isTornHeader}), which holds no write
     * @throws IOException if it cannot be opened
     * @throws UncheckedIOException if it cannot be read
     * @throws IllegalStateException if it is not a segment or a newer format wrote it
     */
    static Summary read(Path file, SegmentFormat.RecordVisitor visitor) throws IOException {
        try (SegmentWindow in = SegmentWindow.open(file)) {
            return SegmentFormat.isTornHeader(in) ? null : SegmentFormat.read(file.toString(), in, visitor);
        }
    }
}
