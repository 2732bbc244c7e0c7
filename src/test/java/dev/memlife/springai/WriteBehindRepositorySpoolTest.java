package dev.memlife.springai;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.ai.chat.memory.ChatMemoryRepository;
import org.springframework.ai.chat.memory.InMemoryChatMemoryRepository;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.messages.UserMessage;

/**
 * The Spring AI repository's spool: a conversation the repository behind never got is read back
 * and written by the next repository on the same spool, each message with its type, text, tool
 * calls and tool responses.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class WriteBehindRepositorySpoolTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    /** A repository that refuses every save: what is handed over stays in the spool only. */
    private static final class Refusing implements ChatMemoryRepository {
        @Override
        public List<String> findConversationIds() {
            return List.of();
        }

        @Override
        public List<Message> findByConversationId(String conversationId) {
            return List.of();
        }

        @Override
        public void saveAll(String conversationId, List<Message> messages) {
            throw new IllegalStateException("test: the database is down");
        }

        @Override
        public void deleteByConversationId(String conversationId) {}
    }

    @Test
    void aConversationTheRepositoryNeverGotIsReplayedWithItsToolCallsAndResponses() {
        List<Message> conversation = List.of(new SystemMessage("be brief"), new UserMessage("weather?"),
                AssistantMessage.builder().content("").toolCalls(List.of(
                        new AssistantMessage.ToolCall("call-1", "function", "weather", "{\"city\":\"Oslo\"}"))).build(),
                ToolResponseMessage.builder().responses(List.of(
                        new ToolResponseMessage.ToolResponse("call-1", "weather", "{\"c\":3}"))).build(),
                new AssistantMessage("3 degrees"));
        WriteBehindChatMemoryRepository first = WriteBehindChatMemoryRepository.builder(new Refusing()).spool(dir).build();
        first.saveAll("c1", conversation);
        assertThat(first.stop(Duration.ofMillis(200)).complete()).as("the repository refused it").isFalse();

        ChatMemoryRepository behind = new InMemoryChatMemoryRepository();
        WriteBehindChatMemoryRepository next = WriteBehindChatMemoryRepository.builder(behind).spool(dir).build();
        assertThat(next.findConversationIds()).containsExactly("c1");
        assertThat(next.flush(WAIT)).isTrue();
        List<Message> stored = behind.findByConversationId("c1");
        assertThat(stored).extracting(Message::getMessageType).containsExactlyElementsOf(
                conversation.stream().map(Message::getMessageType).toList());
        assertThat(stored).extracting(Message::getText).containsExactlyElementsOf(
                conversation.stream().map(Message::getText).toList());
        assertThat(((AssistantMessage) stored.get(2)).getToolCalls()).containsExactly(
                new AssistantMessage.ToolCall("call-1", "function", "weather", "{\"city\":\"Oslo\"}"));
        assertThat(((ToolResponseMessage) stored.get(3)).getResponses()).containsExactly(
                new ToolResponseMessage.ToolResponse("call-1", "weather", "{\"c\":3}"));
        assertThat(next.stop(WAIT).complete()).isTrue();
        assertThat(Map.of("pending", next.figures().pending())).containsEntry("pending", 0);
    }
}
