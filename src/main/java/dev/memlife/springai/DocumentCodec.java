package dev.memlife.springai;

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
import org.springframework.ai.document.Document;

/**
 * How {@link WriteBehindVectorStore}'s spool keeps documents: id, text, score and metadata whose
 * values are strings, integers, longs, doubles, floats or booleans. A media document, or a metadata
 * value of another type, is refused with an {@link IllegalArgumentException} that names it, before
 * anything is taken.
 */
final class DocumentCodec implements StateJournal.Codec<String, Document> {

    static final DocumentCodec INSTANCE = new DocumentCodec();

    private static final byte STRING = 1;
    private static final byte INTEGER = 2;
    private static final byte LONG = 3;
    private static final byte DOUBLE = 4;
    private static final byte FLOAT = 5;
    private static final byte BOOLEAN = 6;

    private DocumentCodec() {}

    @Override
    public byte[] id(String id) {
        return id.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public String id(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Override
    public byte[] state(List<Document> state) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(state.size());
            for (Document d : state) {
                if (!d.isText()) {
                    throw new IllegalArgumentException("document " + d.getId()
                            + " holds media: a write-behind vector store's spool keeps text documents only");
                }
                SpoolText.write(out, d.getId());
                SpoolText.write(out, d.getText());
                out.writeBoolean(d.getScore() != null);
                if (d.getScore() != null) {
                    out.writeDouble(d.getScore());
                }
                out.writeInt(d.getMetadata().size());
                for (Map.Entry<String, Object> e : d.getMetadata().entrySet()) {
                    SpoolText.write(out, e.getKey());
                    value(out, d.getId(), e.getKey(), e.getValue());
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // not on a byte array
        }
        return bytes.toByteArray();
    }

    private static void value(DataOutputStream out, String id, String key, Object v) throws IOException {
        if (v instanceof String s) {
            out.writeByte(STRING);
            SpoolText.write(out, s);
        } else if (v instanceof Integer i) {
            out.writeByte(INTEGER);
            out.writeInt(i);
        } else if (v instanceof Long l) {
            out.writeByte(LONG);
            out.writeLong(l);
        } else if (v instanceof Double x) {
            out.writeByte(DOUBLE);
            out.writeDouble(x);
        } else if (v instanceof Float f) {
            out.writeByte(FLOAT);
            out.writeFloat(f);
        } else if (v instanceof Boolean b) {
            out.writeByte(BOOLEAN);
            out.writeBoolean(b);
        } else {
            throw new IllegalArgumentException("document " + id + ": metadata '" + key + "' is a "
                    + (v == null ? "null" : v.getClass().getName()) + "; a write-behind vector store's spool keeps "
                    + "strings, integers, longs, doubles, floats and booleans");
        }
    }

    @Override
    public List<Document> state(byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            int n = in.readInt();
            List<Document> documents = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                String id = SpoolText.read(in);
                String text = SpoolText.read(in);
                Double score = in.readBoolean() ? in.readDouble() : null;
                Map<String, Object> metadata = new LinkedHashMap<>();
                for (int m = in.readInt(); m > 0; m--) {
                    String key = SpoolText.read(in);
                    metadata.put(key, value(in));
                }
                documents.add(Document.builder().id(id).text(text).score(score).metadata(metadata).build());
            }
            return documents;
        } catch (IOException e) {
            throw new UncheckedIOException("a damaged document in a write-behind spool", e);
        }
    }

    private static Object value(DataInputStream in) throws IOException {
        byte type = in.readByte();
        return switch (type) {
            case STRING -> SpoolText.read(in);
            case INTEGER -> in.readInt();
            case LONG -> in.readLong();
            case DOUBLE -> in.readDouble();
            case FLOAT -> in.readFloat();
            case BOOLEAN -> in.readBoolean();
            default -> throw new IOException("a metadata value of an unknown type " + type);
        };
    }
}
