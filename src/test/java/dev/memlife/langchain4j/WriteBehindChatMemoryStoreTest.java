package dev.memlife.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.memory.ChatMemory;
import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.memlife.StoppedException;
import dev.memlife.WriteBehindFigures;
import dev.memlife.WriteBehindReport;
import dev.memlife.testing.ManualTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The write-behind store under a real LangChain4j {@link MessageWindowChatMemory}, over a store the
 * test holds and fails at will ({@link SlowChatMemoryStore}, itself over LangChain4j's {@code
 * InMemoryChatMemoryStore}).
 */
@Timeout(60)
class WriteBehindChatMemoryStoreTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final SlowChatMemoryStore slow = new SlowChatMemoryStore();
    private final List<WriteBehindChatMemoryStore> stores = new ArrayList<>();

    @AfterEach
    void letEverythingThroughAndClose() {
        slow.open();
        stores.forEach(WriteBehindChatMemoryStore::close);
    }

    private WriteBehindChatMemoryStore.Builder over(SlowChatMemoryStore store) {
        return WriteBehindChatMemoryStore.builder(store);
    }

    private WriteBehindChatMemoryStore track(WriteBehindChatMemoryStore store) {
        stores.add(store);
        return store;
    }

    private static ChatMemory window(Object id, WriteBehindChatMemoryStore store) {
        return MessageWindowChatMemory.builder().id(id).maxMessages(100).chatMemoryStore(store).build();
    }

    private static List<String> texts(ChatMemory memory) {
        return SlowChatMemoryStore.texts(memory.messages());
    }

    private static List<String> words(String... words) {
        return Arrays.asList(words);
    }

    @Test
    void tenAddsWhileTheStoreIsHeldCostOneMoreWrite() throws Exception {
        WriteBehindChatMemoryStore store = track(over(slow).name("coalesce").build());
        ChatMemory memory = window("c1", store);
        slow.hold();

        memory.add(UserMessage.from("m0"));
        assertThat(slow.awaitEntered(WAIT)).as("the writer is in the store with m0, held").isTrue();
        for (int i = 1; i <= 10; i++) {
            memory.add(i % 2 == 0 ? UserMessage.from("m" + i) : AiMessage.from("m" + i)); // returns at once
        }
        int whileHeld = slow.updates();
        slow.open();
        assertThat(store.flush(WAIT)).isTrue();

        System.out.println("coalescing: 10 adds of one conversation while the store was held cost "
                + (slow.updates() - whileHeld) + " write after the held one; " + store.figures());
        assertThat(whileHeld).isEqualTo(1);
        assertThat(slow.updates()).as("the held write and one for the ten adds").isEqualTo(2);
        List<String> all = IntStream.rangeClosed(0, 10).mapToObj(i -> "m" + i).collect(Collectors.toList());
        assertThat(slow.log()).containsExactly("update c1 [m0]", "update c1 " + all);
        assertThat(slow.stored("c1")).isEqualTo(all);
        WriteBehindFigures f = store.figures();
        assertThat(f.saves()).isEqualTo(11);
        assertThat(f.coalesced()).isEqualTo(9);
        assertThat(f.writtenSaves()).isEqualTo(2);
        assertThat(f.pending()).isZero();
        assertThat(f.saves() + f.deletes()).isEqualTo(f.coalesced() + f.writtenSaves() + f.writtenDeletes());
    }

    @Test
    void aChatMemoryReadsItsOwnWritesWhileTheStoreIsHeld() throws Exception {
        slow.updateMessages("other", List.of(UserMessage.from("stored before")));
        WriteBehindChatMemoryStore store = track(over(slow).build());
        ChatMemory memory = window("c1", store);
        slow.hold();

        memory.add(UserMessage.from("hi"));
        assertThat(slow.awaitEntered(WAIT)).isTrue();
        memory.add(AiMessage.from("hello"));
        memory.add(UserMessage.from("how are you?"));

        assertThat(texts(memory)).containsExactly("hi", "hello", "how are you?");
        assertThat(texts(window("c1", store))).as("a second chat memory of the same id")
                .containsExactly("hi", "hello", "how are you?");
        assertThat(slow.stored("c1")).as("nothing in the store yet").isEmpty();
        assertThat(SlowChatMemoryStore.texts(store.getMessages("other"))).as("an id with nothing waiting reads the store, unheld")
                .containsExactly("stored before");
        assertThat(store.figures().pending()).isEqualTo(1);

        slow.open();
        assertThat(store.flush(WAIT)).isTrue();
        assertThat(slow.stored("c1")).containsExactly("hi", "hello", "how are you?");
        assertThat(texts(memory)).containsExactly("hi", "hello", "how are you?");
    }

    @Test
    void aDeleteIsARealDeleteOrderedAfterTheSaveInFlightAndReplacingTheSavesWaiting() throws Exception {
        WriteBehindChatMemoryStore store = track(over(slow).build());
        ChatMemory memory = window("c1", store);
        slow.hold();

        memory.add(UserMessage.from("m0"));
        assertThat(slow.awaitEntered(WAIT)).as("m0's save is in flight, held").isTrue();
        memory.add(UserMessage.from("m1"));   // waits behind it
        memory.clear();                       // deleteMessages: replaces m1's save
        assertThat(memory.messages()).as("read-your-writes: the delete").isEmpty();

        slow.open();
        assertThat(store.flush(WAIT)).isTrue();

        assertThat(slow.log()).containsExactly("update c1 [m0]", "delete c1");
        assertThat(slow.deletes()).isEqualTo(1);
        assertThat(slow.stored("c1")).as("the final state is deleted").isEmpty();
        assertThat(memory.messages()).isEmpty();
        assertThat(store.figures().coalesced()).as("m1's save was never written").isEqualTo(1);
        assertThat(store.figures().writtenDeletes()).isEqualTo(1);
    }

    @Test
    void aSaveAfterADeleteIsWrittenAfterIt() throws Exception {
        slow.updateMessages("c1", List.of(UserMessage.from("old")));
        WriteBehindChatMemoryStore store = track(over(slow).build());
        ChatMemory memory = window("c1", store);
        slow.hold();

        memory.clear();
        assertThat(slow.awaitEntered(WAIT)).isTrue(); // the setup's own update, not held
        assertThat(slow.awaitEntered(WAIT)).as("the delete is in flight, held").isTrue();
        memory.add(UserMessage.from("new"));
        assertThat(texts(memory)).containsExactly("new");

        slow.open();
        assertThat(store.flush(WAIT)).isTrue();
        assertThat(slow.log()).containsExactly("update c1 [old]", "delete c1", "update c1 [new]");
        assertThat(slow.stored("c1")).containsExactly("new");
    }

    @Test
    void flushIsABarrierForWhatWasHandedOverBeforeItWithinItsTimeout() throws Exception {
        ManualTicker ticker = new ManualTicker();
        WriteBehindChatMemoryStore store = track(over(slow).ticker(ticker).build());
        assertThat(store.flush(Duration.ZERO)).as("idle: met at once").isTrue();
        slow.hold();
        store.updateMessages("c1", List.of(UserMessage.from("a")));
        assertThat(slow.awaitEntered(WAIT)).isTrue();

        CompletableFuture<Boolean> timedOut = CompletableFuture.supplyAsync(() -> store.flush(Duration.ofSeconds(5)));
        awaitAThreadWaitingIn("flush");
        ticker.advance(Duration.ofSeconds(6));
        assertThat(timedOut.get(WAIT.toSeconds(), TimeUnit.SECONDS)).as("the store is still held").isFalse();

        CompletableFuture<Boolean> barrier = CompletableFuture.supplyAsync(() -> store.flush(Duration.ofSeconds(5)));
        awaitAThreadWaitingIn("flush");
        store.updateMessages("c2", List.of(UserMessage.from("b")));   // after the barrier: not waited for
        slow.allow(1);                                                   // c1's write only
        assertThat(barrier.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(slow.stored("c1")).containsExactly("a");
        assertThat(slow.awaitEntered(WAIT)).as("c2's write is held now").isTrue();
        assertThat(slow.stored("c2")).isEmpty();
    }

    /** Where the write-behind's lifecycle runs: the decorator base and its engine. */
    private static final String ENGINE_PACKAGES = "dev.memlife.";

    /** Waits until a thread waits (between its slices) inside the write-behind store's {@code method}. */
    private static void awaitAThreadWaitingIn(String method) {
        await().atMost(WAIT).until(() -> Thread.getAllStackTraces().entrySet().stream()
                .anyMatch(e -> e.getKey().getState() == Thread.State.TIMED_WAITING
                        && Arrays.stream(e.getValue()).anyMatch(f -> f.getMethodName().equals(method)
                                && f.getClassName().startsWith(ENGINE_PACKAGES))));
    }

    @Test
    void shutdownDrainsWhatWaitsAndReportsEachMemoryIdWritten() throws Exception {
        WriteBehindChatMemoryStore store = track(over(slow).build());
        slow.hold();
        store.updateMessages("c1", List.of(UserMessage.from("a")));
        assertThat(slow.awaitEntered(WAIT)).isTrue();
        store.updateMessages("c2", List.of(UserMessage.from("b")));
        store.deleteMessages("c3");

        CompletableFuture<WriteBehindReport<Object>> shutdown = CompletableFuture.supplyAsync(() -> store.stop(WAIT));
        awaitAThreadWaitingIn("stop");
        assertThatThrownBy(() -> store.updateMessages("c4", List.of())).isInstanceOf(StoppedException.class);
        slow.open();
        WriteBehindReport<Object> report = shutdown.get(WAIT.toSeconds(), TimeUnit.SECONDS);

        assertThat(report.complete()).as(report.toString()).isTrue();
        assertThat(report.writtenIds()).containsExactly("c1", "c2", "c3");
        assertThat(report.failedIds()).isEmpty();
        assertThat(report.abandonedIds()).isEmpty();
        assertThat(report.stillRunningIds()).isEmpty();
        assertThat(slow.log()).containsExactly("update c1 [a]", "update c2 [b]", "delete c3");
        assertThat(report.figures().rejected()).isEqualTo(1);
        assertThat(report.figures().pending()).isZero();
        assertThat(report.budget()).isEqualTo(WAIT);
    }

    @Test
    void aStoreHungInAWriteDoesNotHoldShutdownPastItsDeadline() throws Exception {
        ManualTicker ticker = new ManualTicker();
        WriteBehindChatMemoryStore store = track(over(slow).name("hung").ticker(ticker)
                .closeTimeout(Duration.ofSeconds(5)).build());
        slow.hold(); // the write hangs, ignoring interrupts, until the test lets it through
        store.updateMessages("c1", List.of(UserMessage.from("a")));
        assertThat(slow.awaitEntered(WAIT)).isTrue();
        store.updateMessages("c2", List.of(UserMessage.from("b")));

        CompletableFuture<Void> close = CompletableFuture.runAsync(store::close);
        awaitAThreadWaitingIn("stop");
        ticker.advance(Duration.ofSeconds(6));
        close.get(WAIT.toSeconds(), TimeUnit.SECONDS); // returns, though the store still hangs
        WriteBehindReport<Object> report = store.stop(Duration.ZERO);   // a later call: the same state, at once

        assertThat(report.complete()).isFalse();
        assertThat(report.stillRunningIds()).containsExactly("c1");
        assertThat(report.abandonedIds()).containsExactly("c2");
        assertThat(report.unfinished()).as("the abandoned, then the one still running").containsExactly("c2", "c1");
        assertThat(report.writtenIds()).isEmpty();
        assertThat(SlowChatMemoryStore.texts(store.getMessages("c2"))).as("abandoned, still readable").containsExactly("b");
        assertThatThrownBy(() -> store.deleteMessages("c1")).isInstanceOf(RejectedExecutionException.class)
                .hasMessageContaining("deleteMessages of memory id c1 refused");

        slow.open();
        await().atMost(WAIT).until(() -> writerThreads("memlife-chat-writer-hung") == 0);
        assertThat(slow.log()).as("the write still running ended; nothing after the deadline started")
                .containsExactly("update c1 [a]");
        assertThat(slow.stored("c2")).isEmpty();
    }

    @Test
    void aFailedWriteIsKeptReadableAndTheNextSnapshotOfThatIdCarriesIt() throws Exception {
        WriteBehindChatMemoryStore store = track(over(slow).build());
        ChatMemory memory = window("c1", store);
        slow.failNext(1);

        memory.add(UserMessage.from("m0"));
        await().atMost(WAIT).until(() -> store.figures().failedWrites() == 1);
        assertThat(texts(memory)).as("kept, and read back").containsExactly("m0");
        assertThat(store.figures().pending()).isEqualTo(1);
        assertThat(slow.stored("c1")).isEmpty();

        memory.add(AiMessage.from("m1"));
        assertThat(store.flush(WAIT)).isTrue();
        assertThat(slow.stored("c1")).as("the later snapshot, with the failed one's message").containsExactly("m0", "m1");
        assertThat(store.figures().pending()).isZero();
    }

    @Test
    void aStoreThatKeepsFailingAMemoryIdFailsTheFlushAndIsInTheReportByMemoryId() throws Exception {
        WriteBehindChatMemoryStore store = track(over(slow).build());
        slow.failFor(id -> id.equals("bad"));
        store.updateMessages("bad", List.of(UserMessage.from("x")));
        store.updateMessages("good", List.of(UserMessage.from("y")));
        await().atMost(WAIT).until(() -> store.figures().failedWrites() == 1);

        assertThat(store.flush(WAIT)).as("tried again, refused again").isFalse();
        WriteBehindReport<Object> report = store.stop(WAIT);

        assertThat(report.complete()).isFalse();
        assertThat(report.failedIds()).containsOnlyKeys("bad");
        assertThat(report.failedIds().get("bad")).hasMessage("store down for memory id bad");
        assertThat(report.figures().failedWrites()).as("first try, the flush's, the shutdown's").isEqualTo(3);
        assertThat(slow.stored("good")).containsExactly("y");
        assertThat(SlowChatMemoryStore.texts(store.getMessages("bad"))).containsExactly("x");
        assertThat(report.toString()).contains("failedIds=[bad]");
    }

    @Test
    void theWriterIsANamedDaemonThreadThatRetiresWhenIdleAndComesBack() throws Exception {
        WriteBehindChatMemoryStore store = track(over(slow).name("keepalive").writerKeepAlive(Duration.ofMillis(20))
                .build());
        assertThat(writerThreads("memlife-chat-writer-keepalive")).as("no thread before the first update").isZero();
        slow.hold();
        store.updateMessages("c1", List.of(UserMessage.from("a")));
        assertThat(slow.awaitEntered(WAIT)).isTrue();
        Thread writer = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("memlife-chat-writer-keepalive")).findFirst().orElseThrow();
        assertThat(writer.isDaemon()).isTrue();

        slow.open();
        assertThat(store.flush(WAIT)).isTrue();
        await().atMost(WAIT).until(() -> !writer.isAlive());
        store.updateMessages("c1", List.of(UserMessage.from("a"), UserMessage.from("b")));
        assertThat(store.flush(WAIT)).isTrue();
        assertThat(slow.stored("c1")).containsExactly("a", "b");
    }

    private static long writerThreads(String name) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(name) && t.isAlive())
                .count();
    }

    @Test
    void badInputIsRefusedNamingTheParameter() {
        WriteBehindChatMemoryStore store = track(over(slow).build());
        List<ChatMessage> withNull = new ArrayList<>(List.of(UserMessage.from("a")));
        withNull.add(null);

        assertThatThrownBy(() -> WriteBehindChatMemoryStore.builder(null)).hasMessage("store");
        assertThatThrownBy(() -> over(slow).name(" ")).hasMessage("name must not be blank");
        assertThatThrownBy(() -> over(slow).closeTimeout(Duration.ofSeconds(-1)))
                .hasMessage("closeTimeout must not be negative, was PT-1S");
        assertThatThrownBy(() -> over(slow).writerKeepAlive(null)).hasMessage("writerKeepAlive");
        assertThatThrownBy(() -> store.getMessages(null)).hasMessage("memoryId");
        assertThatThrownBy(() -> store.updateMessages(null, List.of())).hasMessage("memoryId");
        assertThatThrownBy(() -> store.updateMessages("c1", null)).hasMessage("messages");
        assertThatThrownBy(() -> store.updateMessages("c1", withNull)).hasMessage("messages[1]");
        assertThatThrownBy(() -> store.deleteMessages(null)).hasMessage("memoryId");
        assertThatThrownBy(() -> store.flush(null)).hasMessage("timeout");
        assertThatThrownBy(() -> store.stop(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("budget must not be negative");
        assertThat(store.figures()).isEqualTo(new WriteBehindFigures(0, 0, 0, 0, 0, 0, 0, 0, java.time.Duration.ZERO, 0));
    }

    @Test
    void theListHandedOverIsCopiedAndTheListReadBackIsTheCallers() throws Exception {
        WriteBehindChatMemoryStore store = track(over(slow).build());
        slow.hold();
        List<ChatMessage> handed = new ArrayList<>(List.of(UserMessage.from("a")));
        store.updateMessages("c1", handed);
        handed.add(UserMessage.from("changed after"));
        store.getMessages("c1").add(UserMessage.from("changed by a reader"));

        assertThat(SlowChatMemoryStore.texts(store.getMessages("c1"))).containsExactly("a");
        slow.open();
        assertThat(store.flush(WAIT)).isTrue();
        assertThat(slow.stored("c1")).containsExactly("a");
    }
}
