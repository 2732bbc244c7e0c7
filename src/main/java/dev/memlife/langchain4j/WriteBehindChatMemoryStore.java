package dev.memlife.langchain4j;

import static java.util.Objects.requireNonNull;

import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.store.memory.chat.ChatMemoryStore;
import dev.memlife.StoppedException;
import dev.memlife.WriteBehindBuilder;
import dev.memlife.WriteBehindDecorator;
import dev.memlife.WriteBehindFigures;
import dev.memlife.WriteBehindReport;
import dev.memlife.internal.WriteBehindEngine;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;

/**
 * A write-behind {@link ChatMemoryStore} over any other: {@link #updateMessages} and {@link
 * #deleteMessages} return at once, and one writer thread hands the latest state of each memory id
 * to the store behind it.
 *
 * <p>LangChain4j's chat memories ({@code MessageWindowChatMemory}, {@code TokenWindowChatMemory})
 * write the whole conversation to their store on every message, on the caller's thread. Over a
 * slow store that is a database round trip per message on the request path, and nothing drains at
 * shutdown. Put this store between them:
 *
 * <pre>{@code
 * WriteBehindChatMemoryStore store = WriteBehindChatMemoryStore.over(myStore);
 * ChatMemory memory = MessageWindowChatMemory.builder().id(userId).maxMessages(20)
 *         .chatMemoryStore(store).build();
 * memory.add(UserMessage.from("hi"));          // returns without waiting for myStore
 * ...
 * WriteBehindReport<Object> report = store.stop(Duration.ofSeconds(5));   // at shutdown: drains, reports
 * }</pre>
 *
 * <ul>
 *   <li><b>Coalesced.</b> At most one state per memory id waits: a new update replaces the one not
 *       yet written, so ten updates of one conversation while the store is busy cost one write, of
 *       the last. The memory this store holds is bounded by the conversations written to recently,
 *       never by the number of messages.
 *   <li><b>Read-your-writes.</b> {@link #getMessages} returns the state waiting to be written if
 *       there is one (an empty list if a delete waits), and reads the store otherwise.
 *   <li><b>Ordered per memory id.</b> The writer writes one memory id at a time, always its latest
 *       state, so the store never sees an older state after a newer one. A delete is a real {@link
 *       ChatMemoryStore#deleteMessages} on the store, not a marker: it replaces the states waiting
 *       before it, and reaches the store after any save of that id already being written.
 *   <li><b>Failures are kept, counted and reported.</b> Whatever the store throws is its failure of
 *       that write: it is logged (once per burst) and counted ({@link #figures()}), the writer goes
 *       on with the other memory ids, and the state stays here, read by {@link #getMessages}, so a
 *       chat memory's next update builds on it. It is written again with that id's next update or
 *       delete, by {@link #flush}, and by {@link #stop}; one the store still refuses at
 *       shutdown is in the report's {@link WriteBehindReport#failedIds()}. Nothing is dropped
 *       silently.
 *   <li><b>Bounded at shutdown.</b> {@link #flush(Duration)} is a barrier for every update handed
 *       over before it; {@link #stop(Duration)} (and {@link #close()}) refuses later updates,
 *       writes what waits within its budget and says, by memory id, what was written and what was
 *       not. A store that hangs does not hold it past its budget.
 * </ul>
 *
 * <p><b>Threads.</b> Thread-safe. The writer is a daemon thread named {@code
 * memlife-chat-writer-<name>}, started by the first update and ended after it has been idle for
 * {@link Builder#writerKeepAlive} (1 s by default), so an idle store holds no thread. It writes to
 * the store one call at a time. {@link #getMessages} of a memory id with nothing waiting reads the
 * store on the caller's thread, possibly while the writer writes another memory id, so the store
 * behind must allow that, as LangChain4j's stores do. A store that hangs holds the writer, and the
 * updates of other memory ids wait behind it. The store behind is the application's: this one
 * never closes it.
 *
 * <p>The write-behind engine is the same as that of {@code
 * dev.memlife.springai.WriteBehindChatMemoryRepository}, Spring AI's counterpart: the two share
 * their builder's settings ({@link WriteBehindBuilder}), their report ({@link WriteBehindReport},
 * by memory id here) and their figures ({@link WriteBehindFigures}).
 */
public final class WriteBehindChatMemoryStore
        extends WriteBehindDecorator<Object> implements ChatMemoryStore {

    private static final WriteBehindEngine.Words WORDS = new WriteBehindEngine.Words(WriteBehindChatMemoryStore.class,
            "write-behind chat memory store", "memory id", "store", "update", "memlife-chat-writer-");

    /** The write-behind itself, shared with memlife's Spring AI repository; this class adapts it. */
    private final WriteBehindEngine<Object, ChatMessage> engine;

    private WriteBehindChatMemoryStore(WriteBehindEngine<Object, ChatMessage> engine) {
        super(engine);
        this.engine = engine;
    }

    /**
     * A write-behind store over {@code store}, with every default of {@link Builder}.
     *
     * @param store the store to write to; the application keeps owning it
     * @return the write-behind store
     */
    public static WriteBehindChatMemoryStore over(ChatMemoryStore store) {
        return builder(store).build();
    }

    /**
     * A builder for a write-behind store over {@code store}.
     *
     * @param store the store to write to; the application keeps owning it
     * @return a builder with every default
     */
    public static Builder builder(ChatMemoryStore store) {
        return new Builder(requireNonNull(store, "store"));
    }

    /**
     * The messages of {@code memoryId}: the state waiting to be written if there is one (an empty
     * list if a delete waits), else what the store behind returns, read on the caller's thread.
     *
     * @param memoryId the conversation's id
     * @return the messages: a copy of the waiting state, which the caller may change, or the
     *     store's own list as it returns it (an empty list for null)
     * @throws NullPointerException if {@code memoryId} is null
     */
    @Override
    public List<ChatMessage> getMessages(Object memoryId) {
        return engine.read(requireNonNull(memoryId, "memoryId"));
    }

    /**
     * Hands {@code messages} over as the new state of {@code memoryId} and returns at once; the
     * writer writes it, or a later state of the same id that replaces it. The list is copied.
     *
     * @param memoryId the conversation's id
     * @param messages the conversation's messages, oldest first
     * @throws NullPointerException if {@code memoryId}, {@code messages} or one of the messages is
     *     null (naming which)
     * @throws StoppedException after {@link #stop} began; nothing was taken
     * @throws RejectedExecutionException if no writer thread could be started; nothing was taken
     */
    @Override
    public void updateMessages(Object memoryId, List<ChatMessage> messages) {
        engine.save(requireNonNull(memoryId, "memoryId"), messages, "updateMessages");
    }

    /**
     * Hands over the deletion of {@code memoryId} and returns at once: the writer calls the store's
     * {@link ChatMemoryStore#deleteMessages deleteMessages} after any save of that id it is already
     * writing, and the states of that id still waiting are never written. Until then {@link
     * #getMessages} returns an empty list for it.
     *
     * @param memoryId the conversation's id
     * @throws NullPointerException if {@code memoryId} is null
     * @throws StoppedException after {@link #stop} began; nothing was taken
     * @throws RejectedExecutionException if no writer thread could be started; nothing was taken
     */
    @Override
    public void deleteMessages(Object memoryId) {
        engine.delete(requireNonNull(memoryId, "memoryId"), "deleteMessages");
    }

    /**
     * Builds a {@link WriteBehindChatMemoryStore}: the settings of {@link WriteBehindBuilder} (name,
     * close timeout, writer keep-alive) and {@link dev.memlife.OwnerBuilder} (thread factory,
     * ticker). Every setter checks its argument and names it when it refuses one.
     */
    public static final class Builder extends WriteBehindBuilder<Builder> {

        private final ChatMemoryStore store;

        private Builder(ChatMemoryStore store) {
            this.store = store;
        }

        /** {@return a new write-behind store with these settings; it starts no thread until the first update} */
        public WriteBehindChatMemoryStore build() {
            return new WriteBehindChatMemoryStore(new WriteBehindEngine<>(this, WORDS, store,
                    WriteBehindEngine.Sink.of(store::getMessages, store::updateMessages, store::deleteMessages),
                    SpoolCodec.INSTANCE));
        }
    }
}
