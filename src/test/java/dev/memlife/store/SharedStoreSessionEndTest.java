package dev.memlife.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.memlife.MemoryManager;
import dev.memlife.agent.AgentMemory;
import dev.memlife.Message;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Found while writing {@code session.HttpServiceSigtermProcessTest} (issue 12): a {@link
 * JdbcMemoryProvider} shared by several managers ({@code useProvider}, the README's normal wiring)
 * recorded each session end under the session last initialized or written <em>by any of them</em>.
 * Each manager now tells the store which session ended ({@code onSessionEnd(sessionId, messages)}):
 * the one it was initialized with, else the session of its last write.
 */
@Timeout(30)
class SharedStoreSessionEndTest {

    @TempDir
    Path dir;

    @Test
    void eachAgentOfASharedStoreRecordsItsOwnSessionEnd() {
        try (JdbcMemoryProvider store = JdbcMemoryProvider.sqlite(dir.resolve("shared.db"))) {
            AgentMemory a = agent(store, "chat-a");
            AgentMemory b = agent(store, "chat-b"); // initialized and written last

            a.close(); // chat-a ends: flush, extract (the store records the session end), shut down

            assertThat(store.sessionEnds()).extracting(StoredSessionEnd::sessionId).containsExactly("chat-a");
            b.close();
        }
    }

    @Test
    void withoutInitializeEachAgentRecordsTheSessionOfItsOwnLastWrite() {
        try (JdbcMemoryProvider store = JdbcMemoryProvider.sqlite(dir.resolve("shared.db"))) {
            AgentMemory a = agent(store, "chat-a", false);
            AgentMemory b = agent(store, "chat-b", false); // written last

            a.close();
            b.close();

            assertThat(store.sessionEnds()).extracting(StoredSessionEnd::sessionId)
                    .containsExactly("chat-a", "chat-b");
        }
    }

    private static AgentMemory agent(JdbcMemoryProvider store, String sid) {
        return agent(store, sid, true);
    }

    private static AgentMemory agent(JdbcMemoryProvider store, String sid, boolean initialize) {
        MemoryManager memory = MemoryManager.builder().name(sid).build();
        memory.useProvider(store);
        if (initialize) {
            memory.initializeAll(sid);
        }
        AgentMemory agent = AgentMemory.create(memory);
        agent.append(Message.user("hello from " + sid));
        memory.syncAll("hello from " + sid, "hi", sid);
        assertThat(memory.flushPending(Duration.ofSeconds(10))).isTrue();
        return agent;
    }
}
