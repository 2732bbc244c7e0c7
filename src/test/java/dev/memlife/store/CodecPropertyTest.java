package dev.memlife.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.memlife.Message;
import java.util.List;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * {@link Codec} on hostile strings, without a database (jqwik): many tries, in well under a
 * second. The same properties through a real store are {@link HostileInputProperties}.
 */
class CodecPropertyTest {

    /** Every string comes back exactly, and is stored as text a database column can hold. */
    @Property(tries = 2_000)
    void everyStringRoundTripsThroughItsStoredText(@ForAll("hostile") String s) {
        String text = Codec.text(s);

        assertThat(Codec.string(text)).isEqualTo(s);
        assertThat(text).doesNotContain("\u0000").matches(CodecTest::isWellFormed);
        assertThat(text.equals(s)).as("stored as itself").isEqualTo(CodecTest.isWellFormed(s)
                && s.indexOf('\0') < 0 && !s.startsWith(String.valueOf(Codec.ESCAPED)));
    }

    /** Strings that differ only where a lossy encoding would merge them keep distinct stored texts. */
    @Property(tries = 500)
    void distinctStringsNeverShareAStoredText(@ForAll("nearCollisions") List<String> strings) {
        assertThat(strings.stream().map(Codec::text).distinct()).hasSameSizeAs(strings);
    }

    @Property(tries = 500)
    void everyMessageListRoundTrips(@ForAll("messageLists") List<Message> messages) {
        assertThat(Codec.decodeMessages(Codec.encodeMessages(messages))).isEqualTo(messages);
    }

    @Provide
    Arbitrary<String> hostile() {
        return HostileStrings.any();
    }

    @Provide
    Arbitrary<List<String>> nearCollisions() {
        return HostileStrings.nearCollisions();
    }

    @Provide
    Arbitrary<List<Message>> messageLists() {
        return HostileStrings.messageLists();
    }
}
