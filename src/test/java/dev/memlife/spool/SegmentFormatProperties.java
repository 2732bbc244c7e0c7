package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.memlife.spool.SegmentFormat.Contents;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.StringLength;

/**
 * Properties of {@link SegmentFormat} over random records: a cut anywhere keeps exactly the whole
 * records before it; garbage written over one record loses that record and no other.
 */
class SegmentFormatProperties {

    private static int size(String record) {
        return 8 + record.getBytes(StandardCharsets.UTF_8).length;
    }

    @Property(tries = 300)
    void aCutAnywhereKeepsExactlyTheWholeRecordsBeforeIt(
            @ForAll @Size(min = 1, max = 20) List<@StringLength(max = 40) String> records,
            @ForAll @IntRange(min = 0, max = 100_000) int cutSeed) {
        byte[] whole = SegmentFormatTest.segment(records);
        int cut = SegmentFormatTest.H + cutSeed % (whole.length - SegmentFormatTest.H + 1);
        Contents c = SegmentFormat.read("s", Arrays.copyOf(whole, cut));

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
        assertThat(c.tornTailBytes()).isEqualTo(cut - end);
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
        Contents c = SegmentFormat.read("s", bytes);

        List<String> expected = new ArrayList<>(records);
        expected.remove(victim);
        assertThat(SegmentFormatTest.payloads(c)).containsExactlyElementsOf(expected);
        assertThat(c.corrupt()).extracting(SegmentFormat.Corruption::offset).containsExactly((long) at);
        assertThat(c.validLength()).isEqualTo(bytes.length);
    }
}
