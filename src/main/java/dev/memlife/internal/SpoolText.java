package dev.memlife.internal;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/** Strings in a write-behind spool's records: a length (-1 for null), then UTF-8 bytes. */
public final class SpoolText {

    private SpoolText() {}

    /**
     * Writes {@code s}.
     *
     * @param out where
     * @param s the string, or null
     * @throws IOException if {@code out} does
     */
    public static void write(DataOutputStream out, String s) throws IOException {
        if (s == null) {
            out.writeInt(-1);
            return;
        }
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    /**
     * Reads what {@link #write} wrote.
     *
     * @param in where from
     * @return the string, or null
     * @throws IOException if {@code in} does, or ends early
     */
    public static String read(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0) {
            return null;
        }
        byte[] b = in.readNBytes(n);
        if (b.length != n) {
            throw new java.io.EOFException("a string of " + n + " bytes ends after " + b.length);
        }
        return new String(b, StandardCharsets.UTF_8);
    }
}
