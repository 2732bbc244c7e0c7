package dev.memlife.springai;

import static org.assertj.core.api.Assertions.assertThat;

import dev.memlife.springai.MiniLmEmbeddingModel.Call;
import dev.memlife.springai.MiniLmEmbeddingModel.Kind;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.client.advisor.vectorstore.VectorStoreChatMemoryAdvisor;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.document.Document;
import org.springframework.ai.vectorstore.SearchRequest;
import org.springframework.ai.vectorstore.SimpleVectorStore;
import org.springframework.ai.vectorstore.VectorStore;

/**
 * A real Spring AI {@link ChatClient} with {@link VectorStoreChatMemoryAdvisor}, over a real
 * {@link SimpleVectorStore} and a real embedding model (all-MiniLM-L6-v2 on ONNX, {@link
 * MiniLmEmbeddingModel}, which records the thread of every call), with a stub chat model that
 * answers at once and keeps the prompts it was given.
 */
@Timeout(120)
class VectorStoreChatMemoryAdvisorTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final MiniLmEmbeddingModel model = new MiniLmEmbeddingModel();
    private final SimpleVectorStore simple = SimpleVectorStore.builder(model).build();
    private final WriteBehindVectorStore memory = WriteBehindVectorStore.builder(simple).name("long-term").build();
    private final StubChatModel chatModel = new StubChatModel();

    @AfterEach
    void close() {
        memory.close();
    }

    /** Answers every prompt at once, and keeps the system text each prompt carried. */
    private static final class StubChatModel implements ChatModel {
        final List<String> systemTexts = new CopyOnWriteArrayList<>();

        @Override
        public ChatResponse call(Prompt prompt) {
            systemTexts.add(prompt.getSystemMessage() == null ? "" : prompt.getSystemMessage().getText());
            return new ChatResponse(List.of(new Generation(new AssistantMessage("noted: " + prompt.getUserMessage().getText()))));
        }
    }

    private static ChatClient chat(ChatModel model, VectorStore store, int topK) {
        return ChatClient.builder(model)
                .defaultAdvisors(VectorStoreChatMemoryAdvisor.builder(store).defaultTopK(topK).build()).build();
    }

    private static String ask(ChatClient chat, String conversation, String text) {
        return chat.prompt().user(text).advisors(a -> a.param(ChatMemory.CONVERSATION_ID, conversation)).call().content();
    }

    @Test
    void requestsEmbedNoDocumentOnTheirThreadAndEveryTurnIsStoredOnceFlushed() {
        ChatClient chat = chat(chatModel, memory, 4);
        String requestThread = Thread.currentThread().getName();

        for (int i = 0; i < 10; i++) {
            assertThat(ask(chat, "c1", "message " + i)).isEqualTo("noted: message " + i);
        }
        assertThat(memory.flush(WAIT)).isTrue();

        List<Call> onRequests = model.calls().stream().filter(c -> c.thread().equals(requestThread)).toList();
        assertThat(onRequests).as("on the request thread: only the advisor's search, one query per request")
                .hasSize(10).allSatisfy(c -> assertThat(c).isEqualTo(new Call(requestThread, 1, Kind.QUERY)));
        assertThat(model.calls(Kind.DOCUMENTS)).as("every document embedded on the writer")
                .isNotEmpty().allSatisfy(c -> assertThat(c.thread()).isEqualTo("memlife-vector-writer-long-term"));
        assertThat(model.calls(Kind.DOCUMENTS).stream().mapToInt(Call::texts).sum()).isEqualTo(20);

        List<Document> stored = simple.similaritySearch(SearchRequest.builder().query("message").topK(100)
                .filterExpression("conversationId == 'c1'").build());
        assertThat(stored).extracting(Document::getText).containsExactlyInAnyOrderElementsOf(
                java.util.stream.IntStream.range(0, 10).boxed()
                        .flatMap(i -> java.util.stream.Stream.of("message " + i, "noted: message " + i)).toList());
        assertThat(memory.figures().writtenSaves()).isEqualTo(20);
    }

    @Test
    void withoutTheWriteBehindStoreEachRequestEmbedsItsTwoDocumentsOnItsOwnThread() {
        ChatClient chat = chat(chatModel, simple, 4);
        String requestThread = Thread.currentThread().getName();

        for (int i = 0; i < 3; i++) {
            ask(chat, "c1", "message " + i);
        }

        assertThat(model.calls(Kind.DOCUMENTS)).as("the plain store embeds the user's and the assistant's message "
                + "inside add, on the request thread").hasSize(6)
                .allSatisfy(c -> assertThat(c.thread()).isEqualTo(requestThread));
    }

    @Test
    void aDifferentlyWordedQuestionRecallsAnEarlierConversationByMeaning() {
        ChatClient chat = chat(chatModel, memory, 2);
        ask(chat, "u1", "My sister Maria moved to Lisbon last year, she studies dolphins there.");
        ask(chat, "u1", "I cooked a carbonara with guanciale and pecorino tonight.");
        ask(chat, "u1", "The football match ended two to one after extra time.");
        assertThat(memory.flush(WAIT)).isTrue();

        ask(chat, "u1", "In which city does my sibling live?");

        String recalled = chatModel.systemTexts.get(chatModel.systemTexts.size() - 1);
        assertThat(recalled).contains("Lisbon").doesNotContain("football").doesNotContain("carbonara");
    }
}
