package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.memlife.spool.SegmentBytes.Contents;
import dev.memlife.spool.SegmentBytes.Entry;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** {@link SegmentFormat}: records read back exactly; torn tails cut; corrupt records skipped, never half-read. */
class SegmentFormatTest {

    /** The header's length: its fixed part and the id prefix. */
    static final int H = SegmentFormat.header("test-prefix").length;

    static byte[] segment(List<String> payloads) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(SegmentFormat.header("test-prefix"));
        for (String p : payloads) {
            out.writeBytes(SegmentFormat.record(p.getBytes(StandardCharsets.UTF_8)));
        }
        return out.toByteArray();
    }

    static List<String> payloads(Contents contents) {
        return contents.entries().stream().map(e -> new String(contents.payload(e), StandardCharsets.UTF_8))
                .collect(Collectors.toList());
    }

    @Test
    void recordsReadBackExactlyInOrderWithTheirOffsets() {
        byte[] bytes = segment(List.of("one", "", "three"));
        Contents c = SegmentBytes.read("s-1", bytes);
        assertThat(c.idPrefix()).isEqualTo("test-prefix");
        assertThat(c.headerLength()).isEqualTo(H);
        assertThat(payloads(c)).containsExactly("one", "", "three");
        assertThat(c.entries()).extracting(Entry::offset).containsExactly(H, H + 8 + 3, H + 8 + 3 + 8);
        assertThat(c.corrupt()).isEmpty();
        assertThat(c.validLength()).isEqualTo(bytes.length);
        assertThat(c.tornTailBytes()).isZero();
    }

    private static int lastNonZero(byte[] bytes) {
        int i = bytes.length - 1;
        while (i >= 0 && bytes[i] == 0) {
            i--;
        }
        return i;
    }

    @Test
    void aRecordCutShortAtTheEndIsATornTailToCutNeverHalfRead() {
        byte[] whole = segment(List.of("one", "two", "three"));
        for (int cut = 1; cut < 8 + 5; cut++) {
            byte[] torn = Arrays.copyOf(whole, whole.length - cut);
            Contents c = SegmentBytes.read("s-1", torn);
            assertThat(payloads(c)).as("cut %d bytes", cut).containsExactly("one", "two");
            assertThat(c.validLength()).isEqualTo(H + 11 + 11);
            // what is left of the record is torn, up to its last byte that is not zero; zeros after
            // it are space never written, as a mapping leaves them
            assertThat(c.tornTailBytes() + c.unwrittenBytes()).isEqualTo(torn.length - (H + 22));
            assertThat(c.tornTailBytes()).isEqualTo(lastNonZero(torn) + 1 - (H + 22));
            assertThat(c.corrupt()).isEmpty();
        }
    }

    @Test
    void aCorruptRecordInTheMiddleIsReportedWithItsOffsetAndTheOthersAreKept() {
        byte[] bytes = segment(List.of("first", "second", "third"));
        int second = H + 8 + 5;
        bytes[second + 8 + 2] ^= 0x40; // a bit flipped in the payload of "second"
        Contents c = SegmentBytes.read("s-1", bytes);
        assertThat(payloads(c)).containsExactly("first", "third");
        assertThat(c.corrupt()).hasSize(1);
        assertThat(c.corrupt().get(0).offset()).isEqualTo(second);
        assertThat(c.corrupt().get(0).length()).isEqualTo(8 + 6);
        assertThat(c.corrupt().get(0).reason()).contains("checksum");
        assertThat(c.validLength()).isEqualTo(bytes.length);
    }

    @Test
    void aCorruptLengthIsCaughtByTheChecksumToo() {
        byte[] bytes = segment(List.of("first", "second", "third"));
        int second = H + 8 + 5;
        bytes[second + 3] = 2; // "second" now claims 2 bytes: the checksum covers the length
        Contents c = SegmentBytes.read("s-1", bytes);
        assertThat(payloads(c)).containsExactly("first", "third");
        assertThat(c.corrupt()).extracting(SegmentFormat.Corruption::offset).containsExactly((long) second);
    }

    @Test
    void aSegmentOfANewerFormatOrNotASegmentIsRefusedByName() {
        byte[] newer = segment(List.of("x"));
        newer[7] = 2;
        assertThatThrownBy(() -> SegmentBytes.read("spool/00000007.seg", newer))
                .isInstanceOf(SegmentFormat.UnreadableSegmentException.class)
                .hasMessageContaining("spool/00000007.seg").hasMessageContaining("newer memlife")
                .hasMessageContaining("version 2");
        assertThatThrownBy(() -> SegmentBytes.read("notes.txt", "hello world".getBytes(StandardCharsets.UTF_8)))
                .hasMessageContaining("not a memlife spool segment");
        assertThatThrownBy(() -> SegmentBytes.read("empty", new byte[3])).hasMessageContaining("header");
    }

    @Test
    void aPayloadTooLargeIsRefusedAtTheWriter() {
        assertThatThrownBy(() -> SegmentFormat.record(new byte[SegmentFormat.MAX_PAYLOAD + 1]))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(String.valueOf(SegmentFormat.MAX_PAYLOAD + 1));
    }
}
