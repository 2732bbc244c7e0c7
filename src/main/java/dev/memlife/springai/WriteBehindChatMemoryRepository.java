package dev.memlife.springai;

import static java.util.Objects.requireNonNull;

import dev.memlife.StoppedException;
import dev.memlife.WriteBehindBuilder;
import dev.memlife.WriteBehindDecorator;
import dev.memlife.WriteBehindFigures;
import dev.memlife.WriteBehindReport;
import dev.memlife.internal.Checks;
import dev.memlife.internal.WriteBehindEngine;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import org.springframework.ai.chat.memory.ChatMemoryRepository;
import org.springframework.ai.chat.messages.Message;

/**
 * A write-behind {@link ChatMemoryRepository} over any other: {@link #saveAll} and {@link
 * #deleteByConversationId} return at once, and one writer thread hands the latest state of each
 * conversation to the repository behind it.
 *
 * <p>Spring AI's {@code MessageWindowChatMemory} writes the whole conversation to its repository on
 * every message ({@code saveAll}), on the caller's thread. Over a slow repository (JDBC, Cassandra,
 * Neo4j) that is a database round trip per message on the request path, and nothing drains at
 * shutdown. Put this repository between them:
 *
 * <pre>{@code
 * WriteBehindChatMemoryRepository repository = WriteBehindChatMemoryRepository.over(jdbcRepository);
 * ChatMemory memory = MessageWindowChatMemory.builder().chatMemoryRepository(repository)
 *         .maxMessages(20).build();
 * memory.add(conversationId, new UserMessage("hi"));   // returns without waiting for jdbcRepository
 * ...
 * WriteBehindReport<String> report = repository.stop(Duration.ofSeconds(5)); // at shutdown: drains, reports
 * }</pre>
 *
 * <p>As a Spring bean, {@link #close()} is its destroy method (Spring infers it from {@link
 * AutoCloseable}), so the context's shutdown drains it within {@link Builder#closeTimeout}.
 *
 * <ul>
 *   <li><b>Coalesced.</b> At most one state per conversation waits: a new {@code saveAll} replaces
 *       the one not yet written, so ten messages of one conversation while the repository is busy
 *       cost one write, of the last state. The memory this repository holds is bounded by the
 *       conversations written to recently, never by the number of messages.
 *   <li><b>Read-your-writes.</b> {@link #findByConversationId} returns the state waiting to be
 *       written if there is one (an empty list if a delete waits), and reads the repository
 *       otherwise. {@link #findConversationIds} adds the conversations with a save waiting and
 *       leaves out those with a delete waiting.
 *   <li><b>Ordered per conversation.</b> The writer writes one conversation at a time, always its
 *       latest state, so the repository never sees an older state after a newer one. A delete is a
 *       real {@link ChatMemoryRepository#deleteByConversationId} on the repository: it replaces
 *       the states waiting before it, and reaches the repository after any save of that
 *       conversation already being written.
 *   <li><b>Failures are kept, counted and reported.</b> Whatever the repository throws is its
 *       failure of that write: it is logged (once per burst) and counted ({@link #figures()}), the
 *       writer goes on with the other conversations, and the state stays here, read by {@link
 *       #findByConversationId}, so the chat memory's next message builds on it. It is written again
 *       with that conversation's next save or delete, by {@link #flush}, and by {@link #stop};
 *       one the repository still refuses at shutdown is in the report's {@link
 *       WriteBehindReport#failedIds()}. Nothing is dropped silently.
 *   <li><b>Bounded at shutdown.</b> {@link #flush(Duration)} is a barrier for every save and delete
 *       handed over before it; {@link #stop(Duration)} (and {@link #close()}) refuses later
 *       ones, writes what waits within its budget and says, by conversation id, what was written
 *       and what was not. A repository that hangs does not hold it past its budget.
 * </ul>
 *
 * <p><b>Threads.</b> Thread-safe. The writer is a daemon thread named {@code
 * memlife-chat-writer-<name>}, started by the first save and ended after it has been idle for
 * {@link Builder#writerKeepAlive} (1 s by default), so an idle repository holds no thread. It
 * writes to the repository one call at a time. The reads go to the repository on the caller's
 * thread, possibly while the writer writes another conversation, so the repository behind must
 * allow that, as Spring AI's repositories do. A repository that hangs holds the writer, and the
 * saves of other conversations wait behind it. The repository behind is the application's: this
 * one never closes it.
 *
 * <p>The write-behind engine is the same as that of {@code
 * dev.memlife.langchain4j.WriteBehindChatMemoryStore}, LangChain4j's counterpart: the two share
 * their builder's settings ({@link WriteBehindBuilder}), their report ({@link WriteBehindReport},
 * by conversation id here) and their figures ({@link WriteBehindFigures}).
 */
public final class WriteBehindChatMemoryRepository
        extends WriteBehindDecorator<String> implements ChatMemoryRepository {

    private static final WriteBehindEngine.Words WORDS = new WriteBehindEngine.Words(WriteBehindChatMemoryRepository.class,
            "write-behind chat memory repository", "conversation id", "repository", "save", "memlife-chat-writer-");

    /** The write-behind itself, shared with memlife's LangChain4j store; this class adapts it. */
    private final WriteBehindEngine<String, Message> engine;
    private final ChatMemoryRepository repository;

    private WriteBehindChatMemoryRepository(WriteBehindEngine<String, Message> engine, ChatMemoryRepository repository) {
        super(engine);
        this.engine = engine;
        this.repository = repository;
    }

    /**
     * A write-behind repository over {@code repository}, with every default of {@link Builder}.
     *
     * @param repository the repository to write to; the application keeps owning it
     * @return the write-behind repository
     */
    public static WriteBehindChatMemoryRepository over(ChatMemoryRepository repository) {
        return builder(repository).build();
    }

    /**
     * A builder for a write-behind repository over {@code repository}.
     *
     * @param repository the repository to write to; the application keeps owning it
     * @return a builder with every default
     */
    public static Builder builder(ChatMemoryRepository repository) {
        return new Builder(requireNonNull(repository, "repository"));
    }

    /**
     * The ids of the repository behind's conversations, plus those with a save waiting to be
     * written, minus those with a delete waiting: the conversations {@link #findByConversationId}
     * would answer for as things stand. The waiting states are taken before the repository is
     * read, so a conversation written meanwhile is not missed.
     *
     * @return the conversation ids, the repository's first (in its order), then those only waiting
     *     here (in the order they first waited); a new list, which the caller may change
     */
    @Override
    public List<String> findConversationIds() {
        return engine.ids(repository::findConversationIds);
    }

    /**
     * The messages of {@code conversationId}: the state waiting to be written if there is one (an
     * empty list if a delete waits), else what the repository behind returns, read on the caller's
     * thread.
     *
     * @param conversationId the conversation's id
     * @return the messages: a copy of the waiting state, which the caller may change, or the
     *     repository's own list as it returns it (an empty list for null)
     * @throws NullPointerException if {@code conversationId} is null
     * @throws IllegalArgumentException if {@code conversationId} is blank
     */
    @Override
    public List<Message> findByConversationId(String conversationId) {
        return engine.read(Checks.notBlank(conversationId, "conversationId"));
    }

    /**
     * Hands {@code messages} over as the new state of {@code conversationId} and returns at once;
     * the writer writes it with the repository's {@link ChatMemoryRepository#saveAll saveAll}, or a
     * later state of the same conversation that replaces it. The list is copied.
     *
     * @param conversationId the conversation's id
     * @param messages the conversation's messages, oldest first: the whole conversation, as Spring
     *     AI's chat memories hand it over
     * @throws NullPointerException if {@code conversationId}, {@code messages} or one of the
     *     messages is null (naming which)
     * @throws IllegalArgumentException if {@code conversationId} is blank
     * @throws StoppedException after {@link #stop} began; nothing was taken
     * @throws RejectedExecutionException if no writer thread could be started; nothing was taken
     */
    @Override
    public void saveAll(String conversationId, List<Message> messages) {
        engine.save(Checks.notBlank(conversationId, "conversationId"), messages, "saveAll");
    }

    /**
     * Hands over the deletion of {@code conversationId} and returns at once: the writer calls the
     * repository's {@link ChatMemoryRepository#deleteByConversationId deleteByConversationId} after
     * any save of that conversation it is already writing, and the states of that conversation
     * still waiting are never written. Until then {@link #findByConversationId} returns an empty
     * list for it and {@link #findConversationIds} leaves it out.
     *
     * @param conversationId the conversation's id
     * @throws NullPointerException if {@code conversationId} is null
     * @throws IllegalArgumentException if {@code conversationId} is blank
     * @throws StoppedException after {@link #stop} began; nothing was taken
     * @throws RejectedExecutionException if no writer thread could be started; nothing was taken
     */
    @Override
    public void deleteByConversationId(String conversationId) {
        engine.delete(Checks.notBlank(conversationId, "conversationId"), "deleteByConversationId");
    }

    /**
     * Builds a {@link WriteBehindChatMemoryRepository}: the settings of {@link WriteBehindBuilder}
     * (name, close timeout, writer keep-alive) and {@link dev.memlife.OwnerBuilder} (thread factory,
     * ticker). Every setter checks its argument and names it when it refuses one.
     */
    public static final class Builder extends WriteBehindBuilder<Builder> {

        private final ChatMemoryRepository repository;

        private Builder(ChatMemoryRepository repository) {
            this.repository = repository;
        }

        /** {@return a new write-behind repository with these settings; it starts no thread until the first save} */
        public WriteBehindChatMemoryRepository build() {
            return new WriteBehindChatMemoryRepository(new WriteBehindEngine<>(this, WORDS, repository,
                    WriteBehindEngine.Sink.of(repository::findByConversationId, repository::saveAll,
                            repository::deleteByConversationId), SpoolCodec.INSTANCE), repository);
        }
    }
}
