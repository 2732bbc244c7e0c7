package dev.memlife.langchain4j;

import dev.langchain4j.data.document.Metadata;
import dev.langchain4j.data.segment.TextSegment;
import dev.memlife.internal.SpoolText;
import dev.memlife.internal.StateJournal;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * How {@link WriteBehindEmbeddingIngestor}'s spool keeps segments: the id as UTF-8, each segment's
 * text and its metadata, whose values are those LangChain4j's {@link Metadata} holds: strings,
 * UUIDs, integers, longs, floats and doubles, each written with its type. A value of any other type
 * is refused with an {@link IllegalArgumentException} that names the segment and the key, before
 * anything is taken.
 */
final class SegmentCodec implements StateJournal.Codec<String, TextSegment> {

    static final SegmentCodec INSTANCE = new SegmentCodec();

    private static final byte STRING = 1;
    private static final byte UUID_VALUE = 2;
    private static final byte INTEGER = 3;
    private static final byte LONG = 4;
    private static final byte FLOAT = 5;
    private static final byte DOUBLE = 6;

    private SegmentCodec() {}

    @Override
    public byte[] id(String id) {
        return id.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String id(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Override
    public byte[] state(List<TextSegment> state) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(state.size());
            for (TextSegment segment : state) {
                SpoolText.write(out, segment.text());
                Map<String, Object> metadata = segment.metadata().toMap();
                out.writeInt(metadata.size());
                for (Map.Entry<String, Object> e : metadata.entrySet()) {
                    SpoolText.write(out, e.getKey());
                    value(out, segment, e.getKey(), e.getValue());
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // not on a byte array
        }
        return bytes.toByteArray();
    }

    private static void value(DataOutputStream out, TextSegment segment, String key, Object v) throws IOException {
        if (v instanceof String s) {
            out.writeByte(STRING);
            SpoolText.write(out, s);
        } else if (v instanceof UUID u) {
            out.writeByte(UUID_VALUE);
            out.writeLong(u.getMostSignificantBits());
            out.writeLong(u.getLeastSignificantBits());
        } else if (v instanceof Integer i) {
            out.writeByte(INTEGER);
            out.writeInt(i);
        } else if (v instanceof Long l) {
            out.writeByte(LONG);
            out.writeLong(l);
        } else if (v instanceof Float f) {
            out.writeByte(FLOAT);
            out.writeFloat(f);
        } else if (v instanceof Double d) {
            out.writeByte(DOUBLE);
            out.writeDouble(d);
        } else {
            throw new IllegalArgumentException("segment " + abbreviate(segment.text()) + ": metadata '" + key + "' is a "
                    + (v == null ? "null" : v.getClass().getName()) + "; a write-behind embedding ingestor's spool "
                    + "keeps strings, UUIDs, integers, longs, floats and doubles");
        }
    }

    private static String abbreviate(String text) {
        return text.length() <= 40 ? '"' + text + '"' : '"' + text.substring(0, 37) + "...\"";
    }

    @Override
    public List<TextSegment> state(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            int n = in.readInt();
            List<TextSegment> segments = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                String text = SpoolText.read(in);
                Map<String, Object> metadata = new LinkedHashMap<>();
                for (int m = in.readInt(); m > 0; m--) {
                    String key = SpoolText.read(in);
                    metadata.put(key, value(in));
                }
                segments.add(TextSegment.from(text, Metadata.from(metadata)));
            }
            return segments;
        } catch (IOException e) {
            throw new UncheckedIOException("a damaged segment in a write-behind spool", e);
        }
    }

    private static Object value(DataInputStream in) throws IOException {
        byte type = in.readByte();
        return switch (type) {
            case STRING -> SpoolText.read(in);
            case UUID_VALUE -> new UUID(in.readLong(), in.readLong());
            case INTEGER -> in.readInt();
            case LONG -> in.readLong();
            case FLOAT -> in.readFloat();
            case DOUBLE -> in.readDouble();
            default -> throw new IOException("a metadata value of an unknown type " + type);
        };
    }
}
