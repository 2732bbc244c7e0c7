package dev.memlife.spool;

import dev.memlife.Message;
import dev.memlife.Turn;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * One spooled write as a whole {@link SegmentFormat} record, {@code [length][crc][payload]}, whose
 * payload is {@code [kind][id?][session][user][assistant][messages][seq][acceptedAt]}: ints and
 * longs big-endian, each string its UTF-8 length and bytes, the messages a count and each
 * message's role and content. The write id is the segment's id prefix, {@code ':'} and the
 * sequence number; a write kept again after a provider failed it ({@link #encodeKept}) may come
 * from an earlier run, whose prefix is not the segment's, so its kind is {@link #GIVEN_ID} and
 * its whole id follows.
 *
 * <p>A write's sequence number (its place in the queue) and its time are known only under the
 * spool's order lock, so they come last: {@link #encode} builds the record on the caller's thread
 * with zeros in their place and the checksum of it so, and {@link #seal} fills them in and
 * corrects the checksum for them, which is all the work left under the lock. CRC32C is linear:
 * the checksum of a record whose last 16 bytes are {@code T} is the checksum of the record with
 * zeros there, XOR the checksum of {@code T} alone, XOR the checksum of 16 zeros ({@link
 * #ZEROS_CRC}); so the lock covers one 16-byte checksum, not the record's.
 */
final class SpoolRecord {

    /** The kind of a record whose id is the segment's prefix and its sequence number. */
    static final byte SEQ_ID = 0;
    /** The kind of a record whose whole write id follows the kind. */
    static final byte GIVEN_ID = 1;
    /** The bytes at the end of the payload: the sequence number and the time. */
    static final int TAIL = 16;
    /** The CRC32C of {@link #TAIL} zero bytes: what {@link #seal} XORs out. */
    private static final int ZEROS_CRC = crcOf(new byte[TAIL], 0, TAIL, new CRC32C());

    /** The largest scratch buffer a thread keeps between writes; a larger write gets its own. */
    static final int SCRATCH_KEPT = 64 * 1024;
    /** Each thread's buffer for the records of its new writes, so encoding one allocates nothing. */
    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private SpoolRecord() {}

    /**
     * A new write's record, in the calling thread's scratch buffer (the array returned, at offset
     * 0; its length is {@link #length}, not the array's): valid until the thread encodes its next
     * write. Its sequence number and time are left to {@link #seal} (zeros until then), and its
     * checksum slot holds the checksum of the record so.
     *
     * @throws IllegalArgumentException if the write is larger than a record holds
     */
    static byte[] encode(Turn turn) {
        Scratch scratch = SCRATCH.get();
        byte[] out = scratch.bytesFor(maxLength(turn, null));
        int payload = write(out, turn, null, scratch);
        SegmentFormat.seal(out, 0, payload, scratch.crc);
        return out;
    }

    /** A whole record of a write to keep again: its id given, the time it was first accepted, sealed. */
    static byte[] encodeKept(Turn turn) {
        String givenId = turn.writeId();
        byte[] out = new byte[maxLength(turn, givenId)];
        int payload = write(out, turn, givenId, new Scratch());
        int tail = SegmentFormat.RECORD_OVERHEAD + payload - TAIL;
        putLong(out, tail, -1);
        putLong(out, tail + 8, turn.acceptedAt().toEpochMilli());
        SegmentFormat.seal(out, 0, payload, new CRC32C());
        return Arrays.copyOf(out, SegmentFormat.RECORD_OVERHEAD + payload);
    }

    /** {@return the length of the record at the start of {@code encoded}, which {@link #encode} returned} */
    static int length(byte[] encoded) {
        return SegmentFormat.RECORD_OVERHEAD + getInt(encoded, 0);
    }

    /**
     * The most bytes the write's record can take: at most three UTF-8 bytes per UTF-16 char.
     *
     * @throws IllegalArgumentException if even one byte per char is more than a record holds
     */
    private static int maxLength(Turn turn, String givenId) {
        long chars = (long) turn.sessionId().length() + turn.userContent().length() + turn.assistantContent().length();
        long fixed = 1 + 3 * 4 + 4 + TAIL + 8L * turn.messages().size();
        if (givenId != null) {
            chars += givenId.length();
            fixed += 4;
        }
        for (Message m : turn.messages()) {
            chars += m.role().length() + m.content().length();
        }
        if (fixed + chars > SegmentFormat.MAX_PAYLOAD) {
            throw tooLarge(fixed + chars); // each char takes at least a byte
        }
        return (int) (SegmentFormat.RECORD_OVERHEAD + fixed + 3 * chars);
    }

    private static IllegalArgumentException tooLarge(long payload) {
        return new IllegalArgumentException("a spool record holds at most " + SegmentFormat.MAX_PAYLOAD
                + " bytes; this write needs " + payload);
    }

    /**
     * Writes the record's length and payload into {@code out} (large enough: {@link #maxLength}),
     * its tail zeros; the checksum slot is left to the caller.
     *
     * @return the payload's length
     */
    private static int write(byte[] out, Turn turn, String givenId, Scratch scratch) {
        int at = SegmentFormat.RECORD_OVERHEAD;
        out[at++] = givenId == null ? SEQ_ID : GIVEN_ID;
        if (givenId != null) {
            at = putString(out, at, givenId, scratch);
        }
        at = putString(out, at, turn.sessionId(), scratch);
        at = putString(out, at, turn.userContent(), scratch);
        at = putString(out, at, turn.assistantContent(), scratch);
        List<Message> messages = turn.messages();
        SegmentFormat.putInt(out, at, messages.size());
        at += 4;
        for (Message m : messages) {
            at = putString(out, at, m.role(), scratch);
            at = putString(out, at, m.content(), scratch);
        }
        Arrays.fill(out, at, at + TAIL, (byte) 0);
        int payload = at + TAIL - SegmentFormat.RECORD_OVERHEAD;
        if (payload > SegmentFormat.MAX_PAYLOAD) {
            throw tooLarge(payload);
        }
        SegmentFormat.putInt(out, 0, payload);
        return payload;
    }

    /** Writes {@code s} as its UTF-8 length and bytes at {@code at}; returns where it ends. */
    private static int putString(byte[] out, int at, String s, Scratch scratch) {
        int end = scratch.utf8(s, out, at + 4);
        SegmentFormat.putInt(out, at, end - at - 4);
        return end;
    }

    /**
     * Encodes the first {@code n} chars of {@code c} in UTF-8 into {@code out} at {@code at}, as
     * {@code String.getBytes(UTF_8)} does (an unpaired surrogate becomes {@code '?'}); returns
     * where it ends. {@code out} must have room for three bytes a char.
     */
    static int utf8(char[] c, int n, byte[] out, int at) {
        for (int i = 0; i < n; i++) {
            char ch = c[i];
            if (ch < 0x80) {
                out[at++] = (byte) ch;
            } else if (ch < 0x800) {
                out[at++] = (byte) (0xC0 | ch >> 6);
                out[at++] = (byte) (0x80 | ch & 0x3F);
            } else if (!Character.isSurrogate(ch)) {
                out[at++] = (byte) (0xE0 | ch >> 12);
                out[at++] = (byte) (0x80 | ch >> 6 & 0x3F);
                out[at++] = (byte) (0x80 | ch & 0x3F);
            } else if (Character.isHighSurrogate(ch) && i + 1 < n && Character.isLowSurrogate(c[i + 1])) {
                int cp = Character.toCodePoint(ch, c[++i]);
                out[at++] = (byte) (0xF0 | cp >> 18);
                out[at++] = (byte) (0x80 | cp >> 12 & 0x3F);
                out[at++] = (byte) (0x80 | cp >> 6 & 0x3F);
                out[at++] = (byte) (0x80 | cp & 0x3F);
            } else {
                out[at++] = '?';
            }
        }
        return at;
    }

    /** One thread's scratch buffers and checksum: encoding a write with them allocates nothing. */
    static final class Scratch {
        private byte[] bytes = new byte[512];
        private char[] chars = new char[256];
        private final CRC32C crc = new CRC32C();

        /** {@return a buffer of at least {@code length} bytes: this one, grown up to {@link #SCRATCH_KEPT}} */
        byte[] bytesFor(int length) {
            if (length <= bytes.length) {
                return bytes;
            }
            byte[] larger = new byte[length];
            if (length <= SCRATCH_KEPT) {
                bytes = larger;
            }
            return larger;
        }

        /**
         * Encodes {@code s} in UTF-8 into {@code out} at {@code at}; returns where it ends. The
         * chars are copied out first ({@code getChars}, no allocation) and, in the usual case of
         * ASCII, narrowed in one loop with no branch per char (the JIT's loops over a {@code
         * String}'s chars are far slower on some JDKs); otherwise encoded by {@link
         * SpoolRecord#utf8(char[], int, byte[], int)}.
         */
        int utf8(String s, byte[] out, int at) {
            int n = s.length();
            char[] c = chars;
            if (n > c.length) {
                c = new char[n];
                if (2 * n <= SCRATCH_KEPT) {
                    chars = c;
                }
            }
            s.getChars(0, n, c, 0);
            int any = 0;
            for (int i = 0; i < n; i++) {
                any |= c[i];
                out[at + i] = (byte) c[i];
            }
            return any < 0x80 ? at + n : SpoolRecord.utf8(c, n, out, at);
        }
    }

    /**
     * Completes a record {@link #encode} made, copied to {@code buffer} at {@code at}: its sequence
     * number and time, and its checksum corrected for them.
     *
     * @param crc a checksum to reuse (reset here): the spool's, used under its order lock
     */
    static void seal(byte[] buffer, int at, int length, long seq, long acceptedAtMillis, CRC32C crc) {
        int tail = at + length - TAIL;
        putLong(buffer, tail, seq);
        putLong(buffer, tail + 8, acceptedAtMillis);
        int sealed = getInt(buffer, at + 4) ^ crcOf(buffer, tail, TAIL, crc) ^ ZEROS_CRC;
        SegmentFormat.putInt(buffer, at + 4, sealed);
    }

    private static int crcOf(byte[] bytes, int from, int count, CRC32C crc) {
        crc.reset();
        crc.update(bytes, from, count);
        return (int) crc.getValue();
    }

    /**
     * Decodes a payload that passed its checksum.
     *
     * @param idPrefix the id prefix of the segment it was read from
     * @throws IllegalArgumentException if the payload is not a spooled write (a bug, or a record
     *     that passed its checksum by chance)
     */
    static Turn decode(String idPrefix, byte[] payload) {
        return decode(idPrefix, payload, 0, payload.length);
    }

    /**
     * Decodes the payload of {@code length} bytes at {@code from} in {@code bytes} (a segment's),
     * which passed its checksum, without copying it first.
     *
     * @param idPrefix the id prefix of the segment it was read from
     * @throws IllegalArgumentException if the payload is not a spooled write (a bug, or a record
     *     that passed its checksum by chance)
     */
    static Turn decode(String idPrefix, byte[] bytes, int from, int length) {
        try {
            if (length < 1 + TAIL) {
                throw new IllegalArgumentException("a payload of " + length + " bytes");
            }
            int tail = from + length - TAIL;
            ByteBuffer in = ByteBuffer.wrap(bytes, from, length - TAIL).order(ByteOrder.BIG_ENDIAN);
            byte kind = in.get();
            if (kind != SEQ_ID && kind != GIVEN_ID) {
                throw new IllegalArgumentException("a record of kind " + kind);
            }
            String givenId = kind == GIVEN_ID ? getString(in) : null;
            String session = getString(in);
            String user = getString(in);
            String assistant = getString(in);
            int count = in.getInt();
            if (count < 0 || count > in.remaining() / 8) {
                throw new IllegalArgumentException("a message count of " + count);
            }
            List<Message> messages = count == 0 ? List.of() : new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                messages.add(new Message(getString(in), getString(in)));
            }
            if (in.hasRemaining()) {
                throw new IllegalArgumentException(in.remaining() + " bytes after the last message");
            }
            long seq = getLong(bytes, tail);
            String writeId = givenId != null ? givenId : idPrefix + ':' + seq;
            return Turn.of(writeId, session, user, assistant, messages, Instant.ofEpochMilli(getLong(bytes, tail + 8)));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("not a spooled write: " + e.getMessage(), e);
        }
    }

    /** {@return the time the payload of {@code length} bytes at {@code from} was accepted, in epoch milliseconds} */
    static long acceptedAtMillis(byte[] bytes, int from, int length) {
        return getLong(bytes, from + length - 8);
    }

    private static String getString(ByteBuffer in) {
        int length = in.getInt();
        if (length < 0 || length > in.remaining()) {
            throw new IllegalArgumentException("a string length of " + length + " with " + in.remaining()
                    + " bytes left");
        }
        String s = new String(in.array(), in.position(), length, StandardCharsets.UTF_8);
        in.position(in.position() + length);
        return s;
    }

    static int getInt(byte[] b, int at) {
        return (b[at] & 0xFF) << 24 | (b[at + 1] & 0xFF) << 16 | (b[at + 2] & 0xFF) << 8 | b[at + 3] & 0xFF;
    }

    static void putLong(byte[] b, int at, long v) {
        SegmentFormat.putInt(b, at, (int) (v >>> 32));
        SegmentFormat.putInt(b, at + 4, (int) v);
    }

    static long getLong(byte[] b, int at) {
        return (long) getInt(b, at) << 32 | getInt(b, at + 4) & 0xFFFFFFFFL;
    }
}
