package dev.memlife.spool;

import dev.memlife.Message;
import dev.memlife.Turn;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The payload of one spooled write: {@code [seq][acceptedAt][session][user][assistant][messages]},
 * longs and ints big-endian, each string its UTF-8 length and bytes, the messages a count and
 * each message's role and content. The write id is the segment's id prefix, {@code ':'} and the
 * sequence number, which is filled in last ({@link #putSeq}): a write's place in the queue is
 * known only under the spool's order lock, and everything else is encoded before it. A write
 * kept again after a provider failed it ({@link #encodeKept}) may come from an earlier run, whose
 * prefix is not the segment's: its sequence number is {@link #GIVEN_ID} and its whole id follows
 * it as a string.
 */
final class SpoolRecord {

    /** Where the sequence number sits in the payload. */
    static final int SEQ_OFFSET = 0;
    /** The sequence number of a record whose whole write id follows it. */
    static final long GIVEN_ID = -1;

    private SpoolRecord() {}

    /** Encodes a write, its sequence number left 0, its time now. */
    static byte[] encode(Turn turn) {
        return encode(turn, null, System.currentTimeMillis());
    }

    /** Encodes a write to keep again, with its whole id and the time it was first accepted. */
    static byte[] encodeKept(Turn turn) {
        return encode(turn, utf8(turn.writeId()), turn.acceptedAt().toEpochMilli());
    }

    private static byte[] encode(Turn turn, byte[] givenId, long acceptedAtMillis) {
        byte[] session = utf8(turn.sessionId());
        byte[] user = utf8(turn.userContent());
        byte[] assistant = utf8(turn.assistantContent());
        List<Message> messages = turn.messages();
        byte[][] parts = new byte[messages.size() * 2][];
        int size = 8 + (givenId == null ? 0 : 4 + givenId.length) + 8 + 4 + session.length + 4 + user.length + 4
                + assistant.length + 4;
        for (int i = 0; i < messages.size(); i++) {
            parts[2 * i] = utf8(messages.get(i).role());
            parts[2 * i + 1] = utf8(messages.get(i).content());
            size += 8 + parts[2 * i].length + parts[2 * i + 1].length;
        }
        ByteBuffer out = ByteBuffer.allocate(size).order(ByteOrder.BIG_ENDIAN);
        if (givenId == null) {
            out.putLong(0);
        } else {
            out.putLong(GIVEN_ID);
            putString(out, givenId);
        }
        out.putLong(acceptedAtMillis);
        putString(out, session);
        putString(out, user);
        putString(out, assistant);
        out.putInt(messages.size());
        for (byte[] part : parts) {
            putString(out, part);
        }
        return out.array();
    }

    /** Writes the sequence number into a payload copied to {@code buffer} at {@code at}. */
    static void putSeq(byte[] buffer, int at, long seq) {
        for (int i = 7; i >= 0; i--) {
            buffer[at + SEQ_OFFSET + i] = (byte) seq;
            seq >>>= 8;
        }
    }

    /**
     * Decodes a payload that passed its checksum.
     *
     * @param idPrefix the id prefix of the segment it was read from
     * @throws IllegalArgumentException if the payload is not a spooled write (a bug, or a record
     *     that passed its checksum by chance)
     */
    static Turn decode(String idPrefix, byte[] payload) {
        try {
            ByteBuffer in = ByteBuffer.wrap(payload).order(ByteOrder.BIG_ENDIAN);
            long seq = in.getLong();
            String writeId = seq == GIVEN_ID ? getString(in) : idPrefix + ':' + seq;
            Instant acceptedAt = Instant.ofEpochMilli(in.getLong());
            String session = getString(in);
            String user = getString(in);
            String assistant = getString(in);
            int count = in.getInt();
            if (count < 0 || count > in.remaining() / 8) {
                throw new IllegalArgumentException("a message count of " + count);
            }
            List<Message> messages = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                messages.add(new Message(getString(in), getString(in)));
            }
            if (in.hasRemaining()) {
                throw new IllegalArgumentException(in.remaining() + " bytes after the last message");
            }
            return Turn.of(writeId, session, user, assistant, messages, acceptedAt);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("not a spooled write: " + e.getMessage(), e);
        }
    }

    /** {@return the time a payload was accepted, in epoch milliseconds} */
    static long acceptedAtMillis(byte[] payload) {
        ByteBuffer in = ByteBuffer.wrap(payload).order(ByteOrder.BIG_ENDIAN);
        if (in.getLong() == GIVEN_ID) {
            getString(in);
        }
        return in.getLong();
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static void putString(ByteBuffer out, byte[] bytes) {
        out.putInt(bytes.length).put(bytes);
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
}
