package dev.memlife.readme;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.memory.ChatMemory;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.store.memory.chat.ChatMemoryStore;
import dev.langchain4j.store.memory.chat.InMemoryChatMemoryStore;
import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.WriteBehindReport;
import dev.memlife.langchain4j.ChatMemoryStoreProvider;
import dev.memlife.langchain4j.WriteBehindChatMemoryStore;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The LangChain4j guide's two examples (docs/langchain4j.md), as written there. */
@Timeout(60)
class LangChain4jReadmeExampleTest {

    @Test
    void underAChatMemoryTheWriteBehindStoreWritesBehindReadsBackAndDrains() {
        ChatMemoryStore myStore = new InMemoryChatMemoryStore();
        String conversationId = "user-7";

        WriteBehindChatMemoryStore store = WriteBehindChatMemoryStore.builder(myStore)   // any ChatMemoryStore
                .name("chat")                          // its writer thread: memlife-chat-writer-chat
                .closeTimeout(Duration.ofSeconds(5))   // close()'s budget
                .build();
        ChatMemory memory = MessageWindowChatMemory.builder()
                .id(conversationId).maxMessages(20).chatMemoryStore(store).build();

        memory.add(UserMessage.from("hi"));            // returns at once: written behind, coalesced
        memory.messages();                             // read-your-writes, before myStore has it
        boolean written = store.flush(Duration.ofSeconds(2));   // true once all of it is in myStore

        WriteBehindReport<Object> report = store.stop(Duration.ofSeconds(5));   // at shutdown: drain, report
        System.out.println(report);

        assertThat(written).isTrue();
        assertThat(myStore.getMessages(conversationId)).containsExactly(UserMessage.from("hi"));
        assertThat(report.complete()).isTrue();
    }

    @Test
    void overAChatMemoryStoreEveryTurnIsAppendedToItsSession() {
        ChatMemoryStore myStore = new InMemoryChatMemoryStore();
        String userText = "hi";
        String assistantText = "hello";
        String sessionId = "user-7";

        WriteBehindChatMemoryStore chatStore = WriteBehindChatMemoryStore.over(myStore);
        MemoryManager memory = MemoryManager.builder().name("agent-42").build();
        memory.addProvider(ChatMemoryStoreProvider.create(chatStore));   // memory id = session id
        memory.syncAll(userText, assistantText, sessionId);   // a UserMessage and an AiMessage, once
        DrainReport drained = memory.stop();            // the managers first,
        WriteBehindReport<Object> written = chatStore.stop(Duration.ofSeconds(5));   // then the store they write to

        assertThat(drained.delivered()).isEqualTo(1);
        assertThat(written.complete()).isTrue();
        assertThat(myStore.getMessages(sessionId)).hasSize(2);
    }
}
