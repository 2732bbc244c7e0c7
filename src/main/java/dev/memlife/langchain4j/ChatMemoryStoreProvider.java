package dev.memlife.langchain4j;

import static java.util.Objects.requireNonNull;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.store.memory.chat.ChatMemoryStore;
import dev.memlife.MemoryManager;
import dev.memlife.MemoryProvider;
import dev.memlife.Turn;
import dev.memlife.internal.Checks;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * A {@link MemoryProvider} that appends every turn a {@link MemoryManager} delivers to a LangChain4j
 * {@link ChatMemoryStore}: a {@link UserMessage} with the user's text and an {@link AiMessage} with
 * the assistant's, at the end of the messages of the turn's memory id (by default its session id).
 * A chat memory over the same store ({@code MessageWindowChatMemory}) then reads memlife's turns as
 * its conversation.
 *
 * <pre>{@code
 * WriteBehindChatMemoryStore chatStore = WriteBehindChatMemoryStore.over(myStore);
 * memory.addProvider(ChatMemoryStoreProvider.create(chatStore));
 * memory.syncAll(userText, assistantText, sessionId);   // appended to chatStore's list for sessionId
 * }</pre>
 *
 * <p><b>Idempotent by write id.</b> Both messages of a turn carry its {@link Turn#writeId()} in
 * their attributes, under {@value #WRITE_ID_ATTRIBUTE}, and a turn whose write id is already among
 * the memory id's messages is skipped: a turn replayed from a spool, or delivered again after a
 * failure, is not appended twice, also after a restart. LangChain4j's JSON serializer ({@code
 * ChatMessageSerializer}) keeps attributes, so this holds for every store that stores messages
 * with it. It cannot hold for a store that drops attributes, nor for a turn whose messages a chat
 * memory's window has already evicted from the list.
 *
 * <p><b>Writes.</b> Each turn costs one {@code getMessages} and one {@code updateMessages} of its
 * memory id, on the manager's writer thread. Over a slow store, put a {@link
 * WriteBehindChatMemoryStore} in front, as above: both calls then return at once. The provider
 * takes turns one at a time (it does not override {@link #syncBatch}), so a store that throws
 * fails exactly that turn for this provider, and the manager counts and reports it by write id.
 * Nothing trims the list: a chat memory over the store trims it when it writes.
 *
 * <p><b>Threads.</b> Thread-safe: the manager calls the write hooks on its writer thread, and a
 * provider several managers use ({@link MemoryManager#useProvider}) appends to one memory id for
 * one of them at a time, so no append is lost between one's read and its write. A chat memory
 * writing the same memory id at the same time is not excluded: let memlife write the turns and the
 * chat memory read them, or the other way round. {@link #shutdown()} leaves the store alone: it is
 * the application's, and a {@link WriteBehindChatMemoryStore} is shut down by the application after
 * the managers that write into it.
 */
public final class ChatMemoryStoreProvider implements MemoryProvider {

    /** The attribute of both messages of a turn that holds its write id. */
    public static final String WRITE_ID_ATTRIBUTE = "memlife.writeId";

    /** Appends to one memory id are serialized on one of these, picked by the id's hash. */
    private static final int STRIPES = 64;

    private final String name;
    private final ChatMemoryStore store;
    private final Function<String, ?> memoryIds;
    private final Object[] stripes = new Object[STRIPES];
    private final AtomicLong appended = new AtomicLong();
    private final AtomicLong skipped = new AtomicLong();

    private ChatMemoryStoreProvider(Builder b) {
        this.name = b.name;
        this.store = b.store;
        this.memoryIds = b.memoryIds;
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new Object();
        }
    }

    /**
     * A provider named {@value Builder#DEFAULT_NAME} that appends each turn to the messages of its
     * session id in {@code store}.
     *
     * @param store the chat memory store; the application keeps owning it
     * @return the provider
     */
    public static ChatMemoryStoreProvider create(ChatMemoryStore store) {
        return builder(store).build();
    }

    /**
     * A builder for a provider over {@code store}.
     *
     * @param store the chat memory store; the application keeps owning it
     * @return a builder with every default
     */
    public static Builder builder(ChatMemoryStore store) {
        return new Builder(requireNonNull(store, "store"));
    }

    @Override
    public String name() {
        return name;
    }

    /**
     * Appends {@code turn} to its memory id's messages, unless its write id is already there.
     *
     * @throws NullPointerException if {@code turn} is null, or the memory id function returned null
     */
    @Override
    public void syncTurn(Turn turn) {
        requireNonNull(turn, "turn");
        append(memoryIdOf(turn.sessionId()), turn);
    }

    private Object memoryIdOf(String sessionId) {
        Object memoryId = memoryIds.apply(sessionId);
        if (memoryId == null) {
            throw new NullPointerException("the memory id function returned null for session '" + sessionId + "'");
        }
        return memoryId;
    }

    private void append(Object memoryId, Turn turn) {
        synchronized (stripes[Math.floorMod(memoryId.hashCode(), STRIPES)]) {
            List<ChatMessage> stored = store.getMessages(memoryId);
            List<ChatMessage> messages = stored == null ? new ArrayList<>() : new ArrayList<>(stored);
            if (containsWriteId(messages, turn.writeId())) {
                skipped.incrementAndGet();
                return;
            }
            Map<String, Object> attributes = Map.of(WRITE_ID_ATTRIBUTE, turn.writeId());
            messages.add(UserMessage.builder().addContent(TextContent.from(turn.userContent()))
                    .attributes(attributes).build());
            messages.add(AiMessage.builder().text(turn.assistantContent()).attributes(attributes).build());
            store.updateMessages(memoryId, messages);
            appended.incrementAndGet();
        }
    }

    /** Whether one of {@code messages} carries {@code writeId} (newest first: a replay is usually recent). */
    private static boolean containsWriteId(List<ChatMessage> messages, String writeId) {
        for (int i = messages.size() - 1; i >= 0; i--) {
            ChatMessage m = messages.get(i);
            Map<String, Object> attributes = m instanceof UserMessage ? ((UserMessage) m).attributes()
                    : m instanceof AiMessage ? ((AiMessage) m).attributes() : Map.of();
            if (writeId.equals(attributes.get(WRITE_ID_ATTRIBUTE))) {
                return true;
            }
        }
        return false;
    }

    /** {@return turns appended to the store so far} */
    public long appendedTurns() {
        return appended.get();
    }

    /** {@return turns skipped so far because their write id was already in the store} */
    public long skippedTurns() {
        return skipped.get();
    }

    @Override
    public String toString() {
        return "ChatMemoryStoreProvider[" + name + " into " + store + "]";
    }

    /** Builds a {@link ChatMemoryStoreProvider}. */
    public static final class Builder {

        /** Default provider name: {@value}. */
        public static final String DEFAULT_NAME = "langchain4j-chat-memory";

        private final ChatMemoryStore store;
        private String name = DEFAULT_NAME;
        private Function<String, ?> memoryIds = sessionId -> sessionId;

        private Builder(ChatMemoryStore store) {
            this.store = store;
        }

        /**
         * The provider's name, unique within a manager; default {@value #DEFAULT_NAME}.
         *
         * @param name the name; not blank
         * @return this builder
         */
        public Builder name(String name) {
            this.name = Checks.notBlank(name, "name");
            return this;
        }

        /**
         * Which memory id a turn goes to, from its session id; by default the session id itself.
         * For a chat memory whose ids are not strings ({@code MessageWindowChatMemory.builder().id(42L)}),
         * for example {@code sessionId -> Long.valueOf(sessionId)}.
         *
         * @param memoryIds the function from session id to memory id; must not return null
         * @return this builder
         */
        public Builder memoryId(Function<String, ?> memoryIds) {
            this.memoryIds = requireNonNull(memoryIds, "memoryIds");
            return this;
        }

        /** {@return a new provider with these settings} */
        public ChatMemoryStoreProvider build() {
            return new ChatMemoryStoreProvider(this);
        }
    }
}
