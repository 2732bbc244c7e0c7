package dev.memlife.springai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.memlife.StoppedException;
import dev.memlife.WriteBehindReport;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.ai.document.Document;
import org.springframework.ai.vectorstore.filter.FilterExpressionBuilder;

/**
 * The write-behind vector store over a store the test holds and fails at will ({@link
 * HeldVectorStore}): what reaches the store, in which calls, on which thread, and what a stop
 * reports, by document id.
 */
@Timeout(60)
class WriteBehindVectorStoreTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final HeldVectorStore held = new HeldVectorStore(null);
    private final List<WriteBehindVectorStore> stores = new ArrayList<>();

    @AfterEach
    void letEverythingThroughAndClose() {
        held.open();
        stores.forEach(WriteBehindVectorStore::close);
    }

    private WriteBehindVectorStore track(WriteBehindVectorStore store) {
        stores.add(store);
        return store;
    }

    private static Document doc(String id) {
        return Document.builder().id(id).text("text of " + id).metadata("conversationId", "c1").build();
    }

    /** Adds {@code a} and waits until the writer is inside the held store with it. */
    private void holdTheWriterOn(WriteBehindVectorStore store, String id) throws InterruptedException {
        held.hold();
        store.add(List.of(doc(id)));
        assertThat(held.awaitEntered(WAIT)).as("the writer is in the store with " + id + ", held").isTrue();
    }

    @Test
    void addsReturnAtOnceAndWhatWaitsGoesToTheStoreInOneCallInOrder() throws Exception {
        WriteBehindVectorStore store = track(WriteBehindVectorStore.builder(held).name("batch").build());
        holdTheWriterOn(store, "a");

        List<String> later = List.of("b", "c", "d", "e", "f", "g", "h", "i", "j", "k");
        for (String id : later) {
            store.add(List.of(doc(id))); // returns while the store is held
        }
        held.open();
        assertThat(store.flush(WAIT)).isTrue();

        assertThat(held.calls()).extracting(HeldVectorStore.Call::ids)
                .containsExactly(List.of("a"), later);
        assertThat(held.calls()).allSatisfy(c -> assertThat(c.thread()).isEqualTo("memlife-vector-writer-batch"));
        assertThat(store.figures().saves()).isEqualTo(11);
        assertThat(store.figures().writtenSaves()).isEqualTo(11);
        assertThat(store.figures().pending()).isZero();
    }

    @Test
    void batchSizeBoundsEachCall() throws Exception {
        WriteBehindVectorStore store = track(WriteBehindVectorStore.builder(held).batchSize(4).build());
        holdTheWriterOn(store, "a");
        List<Document> ten = new ArrayList<>();
        for (String id : List.of("b", "c", "d", "e", "f", "g", "h", "i", "j", "k")) {
            ten.add(doc(id));
        }
        store.add(ten); // one call, ten documents

        held.open();
        assertThat(store.flush(WAIT)).isTrue();

        assertThat(held.calls()).extracting(HeldVectorStore.Call::ids).containsExactly(List.of("a"),
                List.of("b", "c", "d", "e"), List.of("f", "g", "h", "i"), List.of("j", "k"));
    }

    @Test
    void aDeleteReachesTheStoreAfterTheAddsBeforeItAndAWaitingAddItReplacesIsNeverWritten() throws Exception {
        WriteBehindVectorStore store = track(WriteBehindVectorStore.over(held));
        holdTheWriterOn(store, "a");
        store.add(List.of(doc("b"), doc("c")));
        store.delete(List.of("b", "a"));

        held.open();
        assertThat(store.flush(WAIT)).isTrue();

        // b's delete takes b's place in the queue (it waited first); a's comes after a's add in flight
        assertThat(held.calls()).extracting(c -> c.kind() + c.ids())
                .containsExactly("add[a]", "delete[b]", "add[c]", "delete[a]");
        assertThat(held.received()).extracting(Document::getId).doesNotContain("b");
        assertThat(store.figures().coalesced()).as("b's add, replaced by its delete").isEqualTo(1);
    }

    @Test
    void theSameIdTwiceInOneAddKeepsTheLaterDocument() throws Exception {
        WriteBehindVectorStore store = track(WriteBehindVectorStore.over(held));
        Document first = Document.builder().id("x").text("first").build();
        Document second = Document.builder().id("x").text("second").build();

        store.add(List.of(first, doc("y"), second));
        assertThat(store.flush(WAIT)).isTrue();

        assertThat(held.received()).extracting(Document::getId, Document::getText)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("y", "text of y"),
                        org.assertj.core.groups.Tuple.tuple("x", "second"));
    }

    @Test
    void aFailedBatchIsTriedAgainWithinItsAttemptsAndThenWritten() throws Exception {
        WriteBehindVectorStore store = track(WriteBehindVectorStore.builder(held).retryAttempts(3)
                .retryBackoff(Duration.ZERO).build());
        held.failNext(2);

        store.add(List.of(doc("a"), doc("b")));
        assertThat(store.flush(WAIT)).isTrue();

        assertThat(held.calls()).extracting(c -> c.kind() + c.ids())
                .containsExactly("add[a, b]", "add[a, b]", "add[a, b]");
        assertThat(held.received()).extracting(Document::getId).containsExactly("a", "b");
        assertThat(store.figures().failedWrites()).isZero();
    }

    @Test
    void aBatchThatFailsEveryAttemptIsCountedPerDocumentKeptAndReportedByIdAtTheStop() throws Exception {
        WriteBehindVectorStore store = track(WriteBehindVectorStore.builder(held).retryAttempts(2)
                .retryBackoff(Duration.ZERO).build());
        held.failNext(Integer.MAX_VALUE);

        store.add(List.of(doc("a"), doc("b"), doc("c")));

        assertThat(store.flush(WAIT)).as("the store refuses them").isFalse();
        // one batch of three failed after its two attempts, once or (if the flush came after the
        // first failure and queued it again) twice: counted per document, not per call
        assertThat(store.figures().failedWrites()).isIn(3L, 6L);
        assertThat(held.calls()).extracting(c -> c.kind() + c.ids()).containsOnly("add[a, b, c]").hasSizeBetween(2, 4);
        assertThat(store.figures().pending()).isEqualTo(3);
        WriteBehindReport<String> report = store.stop(WAIT);

        assertThat(report.complete()).isFalse();
        assertThat(report.failedIds().keySet()).containsExactlyInAnyOrder("a", "b", "c");
        assertThat(report.failedIds().values()).allSatisfy(t -> assertThat(t).hasMessageContaining("test: the vector store is down"));
        assertThat(report.writtenIds()).isEmpty();
        assertThat(report.unfinished()).containsExactlyInAnyOrder("a", "b", "c");
    }

    @Test
    void aStopDrainsWhatWaitsAndReportsEachDocumentIdWritten() throws Exception {
        WriteBehindVectorStore store = track(WriteBehindVectorStore.over(held));
        holdTheWriterOn(store, "a");
        store.add(List.of(doc("b"), doc("c")));

        CompletableFuture<WriteBehindReport<String>> stop = CompletableFuture.supplyAsync(() -> store.stop(WAIT));
        org.awaitility.Awaitility.await().atMost(WAIT).untilAsserted(() ->
                assertThatThrownBy(() -> store.add(List.of(doc("late")))).isInstanceOf(StoppedException.class));
        held.open();
        WriteBehindReport<String> report = stop.get(WAIT.toSeconds(), TimeUnit.SECONDS);

        assertThat(report.complete()).isTrue();
        assertThat(report.writtenIds()).containsExactly("a", "b", "c");
        assertThat(held.received()).extracting(Document::getId).containsExactly("a", "b", "c");
        assertThat(store.figures().rejected()).isGreaterThanOrEqualTo(1);
    }

    @Test
    void aStopWhoseBudgetIsSpentReportsTheBatchInFlightAsStillRunningAndTheRestAsAbandoned() throws Exception {
        WriteBehindVectorStore store = track(WriteBehindVectorStore.over(held));
        holdTheWriterOn(store, "a");
        store.add(List.of(doc("b"), doc("c")));

        WriteBehindReport<String> report = store.stop(Duration.ZERO);

        assertThat(report.complete()).isFalse();
        assertThat(report.stillRunningIds()).containsExactly("a");
        assertThat(report.abandonedIds()).containsExactly("b", "c");
        assertThat(report.writtenIds()).isEmpty();
    }

    @Test
    void aDeleteByFilterWaitsForTheAddsBeforeIt() throws Exception {
        WriteBehindVectorStore store = track(WriteBehindVectorStore.over(held));
        holdTheWriterOn(store, "a");

        CompletableFuture<Void> delete = CompletableFuture.runAsync(
                () -> store.delete(new FilterExpressionBuilder().eq("conversationId", "c1").build()));
        held.open();
        delete.get(WAIT.toSeconds(), TimeUnit.SECONDS);

        assertThat(held.calls()).extracting(HeldVectorStore.Call::kind).containsExactly("add", "deleteByFilter");
    }

    @Test
    void aDeleteByFilterThatCannotFlushInTimeDeletesNothing() throws Exception {
        WriteBehindVectorStore store = track(WriteBehindVectorStore.builder(held).closeTimeout(Duration.ZERO).build());
        holdTheWriterOn(store, "a");

        assertThatThrownBy(() -> store.delete(new FilterExpressionBuilder().eq("conversationId", "c1").build()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("nothing was deleted");
        held.open();
        assertThat(store.flush(WAIT)).isTrue();
        assertThat(held.calls()).extracting(HeldVectorStore.Call::kind).containsExactly("add");
    }

    @Test
    void badInputIsRefusedByNameAndNothingIsTaken() {
        WriteBehindVectorStore store = track(WriteBehindVectorStore.over(held));

        assertThatThrownBy(() -> WriteBehindVectorStore.builder(null)).hasMessage("store");
        assertThatThrownBy(() -> store.add(null)).hasMessage("documents");
        List<Document> withNull = new ArrayList<>(List.of(doc("a")));
        withNull.add(null);
        assertThatThrownBy(() -> store.add(withNull)).hasMessage("documents[1]");
        assertThatThrownBy(() -> store.delete((List<String>) null)).hasMessage("idList");
        assertThatThrownBy(() -> WriteBehindVectorStore.builder(held).batchSize(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("batchSize");
        assertThatThrownBy(() -> WriteBehindVectorStore.builder(held).retryAttempts(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retryAttempts");
        assertThatThrownBy(() -> WriteBehindVectorStore.builder(held).retryBackoff(Duration.ofMinutes(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retryBackoff").hasMessageContaining("PT1M");
        assertThat(store.figures().saves()).isZero();
        assertThat(held.calls()).isEmpty();
    }

    @Test
    void withASpoolWhatTheLastStoreDidNotWriteIsWrittenByTheNextOnTheSameDirectory(@TempDir Path dir) throws Exception {
        WriteBehindVectorStore first = track(WriteBehindVectorStore.builder(held).spool(dir).build());
        holdTheWriterOn(first, "a");
        Document b = Document.builder().id("b").text("my sister lives in Lisbon")
                .metadata(Map.of("conversationId", "c1", "turn", 2, "score", 0.5d, "final", true, "at", 17L)).build();
        first.add(List.of(b, doc("c")));
        first.delete(List.of("gone"));
        WriteBehindReport<String> cut = first.stop(Duration.ZERO); // as if the process died here
        assertThat(cut.abandonedIds()).containsExactly("b", "c", "gone");

        HeldVectorStore next = new HeldVectorStore(null);
        WriteBehindVectorStore second = track(WriteBehindVectorStore.builder(next).spool(dir).build());
        assertThat(second.flush(WAIT)).isTrue();

        assertThat(next.calls()).extracting(c -> c.kind() + c.ids()).containsExactly("add[a, b, c]", "delete[gone]");
        Document replayed = next.received().get(1);
        assertThat(replayed.getText()).isEqualTo("my sister lives in Lisbon");
        assertThat(replayed.getMetadata()).isEqualTo(b.getMetadata());
    }

    @Test
    void withASpoolADocumentItCannotKeepIsRefusedAndNothingIsTaken(@TempDir Path dir) {
        WriteBehindVectorStore store = track(WriteBehindVectorStore.builder(held).spool(dir).build());
        Document odd = Document.builder().id("odd").text("t").metadata("tags", List.of("x")).build();

        assertThatThrownBy(() -> store.add(List.of(doc("fine"), odd))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("odd").hasMessageContaining("'tags'");
        assertThat(store.flush(WAIT)).isTrue();
        assertThat(held.calls()).as("not even the fine one: all or none").isEmpty();
        assertThat(store.figures().saves()).isZero();
        assertThat(store.figures().rejected()).isEqualTo(2);
    }
}
