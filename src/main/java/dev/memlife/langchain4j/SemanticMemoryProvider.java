package dev.memlife.langchain4j;

import static java.util.Objects.requireNonNull;

import dev.langchain4j.data.document.Metadata;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.store.embedding.EmbeddingMatch;
import dev.langchain4j.store.embedding.EmbeddingSearchRequest;
import dev.langchain4j.store.embedding.EmbeddingSearchResult;
import dev.langchain4j.store.embedding.EmbeddingStore;
import dev.langchain4j.store.embedding.filter.MetadataFilterBuilder;
import dev.memlife.BatchingWriteBehindBuilder;
import dev.memlife.MemoryManager;
import dev.memlife.MemoryProvider;
import dev.memlife.Turn;
import dev.memlife.internal.Attempts;
import dev.memlife.internal.Checks;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * A {@link MemoryProvider} that gives any memlife agent semantic long-term memory in a LangChain4j
 * {@link EmbeddingStore}: every turn a {@link MemoryManager} delivers is embedded and stored, and
 * each turn's {@link MemoryManager#prefetchAll recall} finds the earlier turns closest in meaning
 * to the user's message, from any earlier session, however they were worded.
 *
 * <pre>{@code
 * SemanticMemoryProvider longTerm = SemanticMemoryProvider.builder(embeddingModel, embeddingStore)
 *         .scope(sessionId -> userOf(sessionId))     // each user recalls only their own memories
 *         .build();
 * memory.addProvider(longTerm);
 * memory.syncAll(userText, assistantText, sessionId);        // embedded and stored on memlife's writer
 * String recalled = memory.prefetchAll(nextUserText, sessionId); // "- User: ...\n  Assistant: ..."
 * }</pre>
 *
 * <p><b>What is stored.</b> Each turn is one {@link TextSegment}, {@code "User: <what the user
 * said>\nAssistant: <the reply>"}, with metadata {@value #SESSION_KEY} (its session id), {@value
 * #WRITE_ID_KEY} (its {@link Turn#writeId()}) and, with a {@link Builder#scope scope}, {@value
 * #SCOPE_KEY}. Its id in the store is {@link #segmentId(String)} of its write id, a UUID made from
 * it (many stores take only UUIDs): a turn replayed from a spool, or delivered again after a
 * failure, lands under the same id, so a store that upserts by id (most do) keeps it once.
 *
 * <p><b>Writes, off the request path.</b> The manager calls {@link #syncBatch} on its writer
 * thread with every turn already queued, up to its batch size: the whole batch is embedded in one
 * {@link EmbeddingModel#embedAll} call and stored in one {@link EmbeddingStore#addAll(List, List,
 * List)} call. A batch the model or the store refuses is tried again, {@link Builder#retry}
 * times in all with a doubling wait (the embeddings are kept if only the store failed); one that
 * still fails throws, and the manager counts and reports each of its turns by write id. The retry
 * waits are on the manager's writer thread: keep them short.
 *
 * <p><b>Recall.</b> {@link #prefetch} embeds the query ({@link EmbeddingModel#embed(String)}) and
 * searches the store for at most {@link Builder#maxResults maxResults} turns scoring at least
 * {@link Builder#minScore minScore}, restricted to the session's scope if there is one. A turn is
 * found once the writer has stored it: recall lags the writes by the manager's queue (its {@link
 * MemoryManager#flushPending flushPending} closes the gap). The manager bounds the call by its
 * prefetch timeout.
 *
 * <p><b>Threads.</b> Thread-safe: writes come from the manager's writer, recalls from its prefetch
 * threads, and the provider keeps no state but its figures. One instance may serve several
 * managers ({@link MemoryManager#useProvider}). {@link #shutdown()} leaves the model and the store
 * alone: they are the application's.
 */
public final class SemanticMemoryProvider implements MemoryProvider {

    /** The metadata key of each stored turn's session id. */
    public static final String SESSION_KEY = "memlife.session";
    /** The metadata key of each stored turn's write id. */
    public static final String WRITE_ID_KEY = "memlife.writeId";
    /** The metadata key of each stored turn's scope, with {@link Builder#scope}; recalls filter on it. */
    public static final String SCOPE_KEY = "memlife.scope";

    private final String name;
    private final EmbeddingModel model;
    private final EmbeddingStore<TextSegment> store;
    private final int maxResults;
    private final double minScore;
    private final Attempts attempts;
    private final Function<String, String> scopes;
    private final AtomicLong embeddedTurns = new AtomicLong();
    private final AtomicLong embeddingCalls = new AtomicLong();

    private SemanticMemoryProvider(Builder b) {
        this.name = b.name;
        this.model = b.model;
        this.store = b.store;
        this.maxResults = b.maxResults;
        this.minScore = b.minScore;
        this.attempts = new Attempts(b.retryAttempts, b.retryBackoff, BatchingWriteBehindBuilder.MAX_RETRY_BACKOFF);
        this.scopes = b.scopes;
    }

    /**
     * A provider named {@value Builder#DEFAULT_NAME} over {@code model} and {@code store}, with every
     * default of {@link Builder}: one memory for all sessions.
     *
     * @param model the embedding model; the application keeps owning it
     * @param store the embedding store; the application keeps owning it
     * @return the provider
     */
    public static SemanticMemoryProvider create(EmbeddingModel model, EmbeddingStore<TextSegment> store) {
        return builder(model, store).build();
    }

    /**
     * A builder for a provider over {@code model} and {@code store}.
     *
     * @param model the embedding model; the application keeps owning it
     * @param store the embedding store; the application keeps owning it
     * @return a builder with every default
     */
    public static Builder builder(EmbeddingModel model, EmbeddingStore<TextSegment> store) {
        return new Builder(requireNonNull(model, "model"), requireNonNull(store, "store"));
    }

    /**
     * The id in the store of the turn whose write id is {@code writeId}: a name-based UUID of it
     * ({@link UUID#nameUUIDFromBytes}), the same every time, in the form every store accepts.
     *
     * @param writeId a turn's {@link Turn#writeId()}
     * @return its segment's id, as text
     * @throws NullPointerException if {@code writeId} is null
     */
    public static String segmentId(String writeId) {
        return UUID.nameUUIDFromBytes(requireNonNull(writeId, "writeId").getBytes(StandardCharsets.UTF_8)).toString();
    }

    @Override
    public String name() {
        return name;
    }

    /**
     * Embeds and stores {@code turn}: {@link #syncBatch} of it alone.
     *
     * @throws NullPointerException if {@code turn} is null, or the scope function returned null
     * @throws RuntimeException what the model or the store threw on the first attempt, once every
     *     attempt failed
     */
    @Override
    public void syncTurn(Turn turn) {
        syncBatch(List.of(requireNonNull(turn, "turn")));
    }

    /**
     * Embeds {@code turns} in one call to the model and stores them in one call to the store, each
     * under {@link #segmentId(String) the id of its write id}; tried again as a whole under the
     * builder's policy.
     *
     * @throws NullPointerException if {@code turns} or one of them is null (naming which), or the
     *     scope function returned null
     * @throws IllegalStateException if the model returned another number of embeddings than texts
     *     (on the last attempt)
     * @throws RuntimeException what the model or the store threw on the first attempt, once every
     *     attempt failed; the manager counts each turn as failed
     */
    @Override
    public void syncBatch(List<Turn> turns) {
        if (requireNonNull(turns, "turns").isEmpty()) {
            return;
        }
        List<String> ids = new ArrayList<>(turns.size());
        List<TextSegment> segments = new ArrayList<>(turns.size());
        for (int i = 0; i < turns.size(); i++) {
            Turn t = turns.get(i);
            if (t == null) {
                throw new NullPointerException("turns[" + i + "]");
            }
            ids.add(segmentId(t.writeId()));
            segments.add(segmentOf(t));
        }
        BatchEmbedding.write(model, store, attempts, ids, segments, "turns", embeddingCalls::incrementAndGet);
        embeddedTurns.addAndGet(turns.size());
    }

    private TextSegment segmentOf(Turn turn) {
        Metadata metadata = new Metadata().put(SESSION_KEY, turn.sessionId()).put(WRITE_ID_KEY, turn.writeId());
        if (scopes != null) {
            metadata.put(SCOPE_KEY, scopeOf(turn.sessionId()));
        }
        return TextSegment.from("User: " + turn.userContent() + "\nAssistant: " + turn.assistantContent(), metadata);
    }

    private String scopeOf(String sessionId) {
        String scope = scopes.apply(sessionId);
        if (scope == null) {
            throw new NullPointerException("the scope function returned null for session '" + sessionId + "'");
        }
        return scope;
    }

    /**
     * The earlier turns closest in meaning to {@code query}, in the session's scope if there is one:
     * one line {@code "- User: ..."} per turn, its reply on the next line, best match first, after a
     * one-line heading; an empty string when nothing scores at least the minimum or the query is
     * blank. One embedding of the query and one search of the store, on the caller's thread.
     *
     * @throws NullPointerException if {@code sessionId} is null, or the scope function returned null
     */
    @Override
    public String prefetch(String query, String sessionId) {
        requireNonNull(sessionId, "sessionId");
        if (query == null || query.isBlank()) {
            return "";
        }
        Embedding embedding = model.embed(query).content();
        EmbeddingSearchRequest.EmbeddingSearchRequestBuilder request = EmbeddingSearchRequest.builder()
                .queryEmbedding(embedding).maxResults(maxResults).minScore(minScore);
        if (scopes != null) {
            request.filter(MetadataFilterBuilder.metadataKey(SCOPE_KEY).isEqualTo(scopeOf(sessionId)));
        }
        EmbeddingSearchResult<TextSegment> result = store.search(request.build());
        List<EmbeddingMatch<TextSegment>> matches = result == null ? List.of() : result.matches();
        StringBuilder out = new StringBuilder();
        for (EmbeddingMatch<TextSegment> m : matches) {
            if (m.embedded() != null) {
                out.append("\n- ").append(m.embedded().text().replace("\n", "\n  "));
            }
        }
        return out.isEmpty() ? "" : "Recalled from earlier conversations:" + out;
    }

    /** {@return turns embedded and stored so far} */
    public long embeddedTurns() {
        return embeddedTurns.get();
    }

    /** {@return calls to the model's {@code embedAll} for writes so far, one per batch and attempt; recalls not counted} */
    public long embeddingCalls() {
        return embeddingCalls.get();
    }

    @Override
    public String toString() {
        return "SemanticMemoryProvider[" + name + " into " + store + "]";
    }

    /**
     * Builds a {@link SemanticMemoryProvider}. Every setter checks its argument and names it when it
     * refuses one. Not thread-safe: a builder is used by one thread.
     */
    public static final class Builder {

        /** Default provider name: {@value}. */
        public static final String DEFAULT_NAME = "semantic-memory";
        /** Default most turns one recall returns: {@value}. */
        public static final int DEFAULT_MAX_RESULTS = 3;
        /** Default least score of a recalled turn: {@value}. */
        public static final double DEFAULT_MIN_SCORE = 0.6;

        private final EmbeddingModel model;
        private final EmbeddingStore<TextSegment> store;
        private String name = DEFAULT_NAME;
        private int maxResults = DEFAULT_MAX_RESULTS;
        private double minScore = DEFAULT_MIN_SCORE;
        private int retryAttempts = BatchingWriteBehindBuilder.DEFAULT_RETRY_ATTEMPTS;
        private Duration retryBackoff = BatchingWriteBehindBuilder.DEFAULT_RETRY_BACKOFF;
        private Function<String, String> scopes;

        private Builder(EmbeddingModel model, EmbeddingStore<TextSegment> store) {
            this.model = model;
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
         * The most earlier turns one recall returns; default {@value #DEFAULT_MAX_RESULTS}.
         *
         * @param maxResults the most turns; at least 1
         * @return this builder
         */
        public Builder maxResults(int maxResults) {
            this.maxResults = Checks.atLeast(maxResults, 1, "maxResults");
            return this;
        }

        /**
         * The least score a turn needs to be recalled, as the store scores a match; default {@value
         * #DEFAULT_MIN_SCORE}. LangChain4j's stores score {@code (cosine similarity + 1) / 2}, from 0
         * to 1, so the default asks for a cosine of at least 0.2. Measured with all-MiniLM-L6-v2 on
         * turns stored as this provider stores them: a question that paraphrases an earlier turn
         * ("which city does my sibling live in?" after "my sister Maria lives in Lisbon") scores
         * about 0.72, turns on other subjects 0.46 to 0.57. Other models spread their scores
         * otherwise: raise it for one whose unrelated texts score higher, lower it to recall more
         * loosely.
         *
         * @param minScore the least score; from 0 to 1
         * @return this builder
         * @throws IllegalArgumentException if {@code minScore} is not between 0 and 1, naming the value
         */
        public Builder minScore(double minScore) {
            if (!(minScore >= 0 && minScore <= 1)) {
                throw new IllegalArgumentException("minScore must be between 0 and 1: " + minScore);
            }
            this.minScore = minScore;
            return this;
        }

        /**
         * How a batch the model or the store refuses is tried again before its turns count as
         * failed (memlife's writer then counts them per write id): {@code attempts} in all (1: no
         * retry), waiting {@code backoff} after the first failed one on the manager's writer thread,
         * doubled after each next one, up to {@link BatchingWriteBehindBuilder#MAX_RETRY_BACKOFF}.
         * Default 3 attempts, 200 ms.
         *
         * @param attempts the number of attempts; at least 1
         * @param backoff the first wait; zero or more, at most {@link
         *     BatchingWriteBehindBuilder#MAX_RETRY_BACKOFF}
         * @return this builder
         * @throws IllegalArgumentException if {@code attempts} is below 1, or {@code backoff} is
         *     negative or longer than the maximum, naming the value
         */
        public Builder retry(int attempts, Duration backoff) {
            this.retryAttempts = Checks.atLeast(attempts, 1, "attempts");
            this.retryBackoff = Checks.nonNegative(backoff, BatchingWriteBehindBuilder.MAX_RETRY_BACKOFF,
                    "MAX_RETRY_BACKOFF (" + BatchingWriteBehindBuilder.MAX_RETRY_BACKOFF + ")", "backoff");
            return this;
        }

        /**
         * Whose memory a session's turns are, so that each recalls only its own: the scope of a
         * session (a user id, a tenant) is stored with each of its turns, under {@value
         * SemanticMemoryProvider#SCOPE_KEY}, and a recall searches only the turns of its session's
         * scope. By default there is none: one memory for all sessions. Set it before the first
         * turn is stored: turns stored without a scope are never recalled with one.
         *
         * @param sessionToScope the function from session id to scope; must not return null
         * @return this builder
         */
        public Builder scope(Function<String, String> sessionToScope) {
            this.scopes = requireNonNull(sessionToScope, "sessionToScope");
            return this;
        }

        /** {@return a new provider with these settings} */
        public SemanticMemoryProvider build() {
            return new SemanticMemoryProvider(this);
        }
    }
}
