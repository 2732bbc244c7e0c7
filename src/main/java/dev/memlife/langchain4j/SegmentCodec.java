package dev.memlife.langchain4j;

import dev.langchain4j.data.document.Metadata;
import dev.langchain4j.data.segment.TextSegment;
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

/**
 * How {@link WriteBehindEmbeddingIngestor}'s spool keeps segments: the id as UTF-8, each segment's
 * text and its metadata, whose values are those LangChain4j's {@link Metadata} holds: strings,
 * UUIDs, integers, longs, floats and doubles, each written with its type. A value of any other type
 * is refused with an {@link IllegalArgumentException} that names the segment and the key, before
 * anything is taken.
 */
final class SegmentCodec implements StateJournal.StringIds<TextSegment> {

    static final SegmentCodec INSTANCE = new SegmentCodec();

    private static final List<Class<?>> KEPT = List.of(String.class, UUID.class, Integer.class, Long.class,
            Float.class, Double.class);

    private SegmentCodec() {}

    @Override
    public byte[] state(List<TextSegment> state) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(state.size());
            for (TextSegment segment : state) {
                SpoolText.write(out, segment.text());
                SpoolMetadata.write(out, segment.metadata().toMap(), KEPT, "segment " + abbreviate(segment.text()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // not on a byte array
        }
        return bytes.toByteArray();
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
                segments.add(TextSegment.from(text, Metadata.from(SpoolMetadata.read(in))));
            }
            return segments;
        } catch (IOException e) {
            throw new UncheckedIOException("a damaged segment in a write-behind spool", e);
        }
    }
}
