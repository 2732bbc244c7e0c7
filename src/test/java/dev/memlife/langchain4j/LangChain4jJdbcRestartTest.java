package dev.memlife.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.memory.ChatMemory;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.WriteBehindReport;
import dev.memlife.store.JdbcMemoryProvider;
import dev.memlife.store.StoredTurn;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Both directions over real JDBC stores on SQLite files, across a restart: every object is built
 * again on the same files, and reads back what the first run wrote.
 */
@Timeout(60)
class LangChain4jJdbcRestartTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    private static ChatMemory window(Object id, WriteBehindChatMemoryStore store) {
        return MessageWindowChatMemory.builder().id(id).maxMessages(6).chatMemoryStore(store).build();
    }

    @Test
    void aChatMemoryWrittenBehindIntoSqliteIsThereAfterARestartAndADeleteIsGone() throws Exception {
        Path file = dir.resolve("chat.db");
        List<ChatMessage> before;
        try (SqliteChatMemoryStore sqlite = new SqliteChatMemoryStore(file)) {
            WriteBehindChatMemoryStore store = WriteBehindChatMemoryStore.over(sqlite);
            ChatMemory alice = window("alice", store);
            for (int i = 0; i < 5; i++) {
                alice.add(UserMessage.from("question " + i));
                alice.add(AiMessage.from("answer " + i));
            }
            ChatMemory bob = window("bob", store);
            bob.add(UserMessage.from("forget me"));
            bob.clear();
            before = alice.messages();

            WriteBehindReport<Object> report = store.stop(WAIT);
            assertThat(report.complete()).as(report.toString()).isTrue();
            assertThat(sqlite.rows()).containsExactly("alice");
            assertThat(sqlite.updates()).as("coalesced: at most one write per add, usually fewer").isLessThanOrEqualTo(11);
            assertThat(sqlite.deletes()).isEqualTo(1);
        }

        try (SqliteChatMemoryStore sqlite = new SqliteChatMemoryStore(file)) {   // the restart
            WriteBehindChatMemoryStore store = WriteBehindChatMemoryStore.over(sqlite);
            ChatMemory alice = window("alice", store);
            ChatMemory bob = window("bob", store);

            assertThat(alice.messages()).hasSize(6).isEqualTo(before);
            assertThat(SlowChatMemoryStore.texts(alice.messages()).get(5)).isEqualTo("answer 4");
            assertThat(bob.messages()).isEmpty();
            assertThat(sqlite.rows()).as("a real delete: no row, no marker").containsExactly("alice");

            alice.add(UserMessage.from("after the restart"));
            store.close();
            assertThat(SlowChatMemoryStore.texts(sqlite.getMessages("alice"))).endsWith("after the restart");
        }
    }

    @Test
    void turnsAManagerDeliversAreInMemlifesStoreAndInTheChatMemoryAfterARestartAndAReplayAddsNothing()
            throws Exception {
        Path memlifeFile = dir.resolve("memlife.db");
        Path chatFile = dir.resolve("chat.db");
        List<String> writeIds;
        try (SqliteChatMemoryStore sqlite = new SqliteChatMemoryStore(chatFile)) {
            WriteBehindChatMemoryStore chat = WriteBehindChatMemoryStore.over(sqlite);
            MemoryManager memory = MemoryManager.builder().name("agent").build();
            memory.addProvider(JdbcMemoryProvider.sqlite(memlifeFile));
            memory.addProvider(ChatMemoryStoreProvider.create(chat));
            for (int i = 0; i < 5; i++) {
                assertThat(memory.syncAll("question " + i, "answer " + i, "session-1")).isTrue();
            }
            DrainReport drained = memory.stop();   // shuts the JDBC provider down; the chat store is ours
            WriteBehindReport<Object> written = chat.stop(WAIT);

            assertThat(drained.delivered()).as(drained.toString()).isEqualTo(5);
            assertThat(written.complete()).as(written.toString()).isTrue();
        }

        List<StoredTurn> turns;
        try (JdbcMemoryProvider jdbc = JdbcMemoryProvider.sqlite(memlifeFile)) {   // the restart
            turns = jdbc.turns("session-1");
        }
        writeIds = turns.stream().map(StoredTurn::writeId).collect(Collectors.toList());
        assertThat(turns).hasSize(5);
        try (SqliteChatMemoryStore sqlite = new SqliteChatMemoryStore(chatFile)) {
            WriteBehindChatMemoryStore chat = WriteBehindChatMemoryStore.over(sqlite);
            ChatMemory memory = MessageWindowChatMemory.builder().id("session-1").maxMessages(20)
                    .chatMemoryStore(chat).build();

            List<String> expected = new ArrayList<>();
            for (StoredTurn t : turns) {
                expected.add(t.userContent());
                expected.add(t.assistantContent());
            }
            assertThat(SlowChatMemoryStore.texts(memory.messages())).isEqualTo(expected);
            assertThat(memory.messages()).extracting(LangChain4jJdbcRestartTest::writeIdOf)
                    .isEqualTo(writeIds.stream().flatMap(id -> List.of(id, id).stream()).collect(Collectors.toList()));

            // A replay of the same turns (a spool's, after a crash) through a new provider adds nothing.
            ChatMemoryStoreProvider replay = ChatMemoryStoreProvider.create(chat);
            turns.forEach(t -> replay.syncTurn(t.toTurn()));
            assertThat(replay.skippedTurns()).isEqualTo(5);
            assertThat(replay.appendedTurns()).isZero();
            assertThat(chat.stop(WAIT).complete()).isTrue();
            assertThat(sqlite.getMessages("session-1")).hasSize(10);
        }
    }

    private static Object writeIdOf(ChatMessage m) {
        return m instanceof UserMessage ? ((UserMessage) m).attributes().get(ChatMemoryStoreProvider.WRITE_ID_ATTRIBUTE)
                : ((AiMessage) m).attributes().get(ChatMemoryStoreProvider.WRITE_ID_ATTRIBUTE);
    }
}
