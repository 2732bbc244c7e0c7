package dev.memlife.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.memlife.Message;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class CodecTest {

    @Test
    void messagesRoundTripWithNulEmojiAndEmptyStrings() {
        List<Message> messages = List.of(new Message("", ""), Message.user("a\u0000b \uD83D\uDE42"),
                Message.assistant("x".repeat(100_000)));

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
}
