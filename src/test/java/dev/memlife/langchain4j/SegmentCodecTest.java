package dev.memlife.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.langchain4j.data.document.Metadata;
import dev.langchain4j.data.segment.TextSegment;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The embedding ingestor's spool codec: ids, texts and every metadata type LangChain4j holds, back as they were. */
@Timeout(30)
class SegmentCodecTest {

    private final SegmentCodec codec = SegmentCodec.INSTANCE;

    @Test
    void idsAndSegmentsComeBackAsTheyWereWithTheTypeOfEveryMetadataValue() {
        Metadata typed = new Metadata().put("source", "notes – ü.md").put("doc", UUID.randomUUID()).put("chunk", 3)
                .put("offset", Long.MAX_VALUE).put("weight", 0.5f).put("score", -0.25).put("empty", "");
        List<TextSegment> state = List.of(TextSegment.from("Maria lives in Lisbon 🇵🇹", typed), TextSegment.from("x"));

        List<TextSegment> back = codec.state(codec.state(state));

        assertThat(back).isEqualTo(state);
        assertThat(back.get(0).metadata().toMap()).isEqualTo(typed.toMap());
        assertThat(back.get(0).metadata().toMap().get("weight")).isInstanceOf(Float.class);
        assertThat(back.get(0).metadata().toMap().get("offset")).isInstanceOf(Long.class);
        assertThat(back.get(0).metadata().toMap().get("doc")).isInstanceOf(UUID.class);
        assertThat(codec.id(codec.id("doc-1#0 ✓"))).isEqualTo("doc-1#0 ✓");
    }

    @Test
    void aMetadataValueOfAnotherTypeIsRefusedNamingTheSegmentAndTheKey() {
        Metadata odd = new Metadata() {
            @Override
            public Map<String, Object> toMap() {
                return Map.of("flag", Boolean.TRUE);
            }
        };
        List<TextSegment> state = List.of(TextSegment.from("a segment with a boolean", odd));

        assertThatThrownBy(() -> codec.state(state)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("\"a segment with a boolean\"").hasMessageContaining("'flag'")
                .hasMessageContaining("java.lang.Boolean");
    }
}
