package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.memlife.MemoryManager;
import dev.memlife.Message;
import dev.memlife.Turn;
import dev.memlife.testing.RecordingProvider;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.zip.CRC32C;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link SpoolRecord}: a record sealed under the order lock checks like one checksummed whole, and
 * reads back as the write it was made from.
 */
class SpoolRecordTest {

    @TempDir
    Path tmp;

    @Property(tries = 300)
    void aRecordSealedUnderTheLockHasTheChecksumOfTheWholeRecord(@ForAll long seq, @ForAll long millis,
            @ForAll String user, @ForAll String session) {
        byte[] encoded = SpoolRecord.encode(Turn.of("unused", session, user, "a", List.of(), Instant.EPOCH));
        byte[] record = Arrays.copyOf(encoded, SpoolRecord.length(encoded));
        byte[] buffer = new byte[record.length + 3];
        System.arraycopy(record, 0, buffer, 3, record.length);
        SpoolRecord.seal(buffer, 3, record.length, seq, millis, new CRC32C());

        CRC32C whole = new CRC32C();
        whole.update(buffer, 3, 4);
        whole.update(buffer, 3 + SegmentFormat.RECORD_OVERHEAD, record.length - SegmentFormat.RECORD_OVERHEAD);
        assertThat(SpoolRecord.getInt(buffer, 3 + 4)).isEqualTo((int) whole.getValue());
        assertThat(SpoolRecord.getLong(buffer, 3 + record.length - 16)).isEqualTo(seq);
        assertThat(SpoolRecord.getLong(buffer, 3 + record.length - 8)).isEqualTo(millis);
    }

    @Property(tries = 1000)
    void encodingWithoutAllocatingGivesTheBytesStringGetBytesGives(@ForAll("text") String s) {
        byte[] expected = s.getBytes(StandardCharsets.UTF_8); // unpaired surrogates become '?'
        byte[] out = new byte[3 * s.length() + 5];
        int end = new SpoolRecord.Scratch().utf8(s, out, 5);
        assertThat(Arrays.copyOfRange(out, 5, end)).isEqualTo(expected);
    }

    @Property(tries = 300)
    void aRecordReadsBackAsTheWriteItWasEncodedFrom(@ForAll("text") String session, @ForAll("text") String user,
            @ForAll("text") String assistant, @ForAll("text") String role, @ForAll("text") String content) {
        Turn turn = Turn.of("unused", session, user, assistant, List.of(new Message(role, content)), Instant.EPOCH);
        byte[] encoded = SpoolRecord.encode(turn);
        byte[] record = Arrays.copyOf(encoded, SpoolRecord.length(encoded));
        SpoolRecord.seal(record, 0, record.length, 7, 99, new CRC32C());
        SegmentBytes.Contents c = SegmentBytes.read("s", concat(SegmentFormat.header("p"), record));
        Turn back = SpoolRecord.decode(c.idPrefix(), c.payload(c.entries().get(0)));
        assertThat(back.writeId()).isEqualTo("p:7");
        assertThat(back.sessionId()).isEqualTo(roundTrip(session));
        assertThat(back.userContent()).isEqualTo(roundTrip(user));
        assertThat(back.assistantContent()).isEqualTo(roundTrip(assistant));
        assertThat(back.messages()).containsExactly(new Message(roundTrip(role), roundTrip(content)));
    }

    @Test
    void aThreadsScratchBufferServesAWriteLargerThanItKeepsAndTheSmallWritesAfterIt() {
        String large = "é".repeat(SpoolRecord.SCRATCH_KEPT); // two bytes each: twice what a thread keeps
        byte[] first = SpoolRecord.encode(Turn.of("x", "s", large, "a", List.of(), Instant.EPOCH));
        assertThat(SpoolRecord.length(first)).isGreaterThan(2 * SpoolRecord.SCRATCH_KEPT);
        byte[] second = SpoolRecord.encode(Turn.of("x", "s", "small", "a", List.of(), Instant.EPOCH));
        byte[] third = SpoolRecord.encode(Turn.of("x", "s", "smaller", "a", List.of(), Instant.EPOCH));
        assertThat(third).as("the kept buffer is reused").isSameAs(second).isNotSameAs(first);
        assertThat(third.length).isLessThanOrEqualTo(SpoolRecord.SCRATCH_KEPT);
        byte[] record = Arrays.copyOf(third, SpoolRecord.length(third));
        SpoolRecord.seal(record, 0, record.length, 1, 2, new CRC32C());
        SegmentBytes.Contents c = SegmentBytes.read("s", concat(SegmentFormat.header("p"), record));
        assertThat(SpoolRecord.decode("p", c.payload(c.entries().get(0))).userContent()).isEqualTo("smaller");
    }

    /**
     * Text of one-, two-, three- and four-byte UTF-8 characters: few enough distinct characters that
     * a high surrogate is often followed by a low one (a pair), and often not (unpaired).
     */
    @Provide
    Arbitrary<String> text() {
        return Arbitraries.strings().withCharRange('a', 'c').withCharRange('\u00e0', '\u00e2')
                .withCharRange('\u4e00', '\u4e02').withCharRange('\ud83d', '\ud83d').withCharRange('\ude00', '\ude01')
                .ofMaxLength(24);
    }

    private static String roundTrip(String s) {
        return new String(s.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8);
    }

    @Test
    void aSealedRecordChecksAndReadsBackWithItsIdTimeAndMessages() {
        Turn turn = Turn.of("unused", "s-1", "é✓ user", "reply", List.of(Message.user("a"), Message.assistant("b")),
                Instant.EPOCH);
        byte[] encoded = SpoolRecord.encode(turn);
        byte[] record = Arrays.copyOf(encoded, SpoolRecord.length(encoded));
        byte[] buffer = new byte[record.length + 5];
        System.arraycopy(record, 0, buffer, 5, record.length);
        SpoolRecord.seal(buffer, 5, record.length, 42, 1_700_000_000_123L, new CRC32C());
        byte[] segment = concat(SegmentFormat.header("prefix"), Arrays.copyOfRange(buffer, 5, buffer.length));
        SegmentBytes.Contents c = SegmentBytes.read("s", segment);
        assertThat(c.corrupt()).isEmpty();
        Turn back = SpoolRecord.decode(c.idPrefix(), c.payload(c.entries().get(0)));
        assertThat(back.writeId()).isEqualTo("prefix:42");
        assertThat(back.acceptedAt()).isEqualTo(Instant.ofEpochMilli(1_700_000_000_123L));
        assertThat(back.sessionId()).isEqualTo("s-1");
        assertThat(back.userContent()).isEqualTo("é✓ user");
        assertThat(back.messages()).containsExactly(Message.user("a"), Message.assistant("b"));

        byte[] kept = SpoolRecord.encodeKept(Turn.of("old-run:7", "s", "u", "a", List.of(),
                Instant.ofEpochMilli(99)));
        SegmentBytes.Contents k = SegmentBytes.read("k", concat(SegmentFormat.header(""), kept));
        Turn keptBack = SpoolRecord.decode("", k.payload(k.entries().get(0)));
        assertThat(keptBack.writeId()).isEqualTo("old-run:7");
        assertThat(keptBack.acceptedAt()).isEqualTo(Instant.ofEpochMilli(99));
    }

    @Test
    void aWriteTooLargeForARecordIsRefusedBeforeAnythingIsQueued() {
        RecordingProvider store = new RecordingProvider("store");
        MemoryManager manager = MemoryManager.builder().spool(Spool.open(tmp.resolve("spool"))).build();
        manager.addProvider(store);
        String huge = "x".repeat(SegmentFormat.MAX_PAYLOAD);
        assertThatThrownBy(() -> manager.syncAll(huge, "a", "s")).isInstanceOf(RejectedExecutionException.class)
                .hasMessageContaining("at most " + SegmentFormat.MAX_PAYLOAD).hasMessageContaining("counted as rejected");
        assertThat(manager.figures().rejected()).isEqualTo(1);
        assertThat(manager.figures().accepted()).isZero();
        manager.stop();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
