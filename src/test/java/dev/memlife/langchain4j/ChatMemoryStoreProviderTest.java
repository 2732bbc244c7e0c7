package dev.memlife.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.memory.ChatMemory;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.store.memory.chat.InMemoryChatMemoryStore;
import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.Turn;
import dev.memlife.WriteBehindReport;
import dev.memlife.WriteStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** memlife's turns into a LangChain4j chat memory store, read back by a real {@link MessageWindowChatMemory}. */
@Timeout(60)
class ChatMemoryStoreProviderTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final InMemoryChatMemoryStore store = new InMemoryChatMemoryStore();

    private static Turn turn(String writeId, String session, String user, String assistant) {
        return Turn.of(writeId, session, user, assistant, List.of(), Instant.EPOCH);
    }

    @Test
    void everyDeliveredTurnIsAUserAndAnAiMessageOfItsSessionThatAChatMemoryReads() {
        MemoryManager memory = MemoryManager.builder().name("agent").build();
        memory.addProvider(ChatMemoryStoreProvider.create(store));
        memory.syncAll("hi", "hello", "s1");
        memory.syncAll("what is 2+2?", "4", "s1");
        memory.syncAll("other session", "", "s2");
        DrainReport report = memory.stop();

        assertThat(report.delivered()).as(report.toString()).isEqualTo(3);
        ChatMemory s1 = MessageWindowChatMemory.builder().id("s1").maxMessages(10).chatMemoryStore(store).build();
        assertThat(s1.messages()).extracting(ChatMessage::type).extracting(Enum::name)
                .containsExactly("USER", "AI", "USER", "AI");
        assertThat(SlowChatMemoryStore.texts(s1.messages())).containsExactly("hi", "hello", "what is 2+2?", "4");
        assertThat(SlowChatMemoryStore.texts(store.getMessages("s2"))).containsExactly("other session", "");
        UserMessage first = (UserMessage) s1.messages().get(0);
        AiMessage reply = (AiMessage) s1.messages().get(1);
        assertThat(first.attributes().get(ChatMemoryStoreProvider.WRITE_ID_ATTRIBUTE))
                .isEqualTo(reply.attributes().get(ChatMemoryStoreProvider.WRITE_ID_ATTRIBUTE))
                .isNotNull();
    }

    @Test
    void aTurnDeliveredAgainIsNotAppendedTwice() {
        ChatMemoryStoreProvider provider = ChatMemoryStoreProvider.create(store);
        provider.syncTurn(turn("w-1", "s1", "hi", "hello"));
        provider.syncTurn(turn("w-2", "s1", "again", "yes"));
        provider.syncTurn(turn("w-1", "s1", "hi", "hello"));                            // replayed
        ChatMemoryStoreProvider.create(store).syncTurn(turn("w-2", "s1", "again", "yes")); // by another instance

        assertThat(SlowChatMemoryStore.texts(store.getMessages("s1"))).containsExactly("hi", "hello", "again", "yes");
        assertThat(provider.appendedTurns()).isEqualTo(2);
        assertThat(provider.skippedTurns()).isEqualTo(1);
    }

    @Test
    void theMemoryIdFunctionMapsSessionsToAChatMemorysIds() {
        ChatMemoryStoreProvider provider = ChatMemoryStoreProvider.builder(store).name("numbers")
                .memoryId(Long::valueOf).build();
        provider.syncTurn(turn("w-1", "42", "hi", "hello"));

        ChatMemory memory = MessageWindowChatMemory.builder().id(42L).maxMessages(10).chatMemoryStore(store).build();
        assertThat(SlowChatMemoryStore.texts(memory.messages())).containsExactly("hi", "hello");
        assertThat(provider.name()).isEqualTo("numbers");
    }

    @Test
    void aStoreThatThrowsFailsThatTurnOnlyAndTheManagerReportsItByWriteId() {
        SlowChatMemoryStore failing = new SlowChatMemoryStore();
        failing.failFor(id -> id.equals("down"));
        MemoryManager memory = MemoryManager.builder().name("agent").build();
        ChatMemoryStoreProvider provider = ChatMemoryStoreProvider.create(failing);
        memory.addProvider(provider);
        memory.syncAll("a", "1", "up");
        memory.syncAll("b", "2", "down");
        memory.syncAll("c", "3", "up");
        DrainReport report = memory.stop();

        assertThat(report.delivered()).as(report.toString()).isEqualTo(2);
        assertThat(report.failed()).isEqualTo(1);
        assertThat(report.failuresByProvider()).containsEntry(ChatMemoryStoreProvider.Builder.DEFAULT_NAME, 1L);
        assertThat(report.statusOf(report.failedWriteIds().get(0))).isEqualTo(WriteStatus.FAILED);
        assertThat(failing.stored("up")).containsExactly("a", "1", "c", "3");
    }

    @Test
    void twoManagersSharingTheProviderLoseNoAppendToOneMemoryId() throws Exception {
        ChatMemoryStoreProvider shared = ChatMemoryStoreProvider.create(store);
        List<MemoryManager> managers = new ArrayList<>();
        List<CompletableFuture<Void>> writers = new ArrayList<>();
        for (int m = 0; m < 2; m++) {
            MemoryManager manager = MemoryManager.builder().name("agent-" + m).build();
            manager.useProvider(shared);
            managers.add(manager);
            int n = m;
            writers.add(CompletableFuture.runAsync(() -> {
                for (int i = 0; i < 200; i++) {
                    manager.syncAll("u" + n + "-" + i, "a" + n + "-" + i, "shared");
                }
            }));
        }
        for (CompletableFuture<Void> w : writers) {
            w.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
        for (MemoryManager manager : managers) {
            assertThat(manager.stop().delivered()).isEqualTo(200);
        }

        assertThat(store.getMessages("shared")).hasSize(800);
        assertThat(shared.appendedTurns()).isEqualTo(400);
    }

    @Test
    void overAWriteBehindStoreTheManagersWriterNeverWaitsForASlowStore() throws Exception {
        SlowChatMemoryStore slow = new SlowChatMemoryStore();
        WriteBehindChatMemoryStore chat = WriteBehindChatMemoryStore.over(slow);
        try {
            MemoryManager memory = MemoryManager.builder().name("agent").build();
            memory.addProvider(ChatMemoryStoreProvider.create(chat));
            slow.hold();
            memory.syncAll("q0", "a0", "s1");
            assertThat(slow.awaitEntered(WAIT)).isTrue();
            for (int i = 1; i < 10; i++) {
                memory.syncAll("q" + i, "a" + i, "s1");
            }
            DrainReport report = memory.stop(WAIT);   // the store is still held
            assertThat(report.delivered()).as(report.toString()).isEqualTo(10);
            assertThat(chat.getMessages("s1")).as("read-your-writes").hasSize(20);

            slow.open();
            WriteBehindReport<Object> written = chat.stop(WAIT);
            assertThat(written.complete()).as(written.toString()).isTrue();
            assertThat(slow.updates()).as("the held write and one for the nine turns behind it").isEqualTo(2);
            assertThat(slow.stored("s1")).hasSize(20).endsWith("q9", "a9");
        } finally {
            slow.open();
            chat.close();
        }
    }

    @Test
    void badInputIsRefusedNamingTheParameter() {
        ChatMemoryStoreProvider provider = ChatMemoryStoreProvider.builder(store).memoryId(s -> null).build();

        assertThatThrownBy(() -> ChatMemoryStoreProvider.create(null)).hasMessage("store");
        assertThatThrownBy(() -> ChatMemoryStoreProvider.builder(store).name("")).hasMessage("name must not be blank");
        assertThatThrownBy(() -> ChatMemoryStoreProvider.builder(store).memoryId(null)).hasMessage("memoryIds");
        assertThatThrownBy(() -> provider.syncTurn(null)).hasMessage("turn");
        assertThatThrownBy(() -> provider.syncTurn(turn("w", "s9", "u", "a")))
                .hasMessage("the memory id function returned null for session 's9'");
    }
}
