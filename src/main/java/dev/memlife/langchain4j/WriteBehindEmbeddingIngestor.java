package dev.memlife.langchain4j;

import static java.util.Objects.requireNonNull;

import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.store.embedding.EmbeddingSearchRequest;
import dev.langchain4j.store.embedding.EmbeddingSearchResult;
import dev.langchain4j.store.embedding.EmbeddingStore;
import dev.memlife.BatchingWriteBehindBuilder;
import dev.memlife.StoppedException;
import dev.memlife.WriteBehindDecorator;
import dev.memlife.WriteBehindFigures;
import dev.memlife.WriteBehindReport;
import dev.memlife.internal.Attempts;
import dev.memlife.internal.WriteBehindEngine;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.RejectedExecutionException;

/**
 * A write-behind ingestor over an application's {@link EmbeddingModel} and {@link EmbeddingStore}:
 * {@link #add(TextSegment)} and {@link #remove} return at once, and one writer thread embeds the
 * segments in batches, many texts per call to the model, and adds them to the store.
 *
 * <p>LangChain4j's {@code EmbeddingStoreIngestor.ingest} embeds and stores on the caller's thread:
 * a chat service that remembers each exchange in an embedding store pays one embedding call and
 * one store write on every request's path, milliseconds on a local model and 100 ms or more on a
 * remote one. Hand the segments to this ingestor instead:
 *
 * <pre>{@code
 * WriteBehindEmbeddingIngestor memory = WriteBehindEmbeddingIngestor.builder(embeddingModel, embeddingStore)
 *         .name("long-term").build();
 * String id = memory.add(TextSegment.from("User: my sister lives in Lisbon"));   // returns at once
 * ...
 * EmbeddingSearchResult<TextSegment> recalled = memory.search(EmbeddingSearchRequest.builder()
 *         .queryEmbedding(embeddingModel.embed("where does my sister live?").content()).build());
 * ...
 * WriteBehindReport<String> report = memory.stop(Duration.ofSeconds(10)); // at shutdown: drains, reports
 * }</pre>
 *
 * <ul>
 *   <li><b>Every segment kept, in order.</b> Segments are kept by id: each waits until the writer
 *       has added it to the store, and the writer takes them in the order they were added. A
 *       segment added again under an id still waiting replaces the one waiting, and a removal of a
 *       waiting id replaces its add. An id already in the store is the store's to replace: those
 *       that upsert by id (most do) keep the later segment; LangChain4j's {@code
 *       InMemoryEmbeddingStore} keeps both.
 *   <li><b>Batched.</b> The writer takes as many segments as wait, up to {@link
 *       BatchingWriteBehindBuilder#batchSize batchSize} (64 by default), embeds them in one {@link
 *       EmbeddingModel#embedAll} call and adds them in one {@link EmbeddingStore#addAll(List, List,
 *       List)} call; removals go in one {@link EmbeddingStore#removeAll(Collection)} call.
 *   <li><b>Recall lags the writes.</b> {@link #search} goes to the store: a segment is found once
 *       the writer has written it, typically one batch's embedding after it was added (under load,
 *       the batches queued before it too; {@link #figures()}'s {@link
 *       WriteBehindFigures#oldestPendingAge()} says how far behind it is). {@link
 *       #flush(java.time.Duration)} closes the gap when a caller must find what it just added.
 *   <li><b>Failures are tried again, counted and reported.</b> A batch the model or the store
 *       refuses is tried again, {@link BatchingWriteBehindBuilder#retryAttempts retryAttempts} times
 *       in all with a doubling wait (the embeddings of an attempt whose store call failed are kept
 *       for the next). One that still fails is logged (once per burst), counted per segment id
 *       ({@link WriteBehindFigures#failedWrites()}) and kept, and written again with the next flush
 *       or the stop; one still refused at the stop is in the report's {@link
 *       WriteBehindReport#failedIds()}, by segment id. Nothing is dropped silently.
 *   <li><b>Bounded at shutdown.</b> {@link #stop(java.time.Duration)} (and {@link #close()})
 *       refuses later adds and removals, writes what waits within its budget and reports by segment
 *       id. A model or store that hangs does not hold it past its budget.
 *   <li><b>Survives a crash, with a spool.</b> With {@link Builder#spool}, every add and removal is
 *       kept in a journal before the call returns; the next ingestor on the directory embeds and
 *       writes what the last one did not, under the same ids. Metadata values must then be of the
 *       types LangChain4j's {@code Metadata} holds (strings, UUIDs, integers, longs, floats and
 *       doubles).
 * </ul>
 *
 * <p><b>Threads.</b> Thread-safe. The writer is a daemon thread named {@code
 * memlife-embedding-writer-<name>}, started by the first add and ended after it has been idle for
 * {@link Builder#writerKeepAlive} (1 s by default). It calls the model and the store one call at a
 * time; searches go to the store on the callers' threads meanwhile. The segments handed over are
 * the caller's objects, written as they are. The model and the store are the application's: this
 * ingestor never closes them.
 */
public final class WriteBehindEmbeddingIngestor extends WriteBehindDecorator<String> {

    private static final WriteBehindEngine.Words WORDS = new WriteBehindEngine.Words(WriteBehindEmbeddingIngestor.class,
            "write-behind embedding ingestor", "segment id", "embedding store", "add", "memlife-embedding-writer-");

    private final WriteBehindEngine<String, TextSegment> engine;
    private final EmbeddingModel model;
    private final EmbeddingStore<TextSegment> store;

    private WriteBehindEmbeddingIngestor(WriteBehindEngine<String, TextSegment> engine, EmbeddingModel model,
            EmbeddingStore<TextSegment> store) {
        super(engine);
        this.engine = engine;
        this.model = model;
        this.store = store;
    }

    /**
     * A write-behind ingestor into {@code store} through {@code model}, with every default of
     * {@link Builder}.
     *
     * @param model the embedding model; the application keeps owning it
     * @param store the embedding store to write to; the application keeps owning it
     * @return the ingestor
     */
    public static WriteBehindEmbeddingIngestor over(EmbeddingModel model, EmbeddingStore<TextSegment> store) {
        return builder(model, store).build();
    }

    /**
     * A builder for a write-behind ingestor into {@code store} through {@code model}.
     *
     * @param model the embedding model; the application keeps owning it
     * @param store the embedding store to write to; the application keeps owning it
     * @return a builder with every default
     */
    public static Builder builder(EmbeddingModel model, EmbeddingStore<TextSegment> store) {
        return new Builder(requireNonNull(model, "model"), requireNonNull(store, "store"));
    }

    /**
     * Hands {@code segment} over under a new random id and returns at once; the writer embeds it and
     * adds it to the store.
     *
     * @param segment the segment
     * @return its id in the store: a random UUID, as text
     * @throws NullPointerException if {@code segment} is null
     * @throws IllegalArgumentException with a spool, if the segment cannot be kept in it; nothing
     *     was taken
     * @throws StoppedException after {@link #stop} began; nothing was taken
     * @throws RejectedExecutionException if no writer thread could be started; nothing was taken
     */
    public String add(TextSegment segment) {
        requireNonNull(segment, "segment");
        String id = UUID.randomUUID().toString();
        engine.save(id, List.of(segment), "add");
        return id;
    }

    /**
     * Hands {@code segments} over, each under a new random id, all or none, and returns at once; the
     * writer embeds and adds them in this order.
     *
     * @param segments the segments
     * @return their ids in the store, in the same order: random UUIDs, as text
     * @throws NullPointerException if {@code segments} or one of them is null (naming which)
     * @throws IllegalArgumentException with a spool, if a segment cannot be kept in it; nothing was
     *     taken
     * @throws StoppedException after {@link #stop} began; nothing was taken
     * @throws RejectedExecutionException if no writer thread could be started; nothing was taken
     */
    public List<String> addAll(List<TextSegment> segments) {
        requireNonNull(segments, "segments");
        Map<String, List<TextSegment>> byId = new LinkedHashMap<>();
        for (int i = 0; i < segments.size(); i++) {
            TextSegment s = segments.get(i);
            if (s == null) {
                throw new NullPointerException("segments[" + i + "]");
            }
            byId.put(UUID.randomUUID().toString(), List.of(s));
        }
        engine.saveAll(byId, "addAll");
        return List.copyOf(byId.keySet());
    }

    /**
     * Hands {@code segment} over under {@code id} and returns at once; the writer embeds it and adds
     * it to the store under that id. A segment still waiting under the same id is replaced and never
     * written; one already in the store is replaced by stores that upsert by id.
     *
     * @param id the segment's id in the store; in the form the store accepts (many want a UUID)
     * @param segment the segment
     * @throws NullPointerException if {@code id} or {@code segment} is null
     * @throws IllegalArgumentException with a spool, if the segment cannot be kept in it; nothing
     *     was taken
     * @throws StoppedException after {@link #stop} began; nothing was taken
     * @throws RejectedExecutionException if no writer thread could be started; nothing was taken
     */
    public void add(String id, TextSegment segment) {
        requireNonNull(id, "id");
        requireNonNull(segment, "segment");
        engine.save(id, List.of(segment), "add");
    }

    /**
     * Hands over the removal of {@code id} and returns at once: the writer removes it from the store
     * after the segments added before, and a segment still waiting under it is never written.
     *
     * @param id the id of the segment to remove
     * @throws NullPointerException if {@code id} is null
     * @throws StoppedException after {@link #stop} began; nothing was taken
     * @throws RejectedExecutionException if no writer thread could be started; nothing was taken
     */
    public void remove(String id) {
        engine.delete(requireNonNull(id, "id"), "remove");
    }

    /**
     * Hands over the removal of {@code ids}, all or none, and returns at once: the writer removes
     * them from the store after the segments added before, and those still waiting are never
     * written.
     *
     * @param ids the ids of the segments to remove
     * @throws NullPointerException if {@code ids} or one of them is null (naming which)
     * @throws StoppedException after {@link #stop} began; nothing was taken
     * @throws RejectedExecutionException if no writer thread could be started; nothing was taken
     */
    public void removeAll(Collection<String> ids) {
        requireNonNull(ids, "ids");
        List<String> list = new ArrayList<>(ids.size());
        for (String id : ids) {
            if (id == null) {
                throw new NullPointerException("ids[" + list.size() + "]");
            }
            list.add(id);
        }
        engine.deleteAll(list, "removeAll");
    }

    /**
     * Searches the store, on the caller's thread. Segments still waiting to be written are not found
     * yet (see the class's notes on recall lag).
     *
     * @param request the search
     * @return what the store found
     * @throws NullPointerException if {@code request} is null
     */
    public EmbeddingSearchResult<TextSegment> search(EmbeddingSearchRequest request) {
        return store.search(requireNonNull(request, "request"));
    }

    /** {@return the embedding store behind, the application's; its searches do not see what waits here} */
    public EmbeddingStore<TextSegment> store() {
        return store;
    }

    /** {@return the embedding model the writer embeds with, the application's} */
    public EmbeddingModel model() {
        return model;
    }

    /**
     * The model and the store behind: each batch embedded in one call and added in one, the two
     * tried again together under the builder's policy.
     */
    private record StoreSink(EmbeddingModel model, EmbeddingStore<TextSegment> store, Attempts attempts)
            implements WriteBehindEngine.Sink<String, TextSegment> {
        @Override
        public List<TextSegment> read(String id) {
            return null; // never asked: searches go to the store
        }

        @Override
        public void save(String id, List<TextSegment> segments) {
            saveAll(Map.of(id, segments));
        }

        @Override
        public void delete(String id) {
            deleteAll(List.of(id));
        }

        @Override
        public void saveAll(Map<String, List<TextSegment>> states) {
            List<String> ids = new ArrayList<>(states.size());
            List<TextSegment> segments = new ArrayList<>(states.size());
            states.forEach((id, state) -> {
                ids.add(id);
                segments.add(state.get(0)); // one segment per id: add and addAll hand over List.of(segment)
            });
            BatchEmbedding.write(model, store, attempts, ids, segments, "segments", () -> { });
        }

        @Override
        public void deleteAll(List<String> ids) {
            attempts.run(() -> store.removeAll(ids));
        }
    }

    /**
     * Builds a {@link WriteBehindEmbeddingIngestor}: the settings of {@link
     * BatchingWriteBehindBuilder} (batch size, retries), {@link dev.memlife.WriteBehindBuilder}
     * (name, default {@value #DEFAULT_NAME}; close timeout; writer keep-alive; spool) and {@link
     * dev.memlife.OwnerBuilder} (thread factory, ticker). Every setter checks its argument and names
     * it when it refuses one.
     */
    public static final class Builder extends BatchingWriteBehindBuilder<Builder> {

        /** Default name: {@value}. */
        public static final String DEFAULT_NAME = "embedding-store";

        private final EmbeddingModel model;
        private final EmbeddingStore<TextSegment> store;

        private Builder(EmbeddingModel model, EmbeddingStore<TextSegment> store) {
            super(DEFAULT_NAME);
            this.model = model;
            this.store = store;
        }

        /**
         * {@return a new write-behind ingestor with these settings; it starts no thread until the
         * first add, unless its spool holds segments an earlier run did not write}
         *
         * @throws IllegalStateException if {@code durable} is set without a spool, or the spool's
         *     directory is in use
         * @throws java.io.UncheckedIOException if the spool cannot be opened or read
         */
        public WriteBehindEmbeddingIngestor build() {
            Attempts attempts = new Attempts(retryAttempts(), retryBackoff(), MAX_RETRY_BACKOFF);
            return new WriteBehindEmbeddingIngestor(new WriteBehindEngine<>(this, WORDS, store,
                    new StoreSink(model, store, attempts), SegmentCodec.INSTANCE, batchSize()), model, store);
        }
    }
}
