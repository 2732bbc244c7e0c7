package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.memlife.spool.SegmentBytes.Contents;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.StringLength;

/**
 * Properties of {@link SegmentFormat} over random records: a cut anywhere keeps exactly the whole
 * records before it; garbage written over one record loses that record and no other; and a
 * segment read from its file through a small window finds exactly what reading it whole finds.
 */
class SegmentFormatPropertyTest {

    private static int size(String record) {
        return 8 + record.getBytes(StandardCharsets.UTF_8).length;
    }

    @Property(tries = 300)
    void aCutAnywhereKeepsExactlyTheWholeRecordsBeforeIt(
            @ForAll @Size(min = 1, max = 20) List<@StringLength(max = 40) String> records,
            @ForAll @IntRange(min = 0, max = 100_000) int cutSeed) {
        byte[] whole = SegmentFormatTest.segment(records);
        int cut = SegmentFormatTest.H + cutSeed % (whole.length - SegmentFormatTest.H + 1);
        Contents c = SegmentBytes.read("s", Arrays.copyOf(whole, cut));

        int end = SegmentFormatTest.H;
        int kept = 0;
        for (String r : records) {
            if (end + size(r) > cut) {
                break;
            }
            end += size(r);
            kept++;
        }
        assertThat(SegmentFormatTest.payloads(c)).containsExactlyElementsOf(records.subList(0, kept));
        assertThat(c.validLength()).isEqualTo(end);
        // what is left of a record cut short is torn up to its last byte that is not zero; zeros
        // after that are space never written, as a mapping leaves them
        int lastNonZero = cut - 1;
        while (lastNonZero >= end && whole[lastNonZero] == 0) {
            lastNonZero--;
        }
        assertThat(c.tornTailBytes()).isEqualTo(lastNonZero + 1 - end);
        assertThat(c.tornTailBytes() + c.unwrittenBytes()).isEqualTo(cut - end);
        assertThat(c.corrupt()).isEmpty();
    }

    @Property(tries = 300)
    void garbageOverOneRecordLosesThatRecordOnly(
            @ForAll @Size(min = 3, max = 20) List<@StringLength(min = 1, max = 40) String> records,
            @ForAll @IntRange(min = 0, max = 1_000) int which, @ForAll byte garbage) {
        byte[] bytes = SegmentFormatTest.segment(records);
        int victim = 1 + which % (records.size() - 2); // never the first or the last
        int at = SegmentFormatTest.H;
        for (int i = 0; i < victim; i++) {
            at += size(records.get(i));
        }
        Arrays.fill(bytes, at + 4, at + size(records.get(victim)), garbage == 0 ? 1 : garbage); // checksum and payload
        Contents c = SegmentBytes.read("s", bytes);

        List<String> expected = new ArrayList<>(records);
        expected.remove(victim);
        assertThat(SegmentFormatTest.payloads(c)).containsExactlyElementsOf(expected);
        assertThat(c.corrupt()).extracting(SegmentFormat.Corruption::offset).containsExactly((long) at);
        assertThat(c.validLength()).isEqualTo(bytes.length);
    }

    @Property(tries = 200)
    void aFileReadThroughASmallWindowFindsWhatTheWholeBytesHold(
            @ForAll @Size(min = 1, max = 30) List<@IntRange(min = 0, max = 700) Integer> payloadSizes,
            @ForAll @IntRange(min = 16, max = 600) int chunk,
            @ForAll @IntRange(min = 0, max = 1_000_000) int damageSeed,
            @ForAll @IntRange(min = 0, max = 3) int damages,
            @ForAll boolean torn) throws Exception {
        List<String> records = payloadSizes.stream().map(n -> "r".repeat(n)).toList();
        byte[] bytes = SegmentFormatTest.segment(records);
        Random rnd = new Random(damageSeed);
        for (int i = 0; i < damages; i++) { // bytes flipped anywhere after the header
            bytes[SegmentFormatTest.H + rnd.nextInt(bytes.length - SegmentFormatTest.H)] ^= (byte) (1 + rnd.nextInt(255));
        }
        if (torn) {
            bytes = Arrays.copyOf(bytes, SegmentFormatTest.H + rnd.nextInt(bytes.length - SegmentFormatTest.H + 1));
        }
        Contents whole = SegmentBytes.read("s", bytes);
        Path file = Files.createTempFile("memlife-window", ".seg");
        try {
            Files.write(file, bytes);
            List<String> seen = new ArrayList<>();
            List<Long> offsets = new ArrayList<>();
            SegmentFormat.Summary read;
            try (SegmentWindow in = SegmentWindow.open(file, chunk)) {
                read = SegmentFormat.read("s", in, (offset, b, payloadAt, length) -> {
                    offsets.add(offset);
                    seen.add(new String(b, payloadAt, length, StandardCharsets.UTF_8));
                    return true;
                });
                int largest = payloadSizes.stream().mapToInt(Integer::intValue).max().orElse(0);
                if (damages == 0) { // read a chunk or a record at a time (a torn tail is less than one record)
                    assertThat(in.capacity()).isLessThanOrEqualTo(
                            Math.max(Math.max(chunk, SegmentFormatTest.H), largest + SegmentFormat.RECORD_OVERHEAD));
                }
            }
            assertThat(seen).containsExactlyElementsOf(SegmentFormatTest.payloads(whole));
            assertThat(offsets).containsExactlyElementsOf(
                    whole.entries().stream().map(e -> (long) e.offset()).toList());
            assertThat(read.corrupt()).isEqualTo(whole.corrupt());
            assertThat(read.validLength()).isEqualTo(whole.validLength());
            assertThat(read.tornTailBytes()).isEqualTo(whole.tornTailBytes());
            assertThat(read.records()).isEqualTo(whole.entries().size());
        } finally {
            Files.delete(file);
        }
    }
}
