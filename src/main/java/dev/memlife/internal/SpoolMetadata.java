package dev.memlife.internal;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Metadata maps in a write-behind spool's records (a document's, a text segment's): a count, then
 * each key and its value with the value's type. The types are those the frameworks' metadata
 * holds: strings, UUIDs, integers, longs, floats, doubles and booleans; each spool keeps those of
 * its framework.
 */
public final class SpoolMetadata {

    private static final byte STRING = 1;
    private static final byte UUID_VALUE = 2;
    private static final byte INTEGER = 3;
    private static final byte LONG = 4;
    private static final byte FLOAT = 5;
    private static final byte DOUBLE = 6;
    private static final byte BOOLEAN = 7;
    private static final List<Class<?>> TYPES = List.of(String.class, UUID.class, Integer.class, Long.class,
            Float.class, Double.class, Boolean.class);

    private SpoolMetadata() {}

    /**
     * Writes {@code metadata}, every value of one of {@code kept}, else refuses it naming {@code
     * owner} and the key.
     *
     * @param out where
     * @param metadata the map
     * @param kept the value types this spool keeps, a subset of the strings, UUIDs, integers,
     *     longs, floats, doubles and booleans
     * @param owner what the map belongs to, for the error ("document 42")
     * @throws IllegalArgumentException for a value of another type, or null
     * @throws IOException if {@code out} does
     */
    public static void write(DataOutputStream out, Map<String, Object> metadata, List<Class<?>> kept, String owner)
            throws IOException {
        for (Map.Entry<String, Object> e : metadata.entrySet()) {
            Object v = e.getValue();
            if (v == null || !kept.contains(v.getClass())) {
                throw new IllegalArgumentException(owner + ": metadata '" + e.getKey() + "' is a "
                        + (v == null ? "null" : v.getClass().getName()) + "; this write-behind spool keeps "
                        + kept.stream().map(Class::getSimpleName).toList());
            }
        }
        out.writeInt(metadata.size());
        for (Map.Entry<String, Object> e : metadata.entrySet()) {
            SpoolText.write(out, e.getKey());
            Object v = e.getValue();
            out.writeByte(TYPES.indexOf(v.getClass()) + 1);
            if (v instanceof String s) {
                SpoolText.write(out, s);
            } else if (v instanceof UUID u) {
                out.writeLong(u.getMostSignificantBits());
                out.writeLong(u.getLeastSignificantBits());
            } else if (v instanceof Integer i) {
                out.writeInt(i);
            } else if (v instanceof Long l) {
                out.writeLong(l);
            } else if (v instanceof Float f) {
                out.writeFloat(f);
            } else if (v instanceof Double d) {
                out.writeDouble(d);
            } else {
                out.writeBoolean((Boolean) v);
            }
        }
    }

    /**
     * Reads what {@link #write} wrote.
     *
     * @param in where from
     * @return the map, in the order written
     * @throws IOException if {@code in} does, ends early or holds a type this class does not know
     */
    public static Map<String, Object> read(DataInputStream in) throws IOException {
        Map<String, Object> metadata = new LinkedHashMap<>();
        for (int n = in.readInt(); n > 0; n--) {
            String key = SpoolText.read(in);
            byte type = in.readByte();
            metadata.put(key, switch (type) {
                case STRING -> SpoolText.read(in);
                case UUID_VALUE -> new UUID(in.readLong(), in.readLong());
                case INTEGER -> in.readInt();
                case LONG -> in.readLong();
                case FLOAT -> in.readFloat();
                case DOUBLE -> in.readDouble();
                case BOOLEAN -> in.readBoolean();
                default -> throw new IOException("a metadata value of an unknown type " + type);
            });
        }
        return metadata;
    }
}
