package dev.memlife.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.memlife.Message;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class CodecTest {

    @Test
    void plainTextIsStoredAsItself() {
        for (String s : List.of("", "chat:1", "h\u00e9llo \uD83D\uDE42", "back\\slash \\0 \\ud800", "x\uFDD0",
                "'; DROP TABLE t; --")) {
            assertThat(Codec.text(s)).isSameAs(s);
            assertThat(Codec.string(s)).isEqualTo(s);
        }
    }

    @Test
    void nulUnpairedSurrogatesAndALeadingMarkerAreEscapedBehindTheMarker() {
        assertThat(Codec.text("a\u0000b")).isEqualTo("\uFDD0a\\0b");
        assertThat(Codec.text("alice\ud800")).isEqualTo("\uFDD0alice\\ud800");
        assertThat(Codec.text("\udc00\\ \uD83D\uDE42")).isEqualTo("\uFDD0\\udc00\\\\ \uD83D\uDE42");
        assertThat(Codec.text("\uFDD0x")).isEqualTo("\uFDD0\uFDD0x");
        assertThat(Codec.text("\ud800\ud800\udc00")).isEqualTo("\uFDD0\\ud800\ud800\udc00");
    }

    @Test
    void everyTrickyStringRoundTripsAndNoTwoShareAStoredForm() {
        List<String> tricky = List.of("", "\u0000", "\\0", "\uFDD0\\0", "\uFDD0", "\uFDD0\uFDD0", "alice\ud800",
                "alice?", "alice\\ud800", "\uFDD0alice\\ud800", "\udc00\ud800", "\ud800\udc00", "\ud800", "\\",
                "\uFDD0\\\\", "\u0000\u0000", "a\u0000", "a");

        for (String s : tricky) {
            assertThat(Codec.string(Codec.text(s))).isEqualTo(s);
            assertThat(Codec.text(s)).doesNotContain("\u0000").matches(CodecTest::isWellFormed);
        }
        assertThat(tricky.stream().map(Codec::text).distinct()).hasSameSizeAs(tricky);
    }

    @Test
    void aMalformedEscapedTextIsRejected() {
        for (String bad : List.of("\uFDD0\\", "\uFDD0\\x", "\uFDD0\\u12", "\uFDD0\\u0041", "\uFDD0\\uD800")) {
            assertThatThrownBy(() -> Codec.string(bad)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("bad escape at index");
        }
    }

    @Test
    void messageListsOfFormat1AreStillRead() {
        byte[] format1 = {1, 0, 0, 0, 1, 0, 0, 0, 4, 'u', 's', 'e', 'r', 0, 0, 0, 2, 'h', 'i'};

        assertThat(Codec.decodeMessages(format1)).containsExactly(Message.user("hi"));
    }

    @Test
    void messagesRoundTripWithNulEmojiAndEmptyStrings() {
        List<Message> messages = List.of(new Message("", ""), Message.user("a\u0000b \uD83D\uDE42"),
                Message.assistant("x".repeat(100_000)), new Message("\ud800", "\uFDD0\\0 \udfff"));

        assertThat(Codec.decodeMessages(Codec.encodeMessages(messages))).isEqualTo(messages);
        assertThat(Codec.decodeMessages(Codec.encodeMessages(List.of()))).isEmpty();
    }

    @Test
    void aTruncatedOrForeignMessageListIsRejected() {
        byte[] encoded = Codec.encodeMessages(List.of(Message.user("hello")));

        assertThatThrownBy(() -> Codec.decodeMessages(Arrays.copyOf(encoded, encoded.length - 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("exceeds");
        assertThatThrownBy(() -> Codec.decodeMessages(new byte[] {1, 0}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("truncated");
        assertThatThrownBy(() -> Codec.decodeMessages(new byte[] {7, 0, 0, 0, 0}))
                .hasMessage("unknown message format 7");
        assertThatThrownBy(() -> Codec.decodeMessages(Arrays.copyOf(encoded, encoded.length + 1)))
                .hasMessageContaining("1 bytes left");
    }

    /** Whether {@code s} has no unpaired surrogate, as a text column requires. */
    static boolean isWellFormed(String s) {
        return s.equals(new String(s.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8));
    }
}
