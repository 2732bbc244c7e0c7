package dev.memlife.spool;

import dev.memlife.Message;
import dev.memlife.Turn;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
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

    private static final byte[][] NO_PARTS = new byte[0][];

    private SpoolRecord() {}

    /**
     * A new write's record; its sequence number and time are left to {@link #seal} (zeros until
     * then), and its checksum slot holds the checksum of the record so.
     */
    static byte[] encode(Turn turn) {
        byte[] record = record(turn, null);
        SegmentFormat.seal(record, 0, record.length - SegmentFormat.RECORD_OVERHEAD, new CRC32C());
        return record;
    }

    /** A whole record of a write to keep again: its id given, the time it was first accepted, sealed. */
    static byte[] encodeKept(Turn turn) {
        byte[] record = record(turn, utf8(turn.writeId()));
        int tail = record.length - TAIL;
        putLong(record, tail, -1);
        putLong(record, tail + 8, turn.acceptedAt().toEpochMilli());
        SegmentFormat.seal(record, 0, record.length - SegmentFormat.RECORD_OVERHEAD, new CRC32C());
        return record;
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

    private static byte[] record(Turn turn, byte[] givenId) {
        byte[] session = utf8(turn.sessionId());
        byte[] user = utf8(turn.userContent());
        byte[] assistant = utf8(turn.assistantContent());
        List<Message> messages = turn.messages();
        byte[][] parts = messages.isEmpty() ? NO_PARTS : new byte[messages.size() * 2][];
        int payload = 1 + (givenId == null ? 0 : 4 + givenId.length) + 4 + session.length + 4 + user.length + 4
                + assistant.length + 4 + TAIL;
        for (int i = 0; i < messages.size(); i++) {
            parts[2 * i] = utf8(messages.get(i).role());
            parts[2 * i + 1] = utf8(messages.get(i).content());
            payload += 8 + parts[2 * i].length + parts[2 * i + 1].length;
        }
        if (payload > SegmentFormat.MAX_PAYLOAD) {
            throw new IllegalArgumentException("a spool record holds at most " + SegmentFormat.MAX_PAYLOAD
                    + " bytes; this write needs " + payload);
        }
        byte[] out = new byte[SegmentFormat.RECORD_OVERHEAD + payload];
        SegmentFormat.putInt(out, 0, payload);
        int at = SegmentFormat.RECORD_OVERHEAD;
        out[at++] = givenId == null ? SEQ_ID : GIVEN_ID;
        if (givenId != null) {
            at = putString(out, at, givenId);
        }
        at = putString(out, at, session);
        at = putString(out, at, user);
        at = putString(out, at, assistant);
        SegmentFormat.putInt(out, at, messages.size());
        at += 4;
        for (byte[] part : parts) {
            at = putString(out, at, part);
        }
        return out;
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

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static int putString(byte[] out, int at, byte[] bytes) {
        SegmentFormat.putInt(out, at, bytes.length);
        System.arraycopy(bytes, 0, out, at + 4, bytes.length);
        return at + 4 + bytes.length;
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
