package dev.memlife.spool;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The byte layout of one spool segment, and its reader. A segment starts with a header (the magic
 * {@code "MLSP"}, a format version, and the write-id prefix of the manager that wrote it: a 2-byte
 * length and its UTF-8 bytes), then holds records, each {@code [length][crc][payload]}:
 * the payload's length and the CRC32C of the length and the payload, both 4-byte big-endian ints.
 * The checksum covers the length, so a corrupt length is caught as surely as a corrupt payload.
 *
 * <p>Reading never trusts a record it cannot check. A record cut short by the end of the bytes
 * (a write the crash interrupted) is a <em>torn tail</em>: reported, with the length to cut the
 * segment back to, and never half-read. A record that fails its checksum in the middle is reported
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

    private static int checksum(int length, byte[] bytes, int from, int count) {
        CRC32C crc = new CRC32C();
        crc.update(ByteBuffer.allocate(4).order(ByteOrder.BIG_ENDIAN).putInt(length).array());
        crc.update(bytes, from, count);
        return (int) crc.getValue();
    }

    /**
     * A record read back: where it starts in the segment, and its payload's length; the payload
     * is in the segment's bytes ({@link Contents#payload}), not copied out of them.
     */
    record Entry(int offset, int length) {
        /** {@return where the payload starts in the segment} */
        int payloadOffset() {
            return offset + RECORD_OVERHEAD;
        }

        /** {@return where the record ends in the segment: where the next one starts} */
        int end() {
            return offset + RECORD_OVERHEAD + length;
        }
    }

    /** Bytes that could not be read as a record, from {@code offset} for {@code length} bytes. */
    record Corruption(long offset, long length, String reason) {}

    /**
     * What a segment holds.
     *
     * @param idPrefix the write-id prefix in its header
     * @param headerLength the header's length: where the first record starts
     * @param entries the records that checked, in order
     * @param corrupt the damaged stretches in the middle, skipped
     * @param validLength the length to keep: up to the end of the last record that checked (the
     *     segment is cut back to it when its tail is torn)
     * @param tornTailBytes bytes after {@code validLength} that are not a whole record; 0 if none
     * @param bytes the segment's bytes, which hold the entries' payloads
     */
    record Contents(String idPrefix, int headerLength, List<Entry> entries, List<Corruption> corrupt,
            long validLength, long tornTailBytes, byte[] bytes) {

        /** {@return a copy of an entry's payload} */
        byte[] payload(Entry e) {
            return Arrays.copyOfRange(bytes, e.payloadOffset(), e.end());
        }
    }

    /** Thrown for a segment this code must not read: not a segment, or a newer format. */
    static final class UnreadableSegmentException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        UnreadableSegmentException(String message) {
            super(message);
        }
    }

    /**
     * Whether {@code bytes} are a header cut short: a segment whose creation a crash interrupted
     * before its header was on disk (the spool forces the header before any record goes in, so
     * such a segment holds no write). Empty, or shorter than the header it announces, and what is
     * there is the start of a header: the magic as far as it goes, or zeros (a file whose size
     * reached the disk before its data).
     */
    static boolean isTornHeader(byte[] bytes) {
        if (bytes.length >= HEADER_FIXED_BYTES + 0xFFFF) {
            return false; // longer than any header: a segment, whole or damaged, not a header cut short
        }
        if (allZeros(bytes)) {
            return true;
        }
        byte[] magic = ByteBuffer.allocate(4).order(ByteOrder.BIG_ENDIAN).putInt(MAGIC).array();
        for (int i = 0; i < Math.min(4, bytes.length); i++) {
            if (bytes[i] != magic[i]) {
                return false;
            }
        }
        if (bytes.length < HEADER_FIXED_BYTES) {
            return true;
        }
        int prefixLength = Short.toUnsignedInt(ByteBuffer.wrap(bytes).order(ByteOrder.BIG_ENDIAN).getShort(8));
        return bytes.length < HEADER_FIXED_BYTES + prefixLength;
    }

    private static boolean allZeros(byte[] bytes) {
        for (byte b : bytes) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Reads a whole segment.
     *
     * @param name the segment's name, for the errors
     * @param bytes its bytes
     * @return its records, its damaged stretches and its torn tail
     * @throws UnreadableSegmentException if it has no header, another magic, or a newer version
     */
    static Contents read(String name, byte[] bytes) {
        ByteBuffer in = ByteBuffer.wrap(bytes).order(ByteOrder.BIG_ENDIAN);
        if (bytes.length < HEADER_FIXED_BYTES) {
            throw new UnreadableSegmentException("spool segment " + name + " is " + bytes.length
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
        int prefixLength = Short.toUnsignedInt(in.getShort(8));
        int headerLength = HEADER_FIXED_BYTES + prefixLength;
        if (bytes.length < headerLength) {
            throw new UnreadableSegmentException("spool segment " + name + " is " + bytes.length
                    + " bytes long, shorter than its " + headerLength + "-byte header");
        }
        String idPrefix = new String(bytes, HEADER_FIXED_BYTES, prefixLength, StandardCharsets.UTF_8);
        List<Entry> entries = new ArrayList<>();
        List<Corruption> corrupt = new ArrayList<>();
        long validEnd = headerLength;
        int at = headerLength;
        while (at < bytes.length) {
            int size = checkedSize(bytes, in, at);
            if (size >= 0) {
                entries.add(new Entry(at, size));
                at += RECORD_OVERHEAD + size;
                validEnd = at;
                continue;
            }
            int next = nextRecord(bytes, in, at + 1);
            if (next < 0) {
                break; // nothing checks after it: a torn tail
            }
            corrupt.add(new Corruption(at, next - at, reason(bytes, in, at)));
            at = next;
        }
        return new Contents(idPrefix, headerLength, entries, corrupt, validEnd, bytes.length - validEnd, bytes);
    }

    /** The payload size of a record that checks at {@code at}; -1 if none does. */
    private static int checkedSize(byte[] bytes, ByteBuffer in, int at) {
        if (bytes.length - at < RECORD_OVERHEAD) {
            return -1;
        }
        int size = in.getInt(at);
        if (size < 0 || size > MAX_PAYLOAD || size > bytes.length - at - RECORD_OVERHEAD) {
            return -1;
        }
        return checksum(size, bytes, at + RECORD_OVERHEAD, size) == in.getInt(at + 4) ? size : -1;
    }

    /** The first offset from {@code from} where a record checks; -1 if there is none. */
    private static int nextRecord(byte[] bytes, ByteBuffer in, int from) {
        for (int at = from; at <= bytes.length - RECORD_OVERHEAD; at++) {
            if (checkedSize(bytes, in, at) >= 0) {
                return at;
            }
        }
        return -1;
    }

    private static String reason(byte[] bytes, ByteBuffer in, int at) {
        if (bytes.length - at < RECORD_OVERHEAD) {
            return "a record header cut short";
        }
        int size = in.getInt(at);
        if (size < 0 || size > MAX_PAYLOAD) {
            return "an impossible length " + size;
        }
        if (size > bytes.length - at - RECORD_OVERHEAD) {
            return "a length " + size + " past the end of the segment";
        }
        return "a checksum that does not match";
    }
}
