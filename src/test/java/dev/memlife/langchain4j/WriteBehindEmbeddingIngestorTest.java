package dev.memlife.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.langchain4j.data.document.Metadata;
import dev.langchain4j.data.embedding.Embedding;
import dev.langchain4j.data.segment.TextSegment;
import dev.langchain4j.model.embedding.EmbeddingModel;
import dev.langchain4j.model.embedding.onnx.allminilml6v2.AllMiniLmL6V2EmbeddingModel;
import dev.langchain4j.store.embedding.EmbeddingMatch;
import dev.langchain4j.store.embedding.EmbeddingSearchRequest;
import dev.langchain4j.store.embedding.inmemory.InMemoryEmbeddingStore;
import dev.memlife.StoppedException;
import dev.memlife.WriteBehindReport;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The write-behind embedding ingestor over the real all-MiniLM-L6-v2 model, which the test holds and
 * fails at will ({@link GatedEmbeddingModel}), and a real in-memory store it can hold ({@link
 * HeldEmbeddingStore}): where embedding runs, in which calls, in which order segments reach the
 * store, and what a stop reports, by segment id.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class WriteBehindEmbeddingIngestorTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final EmbeddingModel MINILM = new AllMiniLmL6V2EmbeddingModel();

    @TempDir
    Path dir;

    private final GatedEmbeddingModel model = new GatedEmbeddingModel(MINILM);
    private final HeldEmbeddingStore store = new HeldEmbeddingStore();
    private final List<WriteBehindEmbeddingIngestor> ingestors = new ArrayList<>();

    @AfterEach
    void letEverythingThroughAndClose() {
        model.open();
        store.open();
        ingestors.forEach(WriteBehindEmbeddingIngestor::close);
    }

    private WriteBehindEmbeddingIngestor track(WriteBehindEmbeddingIngestor ingestor) {
        ingestors.add(ingestor);
        return ingestor;
    }

    private static TextSegment segment(String text) {
        return TextSegment.from(text, Metadata.from("conversation", "c1"));
    }

    private static List<TextSegment> segments(String... texts) {
        return Arrays.stream(texts).map(WriteBehindEmbeddingIngestorTest::segment).toList();
    }

    /** Holds the model, adds {@code text} and waits until the writer is inside the model with it. */
    private String holdTheWriterOn(WriteBehindEmbeddingIngestor ingestor, String text) throws InterruptedException {
        model.hold();
        String id = ingestor.add(segment(text));
        assertThat(model.awaitEntered(WAIT)).as("the writer is in the model with '" + text + "', held").isTrue();
        return id;
    }

    private static Embedding query(String text) {
        return MINILM.embed(text).content();
    }

    @Test
    void addsReturnBeforeAnyEmbeddingAndOnlyTheWriterEmbedsWhatWaitedInOneCallInOrder() throws Exception {
        WriteBehindEmbeddingIngestor ingestor = track(WriteBehindEmbeddingIngestor.builder(model, store)
                .name("facts").build());
        String first = holdTheWriterOn(ingestor, "the first fact");

        List<String> texts = List.of("Maria lives in Lisbon", "Maria is a marine biologist", "Paulo likes football",
                "the risotto needs warm stock", "the dentist is on Tuesday", "the car is blue");
        List<String> ids = new ArrayList<>();
        for (String t : texts) {
            ids.add(ingestor.add(segment(t))); // returns while the model is held
        }
        assertThat(model.calls()).as("nothing embedded yet: the model is held").isEmpty();
        assertThat(store.calls()).isEmpty();
        assertThat(ingestor.figures().pending()).isEqualTo(7);

        model.open();
        assertThat(ingestor.flush(WAIT)).isTrue();

        assertThat(model.batchSizes()).as("what waited behind the held call is embedded in one call")
                .containsExactly(1, 6);
        assertThat(model.calls().get(1).texts()).containsExactlyElementsOf(texts);
        assertThat(model.calls()).extracting(GatedEmbeddingModel.Call::thread)
                .containsOnly("memlife-embedding-writer-facts")
                .doesNotContain(Thread.currentThread().getName());
        assertThat(store.calls()).extracting(HeldEmbeddingStore.Call::ids)
                .as("one addAll per batch, in the order added").containsExactly(List.of(first), ids);
        assertThat(store.calls()).extracting(HeldEmbeddingStore.Call::texts).element(1).isEqualTo(texts);
        assertThat(ids).allSatisfy(id -> assertThat(UUID.fromString(id)).isNotNull()).doesNotHaveDuplicates();
        assertThat(ingestor.figures().writtenSaves()).isEqualTo(7);
        assertThat(ingestor.figures().pending()).isZero();
    }

    @Test
    void batchSizeBoundsEachEmbeddingCall() throws Exception {
        WriteBehindEmbeddingIngestor ingestor = track(WriteBehindEmbeddingIngestor.builder(model, store).batchSize(4)
                .build());
        String a = holdTheWriterOn(ingestor, "a");
        List<String> ten = ingestor.addAll(segments("b", "c", "d", "e", "f", "g", "h", "i", "j", "k"));

        model.open();
        assertThat(ingestor.flush(WAIT)).isTrue();

        assertThat(model.batchSizes()).containsExactly(1, 4, 4, 2);
        assertThat(model.calls()).extracting(GatedEmbeddingModel.Call::texts).containsExactly(List.of("a"),
                List.of("b", "c", "d", "e"), List.of("f", "g", "h", "i"), List.of("j", "k"));
        List<String> all = new ArrayList<>(List.of(a));
        all.addAll(ten);
        assertThat(store.addedIds()).as("the store gets them in the order added").containsExactlyElementsOf(all);
    }

    @Test
    void flushIsABarrierAfterWhichSearchFindsWhatWasAdded() throws Exception {
        WriteBehindEmbeddingIngestor ingestor = track(WriteBehindEmbeddingIngestor.over(model, store));
        String held = holdTheWriterOn(ingestor, "The train to Porto leaves at nine.");
        String lisbon = ingestor.add(segment("My sister Maria lives in Lisbon."));

        CompletableFuture<Boolean> flush = CompletableFuture.supplyAsync(() -> ingestor.flush(WAIT));
        assertThat(ingestor.search(EmbeddingSearchRequest.builder().queryEmbedding(query("Where does Maria live?"))
                .build()).matches()).as("recall lags the writes: nothing written yet").isEmpty();
        assertThat(flush).as("the model is held: the flush cannot be met").isNotDone();

        model.open();
        assertThat(flush.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();

        List<EmbeddingMatch<TextSegment>> found = ingestor.search(EmbeddingSearchRequest.builder()
                .queryEmbedding(query("Which city does my sibling live in?")).maxResults(1).build()).matches();
        assertThat(found).extracting(EmbeddingMatch::embeddingId).containsExactly(lisbon);
        assertThat(found.get(0).embedded().text()).isEqualTo("My sister Maria lives in Lisbon.");
        assertThat(store.addedIds()).containsExactly(held, lisbon);
        assertThat(model.calls()).extracting(GatedEmbeddingModel.Call::thread)
                .containsOnly("memlife-embedding-writer-embedding-store");
        assertThat(model.queryThreads()).as("search embeds nothing: the caller brings its query's embedding")
                .isEmpty();
    }

    @Test
    void anAddUnderAGivenIdAndRemovalsReachTheStoreInOrderAndAWaitingAddARemovalReplacesIsNeverEmbedded()
            throws Exception {
        WriteBehindEmbeddingIngestor ingestor = track(WriteBehindEmbeddingIngestor.over(model, store));
        String x = holdTheWriterOn(ingestor, "x");
        ingestor.add("doc-1#0", segment("the first chunk of doc-1"));
        ingestor.add("doc-2#0", segment("never embedded"));
        ingestor.removeAll(List.of("doc-2#0", x));

        model.open();
        assertThat(ingestor.flush(WAIT)).isTrue();

        // doc-2#0's removal takes its add's place in the queue (it waited first); x's comes after x's
        // add, which was in flight; the two removals go in one call
        assertThat(store.calls()).extracting(c -> c.kind() + c.ids())
                .containsExactly("add[" + x + "]", "add[doc-1#0]", "remove[doc-2#0, " + x + "]");
        assertThat(model.calls()).flatExtracting(GatedEmbeddingModel.Call::texts).doesNotContain("never embedded");
        assertThat(ingestor.figures().coalesced()).as("doc-2#0's add, replaced by its removal").isEqualTo(1);

        ingestor.remove("doc-1#0");
        assertThat(ingestor.flush(WAIT)).isTrue();
        assertThat(store.size()).isZero();
    }

    @Test
    void aStopDrainsWhatWaitsAndReportsEachSegmentIdWritten() throws Exception {
        WriteBehindEmbeddingIngestor ingestor = track(WriteBehindEmbeddingIngestor.over(model, store));
        String a = holdTheWriterOn(ingestor, "a");
        List<String> bc = ingestor.addAll(segments("b", "c"));

        CompletableFuture<WriteBehindReport<String>> stop = CompletableFuture.supplyAsync(() -> ingestor.stop(WAIT));
        Awaitility.await().atMost(WAIT).untilAsserted(() -> assertThatThrownBy(() -> ingestor.add(segment("late")))
                .isInstanceOf(StoppedException.class));
        model.open();
        WriteBehindReport<String> report = stop.get(WAIT.toSeconds(), TimeUnit.SECONDS);

        assertThat(report.complete()).as(report.toString()).isTrue();
        assertThat(report.writtenIds()).containsExactly(a, bc.get(0), bc.get(1));
        assertThat(store.addedIds()).containsExactly(a, bc.get(0), bc.get(1));
        assertThat(model.calls()).flatExtracting(GatedEmbeddingModel.Call::texts).doesNotContain("late");
        assertThat(ingestor.figures().rejected()).isGreaterThanOrEqualTo(1);
    }

    @Test
    void aStopWhoseBudgetIsSpentReportsTheBatchInFlightAsStillRunningAndTheRestAsAbandoned() throws Exception {
        WriteBehindEmbeddingIngestor ingestor = track(WriteBehindEmbeddingIngestor.over(model, store));
        String a = holdTheWriterOn(ingestor, "a");
        List<String> bc = ingestor.addAll(segments("b", "c"));

        WriteBehindReport<String> report = ingestor.stop(Duration.ZERO);

        assertThat(report.complete()).isFalse();
        assertThat(report.stillRunningIds()).containsExactly(a);
        assertThat(report.abandonedIds()).containsExactlyElementsOf(bc);
        assertThat(report.writtenIds()).isEmpty();
        assertThat(report.failedIds()).isEmpty();
    }

    @Test
    void aModelThatFailsTwiceIsTriedAgainWithinTheAttemptsAndTheBatchIsWritten() throws Exception {
        WriteBehindEmbeddingIngestor ingestor = track(WriteBehindEmbeddingIngestor.builder(model, store)
                .retryAttempts(3).retryBackoff(Duration.ZERO).build());
        model.failNext(2);

        List<String> ids = ingestor.addAll(segments("a", "b"));
        assertThat(ingestor.flush(WAIT)).isTrue();

        assertThat(model.calls()).extracting(GatedEmbeddingModel.Call::texts)
                .containsExactly(List.of("a", "b"), List.of("a", "b"), List.of("a", "b"));
        assertThat(store.calls()).extracting(HeldEmbeddingStore.Call::ids).containsExactly(ids);
        assertThat(ingestor.figures().failedWrites()).isZero();
        assertThat(ingestor.figures().writtenSaves()).isEqualTo(2);
    }

    @Test
    void aModelThatAlwaysFailsLeavesTheSegmentsCountedPerIdKeptAndReportedByIdAtTheStop() throws Exception {
        WriteBehindEmbeddingIngestor ingestor = track(WriteBehindEmbeddingIngestor.builder(model, store)
                .retryAttempts(2).retryBackoff(Duration.ZERO).build());
        model.failNext(Integer.MAX_VALUE);
        model.hold();
        List<String> ab = ingestor.addAll(segments("a", "b"));
        assertThat(model.awaitEntered(WAIT)).isTrue();
        String c = ingestor.add(segment("c")); // waits behind [a, b]: its own batch
        model.open();

        Awaitility.await().atMost(WAIT).untilAsserted(() -> assertThat(ingestor.figures().failedWrites())
                .as("counted per segment id: 2 of [a, b], 1 of [c]").isEqualTo(3));
        assertThat(model.calls()).extracting(GatedEmbeddingModel.Call::texts).as("two attempts of each batch")
                .containsExactly(List.of("a", "b"), List.of("a", "b"), List.of("c"), List.of("c"));
        assertThat(ingestor.figures().pending()).as("kept").isEqualTo(3);
        assertThat(ingestor.flush(WAIT)).as("the model refuses them again").isFalse();

        WriteBehindReport<String> report = ingestor.stop(WAIT);

        assertThat(report.complete()).isFalse();
        assertThat(report.failedIds().keySet()).containsExactly(ab.get(0), ab.get(1), c);
        assertThat(report.failedIds().values())
                .allSatisfy(t -> assertThat(t).hasMessageContaining("test: the embedding model is down"));
        assertThat(report.writtenIds()).isEmpty();
        assertThat(report.abandonedIds()).isEmpty();
        assertThat(report.unfinished()).containsExactly(ab.get(0), ab.get(1), c);
        assertThat(store.calls()).as("nothing reached the store").isEmpty();
    }

    @Test
    void aModelThatReturnsTooFewEmbeddingsFailsTheBatchNamingBothCounts() throws Exception {
        WriteBehindEmbeddingIngestor ingestor = track(WriteBehindEmbeddingIngestor.builder(model, store)
                .retryAttempts(1).build());
        model.returnOneTooFew();

        List<String> ids = ingestor.addAll(segments("a", "b"));
        assertThat(ingestor.flush(WAIT)).isFalse();
        WriteBehindReport<String> report = ingestor.stop(WAIT);

        assertThat(report.failedIds().keySet()).containsExactlyElementsOf(ids);
        assertThat(report.failedIds().get(ids.get(0))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("returned 1 embeddings for 2 segments");
        assertThat(store.calls()).isEmpty();
    }

    @Test
    void whatAStopLeftInTheSpoolIsEmbeddedAndWrittenByTheNextIngestorUnderTheSameIds() throws Exception {
        store.hold();
        WriteBehindEmbeddingIngestor first = WriteBehindEmbeddingIngestor.builder(model, store).spool(dir).build();
        String a = first.add(segment("My sister Maria lives in Lisbon."));
        assertThat(store.awaitEntered(WAIT)).as("the writer is in the held store with a").isTrue();
        UUID docId = UUID.randomUUID();
        Metadata typed = new Metadata().put("source", "notes.md").put("doc", docId).put("chunk", 3)
                .put("offset", 12_345_678_901L).put("weight", 0.5f).put("score", 0.25);
        first.add("notes#3", TextSegment.from("Paulo supports Benfica.", typed));
        List<String> more = first.addAll(segments("The dentist is on Tuesday.", "Never written."));
        first.remove(more.get(1));
        WriteBehindReport<String> ended = first.stop(Duration.ZERO);
        assertThat(ended.complete()).as("the store wrote none of it").isFalse();
        assertThat(ended.stillRunningIds()).containsExactly(a);
        store.open(); // the first writer's detached call ends in the held store, not in the fresh one

        InMemoryEmbeddingStore<TextSegment> fresh = new InMemoryEmbeddingStore<>();
        GatedEmbeddingModel nextModel = new GatedEmbeddingModel(MINILM);
        WriteBehindEmbeddingIngestor next = track(WriteBehindEmbeddingIngestor.builder(nextModel, fresh).spool(dir)
                .name("next").build());
        assertThat(next.flush(WAIT)).isTrue();

        Map<String, TextSegment> written = HeldEmbeddingStore.contents(fresh, query("anything"));
        assertThat(written.keySet()).containsExactlyInAnyOrder(a, "notes#3", more.get(0));
        assertThat(written.get(a).text()).isEqualTo("My sister Maria lives in Lisbon.");
        assertThat(written.get(a).metadata().getString("conversation")).isEqualTo("c1");
        assertThat(written.get(more.get(0)).text()).isEqualTo("The dentist is on Tuesday.");
        TextSegment notes = written.get("notes#3");
        assertThat(notes.text()).isEqualTo("Paulo supports Benfica.");
        assertThat(notes.metadata().toMap()).as("every metadata type kept with its type").isEqualTo(typed.toMap());
        assertThat(nextModel.calls()).extracting(GatedEmbeddingModel.Call::thread)
                .containsOnly("memlife-embedding-writer-next");
        assertThat(nextModel.calls()).flatExtracting(GatedEmbeddingModel.Call::texts).doesNotContain("Never written.");

        List<EmbeddingMatch<TextSegment>> found = fresh.search(EmbeddingSearchRequest.builder()
                .queryEmbedding(query("Which city does my sibling live in?")).maxResults(1).build()).matches();
        assertThat(found).extracting(EmbeddingMatch::embeddingId).as("embedded for real after the restart")
                .containsExactly(a);
        assertThat(next.stop(WAIT).complete()).isTrue();

        WriteBehindEmbeddingIngestor third = track(WriteBehindEmbeddingIngestor.builder(model,
                new InMemoryEmbeddingStore<>()).spool(dir).build());
        assertThat(third.figures().pending()).as("a complete stop leaves nothing to replay").isZero();
    }

    @Test
    void nullArgumentsAreRefusedByName() {
        WriteBehindEmbeddingIngestor ingestor = track(WriteBehindEmbeddingIngestor.over(model, store));
        List<TextSegment> withNull = new ArrayList<>(segments("a"));
        withNull.add(null);
        List<String> idsWithNull = new ArrayList<>(List.of("a"));
        idsWithNull.add(null);

        assertThatThrownBy(() -> ingestor.add(null)).hasMessage("segment");
        assertThatThrownBy(() -> ingestor.addAll(withNull)).hasMessage("segments[1]");
        assertThatThrownBy(() -> ingestor.add(null, segment("a"))).hasMessage("id");
        assertThatThrownBy(() -> ingestor.removeAll(idsWithNull)).hasMessage("ids[1]");
        assertThatThrownBy(() -> ingestor.remove(null)).hasMessage("id");
        assertThatThrownBy(() -> ingestor.search(null)).hasMessage("request");
        assertThatThrownBy(() -> WriteBehindEmbeddingIngestor.over(null, store)).hasMessage("model");
        assertThatThrownBy(() -> WriteBehindEmbeddingIngestor.over(model, null)).hasMessage("store");
        assertThat(ingestor.figures().saves()).as("nothing was taken").isZero();
        assertThat(ingestor.toString()).startsWith("WriteBehindEmbeddingIngestor[embedding-store over ");
    }
}
