package dev.memlife.spool;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The byte layout of one spool segment, and its reader. A segment starts with a header (the magic
 * {@code "MLSP"}, a format version, and the write-id prefix of the manager that wrote it: a 2-byte
 * length and its UTF-8 bytes), then holds records, each {@code [length][crc][payload]}:
 * the payload's length and the CRC32C of the length and the payload, both 4-byte big-endian ints.
 * The checksum covers the length, so a corrupt length is caught as surely as a corrupt payload.
 *
 * <p>A segment is written through a memory mapping that extends the file ahead of its records
 * ({@link MappedSegment}), so zeros after the last record are space no record reached: <em>unwritten</em>,
 * neither damage nor a torn write (a record's first eight bytes are never all zero: the checksum
 * of a length is not zero). Reading never trusts a record it cannot check. Bytes after the last
 * record that are not all zeros (a write the crash interrupted) are a <em>torn tail</em>: reported,
 * with the length to cut the segment back to, and never half-read. A record that fails its checksum in the middle is reported
 * with its offset and skipped: the reader looks for the next offset where a record checks, so the
 * valid records around it are kept. A segment written by a newer format version is refused.
 *
 * <p>Stateless and thread-safe.
 */
final class SegmentFormat {

    /** "MLSP", the first four bytes of every segment. */
    static final int MAGIC = 0x4D4C5350;
    /** The format this code writes, and the newest it reads. */
    static final int VERSION = 1;
    /** Bytes of the header before the id prefix: the magic, the version and the prefix's length. */
    static final int HEADER_FIXED_BYTES = 10;
    /** Bytes before each record's payload: its length and its checksum. */
    static final int RECORD_OVERHEAD = 8;
    /** The largest payload a record may hold; a length beyond it is corruption. */
    static final int MAX_PAYLOAD = 16 * 1024 * 1024;
    /** The most of a damaged segment held at once while looking past the damage. */
    private static final int MAX_HELD = Integer.MAX_VALUE - 16;

    private SegmentFormat() {}

    /**
     * The header of a new segment.
     *
     * @param idPrefix the write-id prefix of the manager whose writes the segment holds
     * @throws IllegalArgumentException if the prefix is longer than 65,535 bytes in UTF-8
     */
    static byte[] header(String idPrefix) {
        byte[] prefix = idPrefix.getBytes(StandardCharsets.UTF_8);
        if (prefix.length > 0xFFFF) {
            throw new IllegalArgumentException("a write-id prefix holds at most 65535 bytes, was " + prefix.length);
        }
        return ByteBuffer.allocate(HEADER_FIXED_BYTES + prefix.length).order(ByteOrder.BIG_ENDIAN).putInt(MAGIC)
                .putInt(VERSION).putShort((short) prefix.length).put(prefix).array();
    }

    /**
     * One record, ready to append.
     *
     * @throws IllegalArgumentException if the payload is larger than {@link #MAX_PAYLOAD}
     */
    static byte[] record(byte[] payload) {
        return record(payload, 0, payload.length);
    }

    /**
     * One record of {@code payload[from, from + count)}, ready to append.
     *
     * @throws IllegalArgumentException if the payload is larger than {@link #MAX_PAYLOAD}
     */
    static byte[] record(byte[] payload, int from, int count) {
        byte[] out = new byte[RECORD_OVERHEAD + count];
        System.arraycopy(payload, from, out, RECORD_OVERHEAD, count);
        seal(out, 0, count, new CRC32C());
        return out;
    }

    /**
     * Completes the record whose payload of {@code count} bytes sits at {@code at + }{@link
     * #RECORD_OVERHEAD} in {@code buffer}: writes its length and checksum in front of it.
     *
     * @param crc a checksum to reuse (reset here), so a hot path allocates none
     * @throws IllegalArgumentException if the payload is larger than {@link #MAX_PAYLOAD}
     */
    static void seal(byte[] buffer, int at, int count, CRC32C crc) {
        if (count > MAX_PAYLOAD) {
            throw new IllegalArgumentException("a spool record holds at most " + MAX_PAYLOAD + " bytes, was " + count);
        }
        putInt(buffer, at, count);
        crc.reset();
        crc.update(buffer, at, 4);
        crc.update(buffer, at + RECORD_OVERHEAD, count);
        putInt(buffer, at + 4, (int) crc.getValue());
    }

    /** Writes {@code v} big-endian at {@code at}. */
    static void putInt(byte[] b, int at, int v) {
        b[at] = (byte) (v >>> 24);
        b[at + 1] = (byte) (v >>> 16);
        b[at + 2] = (byte) (v >>> 8);
        b[at + 3] = (byte) v;
    }

    /** Bytes that could not be read as a record, from {@code offset} for {@code length} bytes. */
    record Corruption(long offset, long length, String reason) {}

    /** Thrown for a segment this code must not read: not a segment, or a newer format. */
    static final class UnreadableSegmentException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        UnreadableSegmentException(String message) {
            super(message);
        }
    }

    /**
     * Whether the segment {@code in} is a header cut short: a segment whose creation a crash
     * interrupted before its header was stored or reached the disk (its records are forced with
     * the header, so such a segment holds no write). Its bytes up to the last one that is not zero
     * are shorter than the header they announce, and are the start of a header: the magic as far
     * as it goes, or nothing (a file whose size reached the disk before its data, or one mapped
     * before its header was stored). Reads at most the header's bytes.
     */
    static boolean isTornHeader(SegmentWindow in) {
        long data = in.dataEnd();
        if (data == 0) {
            return true;
        }
        if (data >= HEADER_FIXED_BYTES + 0xFFFF) {
            return false; // longer than any header: a segment, whole or damaged, not a header cut short
        }
        int length = (int) Math.min(in.size(), HEADER_FIXED_BYTES + 0xFFFF);
        in.load(0, length);
        return isTornHeader(in.array(), in.index(0), length, (int) data);
    }

    /**
     * {@link #isTornHeader(SegmentWindow)} for the {@code length} bytes at {@code from}, zeros from
     * {@code data} on.
     */
    private static boolean isTornHeader(byte[] bytes, int from, int length, int data) {
        byte[] magic = ByteBuffer.allocate(4).order(ByteOrder.BIG_ENDIAN).putInt(MAGIC).array();
        for (int i = 0; i < Math.min(4, Math.min(length, data)); i++) {
            if (bytes[from + i] != magic[i]) {
                return false;
            }
        }
        if (length < HEADER_FIXED_BYTES || data < 8) {
            return true; // the version (1 and up: its last byte is not zero) is not all there
        }
        int prefixLength = (bytes[from + 8] & 0xFF) << 8 | bytes[from + 9] & 0xFF;
        // a prefix is the UTF-8 of a name: its last byte is not zero
        return length < HEADER_FIXED_BYTES + prefixLength || prefixLength > 0 && data < HEADER_FIXED_BYTES + prefixLength;
    }

    /** Told of a segment's header, then of each record that checks, in order, as it is read. */
    @FunctionalInterface
    interface RecordVisitor {
        /**
         * The segment's header, before any record.
         *
         * @param idPrefix the write-id prefix in it
         */
        default void header(String idPrefix) {}

        /**
         * One record that checks; its payload is readable in {@code bytes} only during this call.
         *
         * @param offset where the record starts in the segment
         * @param bytes the bytes holding the payload
         * @param payloadAt where the payload starts in {@code bytes}
         * @param length the payload's length
         * @return whether to read on; false stops the reading here
         */
        boolean record(long offset, byte[] bytes, int payloadAt, int length);
    }

    /**
     * What reading a segment found besides its records.
     *
     * @param idPrefix the write-id prefix in its header
     * @param records the records that checked (up to where the reading stopped)
     * @param corrupt the damaged stretches in the middle, skipped
     * @param validLength the length to keep: up to the end of the last record that checked
     * @param tornTailBytes bytes after {@code validLength} that are not a whole record, up to the
     *     last byte that is not zero; 0 if none (or if the visitor stopped the reading)
     * @param unwrittenBytes the zeros at the end, after the records and any torn tail: space no
     *     record reached (0 if the visitor stopped the reading)
     */
    record Summary(String idPrefix, long records, List<Corruption> corrupt, long validLength, long tornTailBytes,
            long unwrittenBytes) {

        /**
         * This summary for a sealed segment, one a newer segment follows: it was written whole and
         * forced before the next was created, so it ends where its last record ends, and bytes
         * after that are damage (reported and kept), never a torn write to cut.
         */
        Summary sealed() {
            if (tornTailBytes == 0) {
                return this;
            }
            List<Corruption> damage = new ArrayList<>(corrupt);
            damage.add(new Corruption(validLength, tornTailBytes, "bytes after the last record of a sealed segment (a "
                    + "newer segment follows it, so no write can have been torn there)"));
            return new Summary(idPrefix, records, List.copyOf(damage), validLength, 0, unwrittenBytes);
        }
    }

    /**
     * Reads a segment record by record, through {@code in}: a clean segment in bounded memory (a
     * record at a time, see {@link SegmentWindow}). From the first damaged stretch on, it holds
     * the rest of the segment, to look for the next record that checks.
     *
     * @param name the segment's name, for the errors
     * @param in the segment's bytes, from its start
     * @param visitor told of each record that checks, in order
     * @return the header's prefix, the damaged stretches and the torn tail
     * @throws UnreadableSegmentException if it has no header, another magic, or a newer version
     * @throws java.io.UncheckedIOException if the segment cannot be read
     */
    static Summary read(String name, SegmentWindow in, RecordVisitor visitor) {
        long size = in.size();
        if (!in.load(0, HEADER_FIXED_BYTES)) {
            throw new UnreadableSegmentException("spool segment " + name + " is " + size
                    + " bytes long, shorter than its header");
        }
        int magic = in.getInt(0);
        if (magic != MAGIC) {
            throw new UnreadableSegmentException("spool segment " + name + " does not start with the spool's magic "
                    + "(found 0x" + Integer.toHexString(magic) + "): it is not a memlife spool segment");
        }
        int version = in.getInt(4);
        if (version > VERSION) {
            throw new UnreadableSegmentException("spool segment " + name + " was written by a newer memlife (format "
                    + "version " + version + "; this one reads up to " + VERSION + "): upgrade memlife to replay it");
        }
        int prefixLength = in.getUnsignedShort(8);
        int headerLength = HEADER_FIXED_BYTES + prefixLength;
        if (!in.load(0, headerLength)) {
            throw new UnreadableSegmentException("spool segment " + name + " is " + size
                    + " bytes long, shorter than its " + headerLength + "-byte header");
        }
        String idPrefix = new String(in.array(), in.index(HEADER_FIXED_BYTES), prefixLength, StandardCharsets.UTF_8);
        visitor.header(idPrefix);
        CRC32C crc = new CRC32C();
        List<Corruption> corrupt = new ArrayList<>();
        long records = 0;
        long validEnd = headerLength;
        long at = headerLength;
        long data = in.dataEnd(); // a record starts before it: its first eight bytes are not all zero
        while (at < data) {
            int length = checkedLength(in, at, crc);
            if (length >= 0) {
                records++;
                validEnd = at + RECORD_OVERHEAD + length;
                if (!visitor.record(at, in.array(), in.index(at) + RECORD_OVERHEAD, length)) {
                    return new Summary(idPrefix, records, corrupt, validEnd, 0, 0);
                }
                at = validEnd;
                continue;
            }
            String reason = reason(in, at);
            // rare: damage; hold the rest of the data, and a record past it, to search it
            in.load(at, (int) Math.min(Math.min(size, data + RECORD_OVERHEAD + MAX_PAYLOAD) - at, MAX_HELD));
            long next = nextRecord(in, at + 1, data, crc);
            if (next < 0) {
                break; // nothing checks after it: a torn tail
            }
            corrupt.add(new Corruption(at, next - at, reason));
            at = next;
        }
        long end = Math.max(validEnd, data);
        return new Summary(idPrefix, records, corrupt, validEnd, end - validEnd, size - end);
    }

    /** The payload length of a record that checks at {@code at}; -1 if none does. */
    private static int checkedLength(SegmentWindow in, long at, CRC32C crc) {
        if (!in.load(at, RECORD_OVERHEAD)) {
            return -1;
        }
        int length = in.getInt(at);
        if (length < 0 || length > MAX_PAYLOAD || length > in.size() - at - RECORD_OVERHEAD) {
            return -1;
        }
        in.load(at, RECORD_OVERHEAD + length);
        byte[] bytes = in.array();
        int i = in.index(at);
        crc.reset();
        crc.update(bytes, i, 4); // the length, big-endian, as sealed
        crc.update(bytes, i + RECORD_OVERHEAD, length);
        return (int) crc.getValue() == in.getInt(at + 4) ? length : -1;
    }

    /** The first offset in {@code [from, before)} where a record checks; -1 if there is none. */
    private static long nextRecord(SegmentWindow in, long from, long before, CRC32C crc) {
        for (long at = from; at < before && at <= in.size() - RECORD_OVERHEAD; at++) {
            if (checkedLength(in, at, crc) >= 0) {
                return at;
            }
        }
        return -1;
    }

    private static String reason(SegmentWindow in, long at) {
        if (!in.load(at, RECORD_OVERHEAD)) {
            return "a record header cut short";
        }
        int length = in.getInt(at);
        if (length < 0 || length > MAX_PAYLOAD) {
            return "an impossible length " + length;
        }
        if (length > in.size() - at - RECORD_OVERHEAD) {
            return "a length " + length + " past the end of the segment";
        }
        return "a checksum that does not match";
    }
}
