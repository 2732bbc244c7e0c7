package dev.memlife.spool;

import static java.util.Objects.requireNonNull;

import dev.memlife.spool.SegmentFormat.Summary;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What a spool directory holds, read without opening the spool: nothing is locked, cut or
 * deleted, so it may be run on the spool of a live process (whose last segment may then end in a
 * record still being written, reported as a torn tail). For {@code spool inspect} and for
 * monitoring. Immutable.
 *
 * @param directory the spool's directory
 * @param deliveredMark the delivery mark: every write before this position was delivered; 0 if none
 * @param segments the segment files, in order
 * @param failedKept writes a provider failed, kept in {@code .failed} files for the next start
 */
public record SpoolInspection(Path directory, long deliveredMark, List<Segment> segments, long failedKept) {

    /**
     * Checks the components.
     *
     * @param directory the spool's directory
     * @param deliveredMark the delivery mark
     * @param segments the segment files, in order
     * @param failedKept writes a provider failed, kept for the next start
     * @throws NullPointerException if one is null
     */
    public SpoolInspection {
        requireNonNull(directory, "directory");
        segments = List.copyOf(segments);
    }

    /**
     * One segment file.
     *
     * @param file the file's name
     * @param number its number: segments are written in this order
     * @param idPrefix the write-id prefix of the manager run that wrote it; empty if unreadable
     * @param bytes its length
     * @param records the records that check
     * @param pending of those, the ones after the delivery mark: replayed on the next start
     * @param oldestPending when the first pending record was accepted; empty if none is pending
     * @param damage damaged stretches in the middle, skipped by the replay
     * @param tornTailBytes bytes at the end that are not a whole record, cut off on the next open
     * @param unreadable why the segment cannot be read at all (not a segment, or a newer format);
     *     empty if it can
     */
    public record Segment(String file, long number, String idPrefix, long bytes, long records, long pending,
            Optional<Instant> oldestPending, List<Damage> damage, long tornTailBytes, Optional<String> unreadable) {

        /**
         * Checks the components.
         *
         * @param file the file's name
         * @param number its number
         * @param idPrefix the write-id prefix in its header
         * @param bytes its length
         * @param records the records that check
         * @param pending the records after the delivery mark
         * @param oldestPending when the first pending record was accepted
         * @param damage damaged stretches in the middle
         * @param tornTailBytes bytes at the end that are not a whole record
         * @param unreadable why the segment cannot be read at all
         * @throws NullPointerException if one is null
         */
        public Segment {
            requireNonNull(file, "file");
            requireNonNull(idPrefix, "idPrefix");
            requireNonNull(oldestPending, "oldestPending");
            damage = List.copyOf(damage);
            requireNonNull(unreadable, "unreadable");
        }
    }

    /**
     * A damaged stretch of a segment.
     *
     * @param offset where it starts in the segment
     * @param length how many bytes it spans, up to the next record that checks
     * @param reason what is wrong with the record that should start there
     */
    public record Damage(long offset, long length, String reason) {}

    /**
     * Reads the spool in {@code dir}.
     *
     * @param dir the spool's directory
     * @return what it holds
     * @throws NullPointerException if {@code dir} is null
     * @throws UncheckedIOException if it is not a directory or cannot be read
     */
    public static SpoolInspection of(Path dir) {
        requireNonNull(dir, "dir");
        if (!Files.isDirectory(dir)) {
            throw new UncheckedIOException(new NoSuchFileException(dir.toString(), null, "not a spool directory"));
        }
        long mark = readMark(dir);
        List<Segment> segments = new ArrayList<>();
        List<Long> numbers = SpoolFiles.segmentNumbers(dir);
        for (long number : numbers) {
            boolean sealed = number != numbers.get(numbers.size() - 1); // only the newest can end in a torn write
            Segment segment = segment(dir, number, mark, sealed);
            if (segment != null) {
                segments.add(segment);
            }
        }
        long failed = 0;
        for (Path file : SpoolFiles.filesEndingWith(dir, SpoolFiles.FAILED_SUFFIX)) {
            try {
                Summary c = SpoolFiles.read(file, (offset, bytes, payloadAt, length) -> true);
                failed += c == null ? 0 : c.records();
            } catch (NoSuchFileException e) {
                // carried into a segment and deleted by a starting manager while this looked
            } catch (IOException e) {
                throw new UncheckedIOException("could not read spool file " + file, e);
            }
        }
        return new SpoolInspection(dir, mark, segments, failed);
    }

    private static long readMark(Path dir) {
        try {
            Long mark = DeliveryMark.decode(Files.readAllBytes(dir.resolve(DeliveryMark.FILE)));
            return mark == null ? 0 : mark;
        } catch (NoSuchFileException e) {
            return 0;
        } catch (IOException e) {
            throw new UncheckedIOException("could not read the delivery mark of spool " + dir, e);
        }
    }

    /** One segment; null if it vanished (a running spool deleted it) before it could be read. */
    private static Segment segment(Path dir, long number, long mark, boolean sealed) {
        Path path = SpoolFiles.segmentPath(dir, number);
        String name = path.getFileName().toString();
        long size;
        Summary c;
        long[] pending = {0};
        long[] oldest = {-1};
        try {
            size = Files.size(path);
            c = SpoolFiles.read(path, (offset, bytes, payloadAt, length) -> {
                if (SpoolFiles.end(number, offset, length) > mark) {
                    if (pending[0]++ == 0) {
                        oldest[0] = SpoolRecord.acceptedAtMillis(bytes, payloadAt, length);
                    }
                }
                return true;
            });
        } catch (NoSuchFileException e) {
            return null; // delivered and deleted by the running spool while this looked
        } catch (IOException e) {
            throw new UncheckedIOException("could not read spool segment " + path, e);
        } catch (SegmentFormat.UnreadableSegmentException e) {
            return new Segment(name, number, "", 0, 0, 0, Optional.empty(), List.of(), 0,
                    Optional.of(e.getMessage()));
        }
        if (c == null) {
            return new Segment(name, number, "", size, 0, 0, Optional.empty(), List.of(), size, Optional.empty());
        }
        if (sealed) {
            c = c.sealed();
        }
        List<Damage> damage = c.corrupt().stream().map(d -> new Damage(d.offset(), d.length(), d.reason())).toList();
        return new Segment(name, number, c.idPrefix(), size, c.records(), pending[0],
                pending[0] == 0 ? Optional.empty() : Optional.of(Instant.ofEpochMilli(oldest[0])), damage,
                c.tornTailBytes(), Optional.empty());
    }

    /**
     * The writes the next start replays: those after the delivery mark in every segment, and the
     * failed writes kept for it.
     *
     * @return how many
     */
    public long pending() {
        return segments.stream().mapToLong(Segment::pending).sum() + failedKept;
    }

    /** {@return the records that check, in every segment} */
    public long records() {
        return segments.stream().mapToLong(Segment::records).sum();
    }

    /** {@return damaged stretches in every segment} */
    public long damaged() {
        return segments.stream().mapToLong(s -> s.damage().size()).sum();
    }

    /** {@return torn-tail bytes in every segment} */
    public long tornTailBytes() {
        return segments.stream().mapToLong(Segment::tornTailBytes).sum();
    }

    /** {@return segments that cannot be read at all} */
    public long unreadable() {
        return segments.stream().filter(s -> s.unreadable().isPresent()).count();
    }

    /** {@return when the oldest pending write was accepted; empty if none is pending} */
    public Optional<Instant> oldestPending() {
        return segments.stream().map(Segment::oldestPending).flatMap(Optional::stream).findFirst();
    }

    /** {@return the number of the segment the delivery mark points into; 0 if there is no mark} */
    public long deliveredSegment() {
        return SpoolFiles.segment(deliveredMark);
    }

    /**
     * The offset in {@link #deliveredSegment()} that the delivery mark points at: the end of the
     * last record delivered there.
     *
     * @return the offset; 0 if there is no mark
     */
    public long deliveredOffset() {
        return SpoolFiles.offset(deliveredMark);
    }
}
