package dev.memlife.springai;

import dev.memlife.internal.SpoolMetadata;
import dev.memlife.internal.SpoolText;
import dev.memlife.internal.StateJournal;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.springframework.ai.document.Document;

/**
 * How {@link WriteBehindVectorStore}'s spool keeps documents: id, text, score and metadata whose
 * values are strings, UUIDs, integers, longs, floats, doubles or booleans. A media document, or a
 * metadata value of another type, is refused with an {@link IllegalArgumentException} that names
 * it, before anything is taken.
 */
final class DocumentCodec implements StateJournal.StringIds<Document> {

    static final DocumentCodec INSTANCE = new DocumentCodec();

    private static final List<Class<?>> KEPT = List.of(String.class, UUID.class, Integer.class, Long.class,
            Float.class, Double.class, Boolean.class);

    private DocumentCodec() {}

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
                SpoolMetadata.write(out, d.getMetadata(), KEPT, "document " + d.getId());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // not on a byte array
        }
        return bytes.toByteArray();
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
                documents.add(Document.builder().id(id).text(text).score(score).metadata(SpoolMetadata.read(in)).build());
            }
            return documents;
        } catch (IOException e) {
            throw new UncheckedIOException("a damaged document in a write-behind spool", e);
        }
    }
}
