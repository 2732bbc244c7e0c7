package dev.memlife.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.embedding.onnx.allminilml6v2.AllMiniLmL6V2EmbeddingModel;
import dev.langchain4j.store.embedding.inmemory.InMemoryEmbeddingStore;
import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.Turn;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Semantic long-term memory for memlife agents over the real all-MiniLM-L6-v2 model and LangChain4j's
 * in-memory embedding store, saved to a file between "processes": what an earlier session said is
 * recalled by meaning, each batch of turns costs one embedding call, a scope keeps each user's
 * memories their own, and failures reach the manager's report.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SemanticMemoryProviderTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final EmbeddingModel MINILM = new AllMiniLmL6V2EmbeddingModel();
    private static final String QUESTION = "Which city does my sibling live in?";

    @TempDir
    Path dir;

    private static MemoryManager manager(String name, SemanticMemoryProvider provider) {
        // a generous prefetch timeout: a loaded CI machine must not turn a slow recall into an empty one
        MemoryManager manager = MemoryManager.builder().name(name).prefetchTimeout(WAIT).build();
        manager.addProvider(provider);
        return manager;
    }

    private static Turn turn(String writeId, String sessionId, String user, String assistant) {
        return Turn.of(writeId, sessionId, user, assistant, List.of(), Instant.now());
    }

    @Test
    void recallsAParaphrasedFactFromAnEarlierSessionThroughPrefetchAllWithTheRealOnnxModel() throws Exception {
        Path file = dir.resolve("long-term-memory.json");
        InMemoryEmbeddingStore<TextSegment> firstStore = new InMemoryEmbeddingStore<>();
        SemanticMemoryProvider first = SemanticMemoryProvider.create(MINILM, firstStore);
        MemoryManager earlier = manager("earlier", first);
        earlier.initializeAll("s1");
        earlier.syncAll("My sister Maria lives in Lisbon and works as a marine biologist.",
                "That sounds like a fascinating job, and Lisbon is a lovely city by the ocean.", "s1");
        earlier.syncAll("How long should I boil pasta for carbonara?",
                "About 9 to 11 minutes, until al dente; keep some cooking water for the sauce.", "s1");
        earlier.syncAll("Did Benfica win the football match last night?",
                "I can't check live scores, but the league's website has last night's result.", "s1");
        DrainReport drained = earlier.stop(WAIT);
        assertThat(drained.delivered()).as(drained.toString()).isEqualTo(3);
        assertThat(first.embeddedTurns()).isEqualTo(3);
        firstStore.serializeToFile(file);

        InMemoryEmbeddingStore<TextSegment> reloaded = InMemoryEmbeddingStore.fromFile(file);
        SemanticMemoryProvider later = SemanticMemoryProvider.create(MINILM, reloaded);
        MemoryManager now = manager("later", later);
        try {
            now.initializeAll("s2");
            String recalled = now.prefetchAll(QUESTION, "s2");

            assertThat(recalled).contains("Recalled from earlier conversations:")
                    .contains("- User: My sister Maria lives in Lisbon and works as a marine biologist.")
                    .contains("  Assistant: That sounds like a fascinating job")
                    .doesNotContain("Benfica").doesNotContain("football");
            assertThat(later.embeddingCalls()).as("a recall embeds the query, no write").isZero();
        } finally {
            now.stop(WAIT);
        }
    }

    @Test
    void theTurnsQueuedWhileTheModelIsBusyAreEmbeddedInOneCallAndStoredUnderTheirWriteIds() throws Exception {
        GatedEmbeddingModel model = new GatedEmbeddingModel(MINILM);
        HeldEmbeddingStore store = new HeldEmbeddingStore();
        SemanticMemoryProvider provider = SemanticMemoryProvider.create(model, store);
        MemoryManager memory = manager("batching", provider);
        try {
            model.hold();
            memory.syncAll("q0", "a0", "s1");
            assertThat(model.awaitEntered(WAIT)).as("the writer is in the model with the first turn, held").isTrue();
            for (int i = 1; i <= 10; i++) {
                memory.syncAll("q" + i, "a" + i, "s1"); // returns while the model is held
            }
            assertThat(model.calls()).isEmpty();
            model.open();
            assertThat(memory.flushPending(WAIT)).isTrue();

            assertThat(model.batchSizes()).as("the ten turns that waited: one embedAll").containsExactly(1, 10);
            assertThat(model.calls().get(1).texts()).first().isEqualTo("User: q1\nAssistant: a1");
            assertThat(model.calls()).extracting(GatedEmbeddingModel.Call::thread)
                    .allSatisfy(t -> assertThat(t).isNotEqualTo(Thread.currentThread().getName()));
            assertThat(store.calls()).as("one addAll per batch").hasSize(2);
            assertThat(provider.embeddingCalls()).isEqualTo(2);
            assertThat(provider.embeddedTurns()).isEqualTo(11);

            Map<String, TextSegment> stored = HeldEmbeddingStore.contents(store, MINILM.embed("q").content());
            assertThat(stored).hasSize(11);
            stored.forEach((id, segment) -> {
                String writeId = segment.metadata().getString(SemanticMemoryProvider.WRITE_ID_KEY);
                assertThat(id).as("stored under its write id's segment id").isEqualTo(
                        SemanticMemoryProvider.segmentId(writeId));
                assertThat(segment.metadata().getString(SemanticMemoryProvider.SESSION_KEY)).isEqualTo("s1");
                assertThat(segment.metadata().containsKey(SemanticMemoryProvider.SCOPE_KEY)).isFalse();
            });
        } finally {
            model.open();
            memory.stop(WAIT);
        }
    }

    @Test
    void aReplayedTurnLandsUnderTheSameIdAUuidMadeFromItsWriteId() {
        HeldEmbeddingStore store = new HeldEmbeddingStore();
        SemanticMemoryProvider provider = SemanticMemoryProvider.create(MINILM, store);
        Turn t = turn("9f1c2a44-0000-4000-8000-000000000001:17", "s1", "hi", "hello");

        provider.syncTurn(t);
        provider.syncBatch(List.of(turn(t.writeId(), "s1", "hi", "hello")));

        String id = SemanticMemoryProvider.segmentId(t.writeId());
        assertThat(UUID.fromString(id).toString()).isEqualTo(id);
        assertThat(store.calls()).extracting(HeldEmbeddingStore.Call::ids).containsExactly(List.of(id), List.of(id));
        assertThat(SemanticMemoryProvider.segmentId("another:17")).isNotEqualTo(id);
    }

    @Test
    void aScopeKeepsEachUsersMemoriesTheirOwn() {
        InMemoryEmbeddingStore<TextSegment> store = new InMemoryEmbeddingStore<>();
        SemanticMemoryProvider provider = SemanticMemoryProvider.builder(MINILM, store)
                .scope(session -> session.substring(0, session.indexOf('/'))).build();
        provider.syncBatch(List.of(
                turn("w:1", "alice/1", "My sister Maria lives in Lisbon.", "Lisbon is lovely."),
                turn("w:2", "bob/1", "My brother Tiago lives in Porto.", "Porto is lovely.")));

        String alice = provider.prefetch(QUESTION, "alice/2");
        String bob = provider.prefetch(QUESTION, "bob/7");

        assertThat(alice).contains("Lisbon").doesNotContain("Porto");
        assertThat(bob).contains("Porto").doesNotContain("Lisbon");
        assertThat(provider.prefetch(QUESTION, "carol/1")).as("nothing of carol's").isEmpty();
        SemanticMemoryProvider unscoped = SemanticMemoryProvider.create(MINILM, store);
        assertThat(unscoped.prefetch(QUESTION, "alice/2")).as("without a scope: one memory for all")
                .contains("Lisbon").contains("Porto");

        SemanticMemoryProvider nullScope = SemanticMemoryProvider.builder(MINILM, store).scope(s -> null).build();
        assertThatThrownBy(() -> nullScope.prefetch(QUESTION, "x")).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("session 'x'");
    }

    @Test
    void aBlankQueryOrNothingCloseEnoughRecallsNothingAndABlankQueryEmbedsNothing() {
        GatedEmbeddingModel model = new GatedEmbeddingModel(MINILM);
        InMemoryEmbeddingStore<TextSegment> store = new InMemoryEmbeddingStore<>();
        SemanticMemoryProvider provider = SemanticMemoryProvider.create(model, store);
        provider.syncTurn(turn("w:1", "s1", "My sister Maria lives in Lisbon.", "Lisbon is lovely."));

        assertThat(provider.prefetch("", "s1")).isEmpty();
        assertThat(provider.prefetch("   \n", "s1")).isEmpty();
        assertThat(model.queryThreads()).as("a blank query is not embedded").isEmpty();
        assertThat(provider.prefetch("How do I change a bicycle tyre?", "s1")).as("below the minimum score").isEmpty();
        assertThat(provider.prefetch(QUESTION, "s1")).contains("Lisbon");
    }

    @Test
    void aModelThatFailsTwiceIsTriedAgainWithinTheAttemptsAndTheTurnsAreStored() {
        GatedEmbeddingModel model = new GatedEmbeddingModel(MINILM);
        HeldEmbeddingStore store = new HeldEmbeddingStore();
        SemanticMemoryProvider provider = SemanticMemoryProvider.builder(model, store).retry(3, Duration.ZERO).build();
        model.failNext(2);

        provider.syncBatch(List.of(turn("w:1", "s1", "a", "1"), turn("w:2", "s1", "b", "2")));

        assertThat(model.batchSizes()).containsExactly(2, 2, 2);
        assertThat(provider.embeddingCalls()).isEqualTo(3);
        assertThat(store.calls()).extracting(HeldEmbeddingStore.Call::ids).containsExactly(
                List.of(SemanticMemoryProvider.segmentId("w:1"), SemanticMemoryProvider.segmentId("w:2")));
        assertThat(provider.embeddedTurns()).isEqualTo(2);
    }

    @Test
    void aModelThatAlwaysFailsFailsEachTurnOfTheBatchInTheManagersReport() throws Exception {
        GatedEmbeddingModel model = new GatedEmbeddingModel(MINILM);
        HeldEmbeddingStore store = new HeldEmbeddingStore();
        SemanticMemoryProvider provider = SemanticMemoryProvider.builder(model, store).retry(2, Duration.ZERO).build();
        model.failNext(Integer.MAX_VALUE);
        MemoryManager memory = manager("failing", provider);
        memory.syncAll("a", "1", "s1");
        memory.syncAll("b", "2", "s1");

        DrainReport report = memory.stop(WAIT);

        assertThat(report.failed()).as(report.toString()).isEqualTo(2);
        assertThat(report.failuresByProvider()).containsEntry(SemanticMemoryProvider.Builder.DEFAULT_NAME, 2L);
        assertThat(model.calls()).hasSizeGreaterThanOrEqualTo(2);
        assertThat(provider.embeddingCalls()).as("every attempt counted").isEqualTo(model.calls().size());
        assertThat(provider.embeddedTurns()).isZero();
        assertThat(store.calls()).isEmpty();
    }

    @Test
    void aModelThatReturnsTooFewEmbeddingsIsRefusedNamingBothCounts() {
        GatedEmbeddingModel model = new GatedEmbeddingModel(MINILM);
        model.returnOneTooFew();
        SemanticMemoryProvider provider = SemanticMemoryProvider.builder(model, new HeldEmbeddingStore())
                .retry(1, Duration.ZERO).build();

        assertThatThrownBy(() -> provider.syncBatch(List.of(turn("w:1", "s1", "a", "1"), turn("w:2", "s1", "b", "2"))))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("returned 1 embeddings for 2 turns");
    }

    @Test
    void theBuilderRefusesBadSettingsByName() {
        InMemoryEmbeddingStore<TextSegment> store = new InMemoryEmbeddingStore<>();
        assertThatThrownBy(() -> SemanticMemoryProvider.builder(null, store)).hasMessage("model");
        assertThatThrownBy(() -> SemanticMemoryProvider.builder(MINILM, null)).hasMessage("store");
        SemanticMemoryProvider.Builder b = SemanticMemoryProvider.builder(MINILM, store);
        assertThatThrownBy(() -> b.maxResults(0)).hasMessageContaining("maxResults");
        assertThatThrownBy(() -> b.minScore(1.5)).hasMessageContaining("minScore");
        assertThatThrownBy(() -> b.minScore(Double.NaN)).hasMessageContaining("minScore");
        assertThatThrownBy(() -> b.retry(0, Duration.ZERO)).hasMessageContaining("attempts");
        assertThatThrownBy(() -> b.retry(3, Duration.ofMinutes(1))).hasMessageContaining("backoff").hasMessageContaining("PT1M");
        assertThatThrownBy(() -> b.name(" ")).hasMessageContaining("name");
        assertThatThrownBy(() -> b.scope(null)).hasMessage("sessionToScope");
        assertThat(b.name("long-term").build().name()).isEqualTo("long-term");
        assertThat(SemanticMemoryProvider.create(MINILM, store).name()).isEqualTo("semantic-memory");
    }
}
