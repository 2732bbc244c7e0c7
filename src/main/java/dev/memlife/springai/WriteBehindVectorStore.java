package dev.memlife.springai;

import static java.util.Objects.requireNonNull;

import dev.memlife.BatchingWriteBehindBuilder;
import dev.memlife.StoppedException;
import dev.memlife.WriteBehindDecorator;
import dev.memlife.WriteBehindFigures;
import dev.memlife.WriteBehindReport;
import dev.memlife.internal.Attempts;
import dev.memlife.internal.WriteBehindEngine;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import org.springframework.ai.document.Document;
import org.springframework.ai.vectorstore.SearchRequest;
import org.springframework.ai.vectorstore.VectorStore;
import org.springframework.ai.vectorstore.filter.Filter;

/**
 * A write-behind {@link VectorStore} over any other: {@link #add} and {@link #delete(List)} return
 * at once, and one writer thread hands the documents to the store behind it in batches, so their
 * embedding runs off the caller's thread, many texts per call to the embedding model.
 *
 * <p>Every Spring AI vector store embeds inside {@code add}, on the caller's thread, and {@code
 * VectorStoreChatMemoryAdvisor} adds twice per request (the user's message before the call, the
 * assistant's after it): two embedding calls on every request's path, each milliseconds on a local
 * model and 100 ms or more on a remote one. Put this store between them:
 *
 * <pre>{@code
 * WriteBehindVectorStore memory = WriteBehindVectorStore.builder(vectorStore).name("long-term").build();
 * ChatClient chat = ChatClient.builder(chatModel)
 *         .defaultAdvisors(VectorStoreChatMemoryAdvisor.builder(memory).build())
 *         .build();
 * // each request's two adds return at once; the embedding runs on the writer
 * ...
 * WriteBehindReport<String> report = memory.stop(Duration.ofSeconds(10)); // at shutdown: drains, reports
 * }</pre>
 *
 * <ul>
 *   <li><b>Every document kept, in order.</b> Documents are kept by id: each waits until the
 *       writer has handed it to the store, and the writer takes them in the order they were added.
 *       A document added again under an id still waiting replaces the one waiting (the store would
 *       have overwritten it), and a delete of a waiting id replaces its add.
 *   <li><b>Batched.</b> The writer hands the store as many documents as wait, up to {@link
 *       BatchingWriteBehindBuilder#batchSize batchSize} (64 by default), in one {@code add}: the
 *       store embeds them in one call to its model where the model batches.
 *   <li><b>Recall lags the writes.</b> {@link #similaritySearch} goes to the store: a document is
 *       found once the writer has written it, typically one batch's embedding after it was added
 *       (under load, the batches queued before it too; {@link #figures()}'s {@link
 *       WriteBehindFigures#oldestPendingAge()} says how far behind it is). For a chat memory this
 *       is harmless: the advisor searches for earlier turns before it adds this one. {@link
 *       #flush(Duration)} closes the gap when a caller must read what it just wrote.
 *   <li><b>Failures are tried again, counted and reported.</b> A batch the store (or its embedding
 *       model) refuses is tried again, {@link BatchingWriteBehindBuilder#retryAttempts retryAttempts}
 *       times in all with a doubling wait; one that still fails is logged (once per burst), counted
 *       per document ({@link WriteBehindFigures#failedWrites()}) and kept, and written again with the
 *       next flush or the stop; one still refused at the stop is in the report's {@link
 *       WriteBehindReport#failedIds()}, by document id. Nothing is dropped silently.
 *   <li><b>Bounded at shutdown.</b> {@link #stop(Duration)} (and {@link #close()}, Spring's destroy
 *       method for the bean) refuses later adds and deletes, writes what waits within its budget
 *       and reports by document id.
 *   <li><b>Survives a crash, with a spool.</b> With {@link Builder#spool}, every add and delete is
 *       kept in a journal before the call returns; the next store on the directory writes what the
 *       last one did not. Documents of text only: an add of a media document is refused then, and
 *       metadata values must be strings, numbers or booleans.
 * </ul>
 *
 * <p>{@link #delete(Filter.Expression)} cannot wait behind the documents it may match: it flushes
 * everything added before it (within the builder's close timeout), then deletes in the store on the
 * caller's thread.
 *
 * <p><b>Threads.</b> Thread-safe. The writer is a daemon thread named {@code
 * memlife-vector-writer-<name>}, started by the first add and ended after it has been idle for
 * {@link Builder#writerKeepAlive} (1 s by default). It writes to the store one call at a time;
 * searches go to the store on the callers' threads meanwhile. The documents handed over are the
 * caller's objects, written as they are: do not change one after adding it. The store behind is
 * the application's: this one never closes it.
 */
@SuppressWarnings("exports") // VectorStore and Document: patched into spring.ai.model to compile (see module-info)
public final class WriteBehindVectorStore extends WriteBehindDecorator<String> implements VectorStore {

    private static final WriteBehindEngine.Words WORDS = new WriteBehindEngine.Words(WriteBehindVectorStore.class,
            "write-behind vector store", "document id", "vector store", "add", "memlife-vector-writer-");

    private final WriteBehindEngine<String, Document> engine;
    private final VectorStore store;
    private final Duration filterFlush;

    private WriteBehindVectorStore(WriteBehindEngine<String, Document> engine, VectorStore store, Duration filterFlush) {
        super(engine);
        this.engine = engine;
        this.store = store;
        this.filterFlush = filterFlush;
    }

    /**
     * A write-behind store over {@code store}, with every default of {@link Builder}.
     *
     * @param store the vector store to write to; the application keeps owning it
     * @return the write-behind store
     */
    public static WriteBehindVectorStore over(VectorStore store) {
        return builder(store).build();
    }

    /**
     * A builder for a write-behind store over {@code store}.
     *
     * @param store the vector store to write to; the application keeps owning it
     * @return a builder with every default
     */
    public static Builder builder(VectorStore store) {
        return new Builder(requireNonNull(store, "store"));
    }

    /**
     * Hands {@code documents} over and returns at once; the writer adds them to the store (which
     * embeds them) in batches, in this order. A document whose id is already waiting replaces the
     * one waiting.
     *
     * @param documents the documents; each with an id
     * @throws NullPointerException if {@code documents}, one of them or its id is null (naming which)
     * @throws IllegalArgumentException with a spool, if a document cannot be kept in it (media, a
     *     metadata value that is not a string, number or boolean); nothing was taken
     * @throws StoppedException after {@link #stop} began; nothing was taken
     * @throws RejectedExecutionException if no writer thread could be started; nothing was taken
     */
    @Override
    public void add(List<Document> documents) {
        requireNonNull(documents, "documents");
        Map<String, List<Document>> byId = new LinkedHashMap<>();
        for (int i = 0; i < documents.size(); i++) {
            Document d = documents.get(i);
            if (d == null) {
                throw new NullPointerException("documents[" + i + "]");
            }
            byId.remove(d.getId()); // the same id twice in one call: the later one, in its place
            byId.put(requireNonNull(d.getId(), "documents[" + i + "].id"), List.of(d));
        }
        engine.saveAll(byId, "add");
    }

    /**
     * Hands over the deletion of {@code idList} and returns at once: the writer deletes them from
     * the store after the documents added before, and those still waiting are never written.
     *
     * @param idList the ids of the documents to delete
     * @throws NullPointerException if {@code idList} or one of its ids is null
     * @throws StoppedException after {@link #stop} began; nothing was taken
     * @throws RejectedExecutionException if no writer thread could be started; nothing was taken
     */
    @Override
    public void delete(List<String> idList) {
        requireNonNull(idList, "idList");
        List<String> ids = new ArrayList<>(idList.size());
        for (int i = 0; i < idList.size(); i++) {
            ids.add(requireNonNull(idList.get(i), "idList[" + i + "]"));
        }
        engine.deleteAll(ids, "delete");
    }

    /**
     * Deletes the documents {@code filterExpression} matches, in the store, on the caller's thread,
     * once everything handed over before this call is in the store.
     *
     * @param filterExpression which documents to delete
     * @throws NullPointerException if {@code filterExpression} is null
     * @throws IllegalStateException if what was handed over before could not be written within the
     *     builder's close timeout; nothing was deleted
     */
    @Override
    public void delete(Filter.Expression filterExpression) {
        requireNonNull(filterExpression, "filterExpression");
        if (!flush(filterFlush)) {
            throw new IllegalStateException(this + ": the documents added before a delete by filter were not all "
                    + "written within " + filterFlush.toMillis() + " ms; nothing was deleted (" + figures() + ")");
        }
        store.delete(filterExpression);
    }

    /**
     * Searches the store, on the caller's thread. Documents still waiting to be written are not
     * found yet (see the class's notes on recall lag).
     *
     * @param request the search
     * @return what the store found
     */
    @Override
    public List<Document> similaritySearch(SearchRequest request) {
        return store.similaritySearch(request);
    }

    /** {@return the store behind's name} */
    @Override
    public String getName() {
        return store.getName();
    }

    /** {@return the store behind's native client, if it has one} */
    @Override
    public <T> Optional<T> getNativeClient() {
        return store.getNativeClient();
    }

    /** The store behind, its adds and deletes tried again under the builder's policy. */
    private record StoreSink(VectorStore store, Attempts attempts) implements WriteBehindEngine.Sink<String, Document> {
        @Override
        public List<Document> read(String id) {
            return null; // never asked: searches go to the store
        }

        @Override
        public void save(String id, List<Document> documents) {
            attempts.run(() -> store.add(documents));
        }

        @Override
        public void delete(String id) {
            deleteAll(List.of(id));
        }

        @Override
        public void saveAll(Map<String, List<Document>> states) {
            List<Document> all = new ArrayList<>(states.size());
            states.values().forEach(all::addAll);
            attempts.run(() -> store.add(all));
        }

        @Override
        public void deleteAll(List<String> ids) {
            attempts.run(() -> store.delete(ids));
        }
    }

    /**
     * Builds a {@link WriteBehindVectorStore}: the settings of {@link BatchingWriteBehindBuilder}
     * (batch size, retries), {@link dev.memlife.WriteBehindBuilder} (name, default {@code
     * vector-store}; close timeout; writer keep-alive; spool) and {@link dev.memlife.OwnerBuilder}
     * (thread factory, ticker). Every setter checks its argument and names it when it refuses one.
     */
    public static final class Builder extends BatchingWriteBehindBuilder<Builder> {

        /** Default name: {@value}. */
        public static final String DEFAULT_NAME = "vector-store";

        private final VectorStore store;

        private Builder(VectorStore store) {
            super(DEFAULT_NAME);
            this.store = store;
        }

        /**
         * {@return a new write-behind store with these settings; it starts no thread until the first
         * add, unless its spool holds documents an earlier run did not write}
         *
         * @throws IllegalStateException if {@code durable} is set without a spool, or the spool's
         *     directory is in use
         * @throws java.io.UncheckedIOException if the spool cannot be opened or read
         */
        public WriteBehindVectorStore build() {
            Attempts attempts = new Attempts(retryAttempts(), retryBackoff(), MAX_RETRY_BACKOFF);
            return new WriteBehindVectorStore(new WriteBehindEngine<>(this, WORDS, store,
                    new StoreSink(store, attempts), DocumentCodec.INSTANCE, batchSize()), store, closeTimeout());
        }
    }
}
