package dev.memlife.store;

import dev.memlife.Message;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * How the store writes a Java string into a text column, exactly and injectively, on SQLite and
 * PostgreSQL alike; and how it writes a message list into a bytes column. Stateless and
 * thread-safe.
 *
 * <p><b>Strings.</b> A Java string is any sequence of UTF-16 code units. A text column holds only
 * well-formed Unicode, and PostgreSQL's holds no NUL either. So {@link #text(String)} stores:
 *
 * <ul>
 *   <li>the string itself when it is <i>plain</i>: no unpaired surrogate, no NUL, and not
 *       starting with {@link #ESCAPED}. That is all normal text, which stays readable and
 *       queryable with plain SQL ({@code WHERE session_id = 'chat:1'});
 *   <li>otherwise {@link #ESCAPED} followed by the string with each backslash written {@code \\},
 *       each NUL {@code \0} and each unpaired surrogate {@code \}{@code u} and its four lower-case
 *       hex digits (e.g. {@code \}{@code ud800}); every other character as itself.
 * </ul>
 *
 * {@link #string(String)} undoes it: {@code string(text(s)).equals(s)} for every string {@code s},
 * so two different strings are never stored as one. Plain strings never start with {@link
 * #ESCAPED} and escaped ones always do; both are well-formed and free of NUL.
 *
 * <p><b>Message lists</b> are a version byte, the message count, then each message's role and
 * content as a 4-byte big-endian length and that many bytes: in format {@value #MESSAGES_FORMAT},
 * the UTF-8 of the string's {@link #text(String) text}; in format 1 (written by schema version 1),
 * the string's plain UTF-8, still read.
 */
final class Codec {

    /**
     * Starts every escaped string: U+FDD0, a Unicode noncharacter, which the standard reserves for
     * a program's internal use; text from elsewhere does not contain it.
     */
    static final char ESCAPED = '\uFDD0';

    /** The first byte of every message list written now. */
    static final byte MESSAGES_FORMAT = 2;
    /** The format of message lists written by schema version 1: strings as plain UTF-8. */
    static final byte MESSAGES_FORMAT_UTF8 = 1;

    private Codec() {}

    /** The text stored for {@code s}: {@code s} itself if it is plain, else its escaped form. */
    static String text(String s) {
        if (isPlain(s)) {
            return s;
        }
        StringBuilder out = new StringBuilder(s.length() + 16).append(ESCAPED);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\') {
                out.append("\\\\");
            } else if (c == '\0') {
                out.append("\\0");
            } else if (isPairAt(s, i)) {
                out.append(c).append(s.charAt(++i));
            } else if (Character.isSurrogate(c)) {
                out.append("\\u").append(Integer.toHexString(c)); // a surrogate has 4 hex digits
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /**
     * The string whose {@link #text(String) text} is {@code stored}.
     *
     * @throws IllegalArgumentException if {@code stored} starts with {@link #ESCAPED} but is not an
     *     escaped form {@link #text(String)} writes
     */
    static String string(String stored) {
        if (stored.isEmpty() || stored.charAt(0) != ESCAPED) {
            return stored;
        }
        StringBuilder out = new StringBuilder(stored.length());
        for (int i = 1; i < stored.length(); i++) {
            char c = stored.charAt(i);
            if (c != '\\') {
                out.append(c);
                continue;
            }
            char next = i + 1 < stored.length() ? stored.charAt(i + 1) : ' ';
            if (next == '\\' || next == '0') {
                out.append(next == '0' ? '\0' : '\\');
                i++;
            } else if (next == 'u' && escapedSurrogate(stored, i + 2) >= 0) {
                out.append((char) escapedSurrogate(stored, i + 2));
                i += 5;
            } else {
                throw new IllegalArgumentException("stored text has a bad escape at index " + i + ": "
                        + stored.substring(i, Math.min(stored.length(), i + 6)));
            }
        }
        return out.toString();
    }

    /** A string's plain UTF-8, as schema version 1 stored strings in bytes columns. */
    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    static byte[] encodeMessages(List<Message> messages) {
        List<byte[]> parts = new ArrayList<>(messages.size() * 2);
        int size = 1 + 4;
        for (Message m : messages) {
            byte[] role = text(m.role()).getBytes(StandardCharsets.UTF_8);
            byte[] content = text(m.content()).getBytes(StandardCharsets.UTF_8);
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
            if (format != MESSAGES_FORMAT && format != MESSAGES_FORMAT_UTF8) {
                throw new IllegalArgumentException("unknown message format " + format);
            }
            int count = in.getInt();
            if (count < 0 || count > in.remaining() / 8) {
                throw new IllegalArgumentException("message count " + count + " does not fit in "
                        + encoded.length + " bytes");
            }
            List<Message> messages = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                messages.add(new Message(readString(in, format), readString(in, format)));
            }
            if (in.hasRemaining()) {
                throw new IllegalArgumentException(in.remaining() + " bytes left after " + count + " messages");
            }
            return messages;
        } catch (BufferUnderflowException e) {
            throw new IllegalArgumentException("message list of " + encoded.length + " bytes is truncated", e);
        }
    }

    /** Whether {@code s} is stored as itself: no unpaired surrogate, no NUL, not starting with the marker. */
    private static boolean isPlain(String s) {
        if (!s.isEmpty() && s.charAt(0) == ESCAPED) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\0') {
                return false;
            }
            if (Character.isSurrogate(c)) {
                if (!isPairAt(s, i)) {
                    return false;
                }
                i++;
            }
        }
        return true;
    }

    /** Whether a high surrogate followed by a low one (one supplementary character) is at {@code i}. */
    private static boolean isPairAt(String s, int i) {
        return Character.isHighSurrogate(s.charAt(i)) && i + 1 < s.length()
                && Character.isLowSurrogate(s.charAt(i + 1));
    }

    /** The surrogate written as 4 lower-case hex digits at {@code start}, or -1 if there is none. */
    private static int escapedSurrogate(String s, int start) {
        if (start + 4 > s.length()) {
            return -1;
        }
        int value = 0;
        for (int i = start; i < start + 4; i++) {
            char c = s.charAt(i);
            int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (digit < 0) {
                return -1;
            }
            value = value * 16 + digit;
        }
        return Character.isSurrogate((char) value) ? value : -1;
    }

    private static String readString(ByteBuffer in, byte format) {
        int length = in.getInt();
        if (length < 0 || length > in.remaining()) {
            throw new IllegalArgumentException("string length " + length + " exceeds the "
                    + in.remaining() + " bytes left");
        }
        String s = new String(in.array(), in.position(), length, StandardCharsets.UTF_8);
        in.position(in.position() + length);
        return format == MESSAGES_FORMAT_UTF8 ? s : string(s);
    }
}
