package dev.memlife.store;

import dev.memlife.Message;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * How strings and message lists are stored: strings as UTF-8 bytes (so NUL, which PostgreSQL text
 * cannot hold, round-trips like any other character), message lists in a small length-prefixed
 * binary format: a version byte, the message count, then each message's role and content, each as
 * a 4-byte big-endian length followed by UTF-8 bytes. Stateless and thread-safe.
 *
 * <p>A string with an unpaired surrogate is not valid Unicode; UTF-8 stores such a surrogate as
 * {@code '?'}, the one case where a string does not round-trip.
 */
final class Codec {

    /** The first byte of every encoded message list. */
    static final byte MESSAGES_FORMAT = 1;

    private Codec() {}

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String string(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    static byte[] encodeMessages(List<Message> messages) {
        List<byte[]> parts = new ArrayList<>(messages.size() * 2);
        int size = 1 + 4;
        for (Message m : messages) {
            byte[] role = bytes(m.role());
            byte[] content = bytes(m.content());
            parts.add(role);
            parts.add(content);
            size += 8 + role.length + content.length;
        }
        ByteBuffer out = ByteBuffer.allocate(size).put(MESSAGES_FORMAT).putInt(messages.size());
        for (byte[] part : parts) {
            out.putInt(part.length).put(part);
        }
        return out.array();
    }

    /** @throws IllegalArgumentException if {@code encoded} is not a message list this class wrote */
    static List<Message> decodeMessages(byte[] encoded) {
        try {
            ByteBuffer in = ByteBuffer.wrap(encoded);
            byte format = in.get();
            if (format != MESSAGES_FORMAT) {
                throw new IllegalArgumentException("unknown message format " + format);
            }
            int count = in.getInt();
            if (count < 0 || count > in.remaining() / 8) {
                throw new IllegalArgumentException("message count " + count + " does not fit in "
                        + encoded.length + " bytes");
            }
            List<Message> messages = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                messages.add(new Message(readString(in), readString(in)));
            }
            if (in.hasRemaining()) {
                throw new IllegalArgumentException(in.remaining() + " bytes left after " + count + " messages");
            }
            return messages;
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("message list of " + encoded.length + " bytes is truncated", e);
        }
    }

    private static String readString(ByteBuffer in) {
        int length = in.getInt();
        if (length < 0 || length > in.remaining()) {
            throw new IllegalArgumentException("string length " + length + " exceeds the "
                    + in.remaining() + " bytes left");
        }
        String s = new String(in.array(), in.position(), length, StandardCharsets.UTF_8);
        in.position(in.position() + length);
        return s;
    }
}
