package dev.memlife.springai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

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
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.memory.MessageWindowChatMemory;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.UserMessage;

/**
 * The write-behind repository under a real Spring AI {@link MessageWindowChatMemory}, over a
 * repository the test holds and fails at will ({@link SlowChatMemoryRepository}, itself over
 * Spring AI's {@code InMemoryChatMemoryRepository}).
 */
@Timeout(60)
class WriteBehindChatMemoryRepositoryTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final SlowChatMemoryRepository slow = new SlowChatMemoryRepository();
    private final List<WriteBehindChatMemoryRepository> repositories = new ArrayList<>();

    @AfterEach
    void letEverythingThroughAndClose() {
        slow.open();
        repositories.forEach(WriteBehindChatMemoryRepository::close);
    }

    private WriteBehindChatMemoryRepository.Builder over(SlowChatMemoryRepository repository) {
        return WriteBehindChatMemoryRepository.builder(repository);
    }

    private WriteBehindChatMemoryRepository track(WriteBehindChatMemoryRepository repository) {
        repositories.add(repository);
        return repository;
    }

    private static ChatMemory window(WriteBehindChatMemoryRepository repository) {
        return MessageWindowChatMemory.builder().chatMemoryRepository(repository).maxMessages(100).build();
    }

    private static List<String> texts(List<Message> messages) {
        return SlowChatMemoryRepository.texts(messages);
    }

    @Test
    void tenAddsWhileTheRepositoryIsHeldCostOneMoreSaveAll() throws Exception {
        WriteBehindChatMemoryRepository repository = track(over(slow).name("coalesce").build());
        ChatMemory memory = window(repository);
        slow.hold();

        memory.add("c1", new UserMessage("m0"));
        assertThat(slow.awaitEntered(WAIT)).as("the writer is in the repository with m0, held").isTrue();
        for (int i = 1; i <= 10; i++) {
            memory.add("c1", i % 2 == 0 ? new UserMessage("m" + i) : new AssistantMessage("m" + i)); // returns at once
        }
        int whileHeld = slow.saves();
        slow.open();
        assertThat(repository.flush(WAIT)).isTrue();

        System.out.println("coalescing: 10 adds of one conversation while the repository was held cost "
                + (slow.saves() - whileHeld) + " saveAll after the held one; " + repository.figures());
        assertThat(whileHeld).isEqualTo(1);
        assertThat(slow.saves()).as("the held saveAll and one for the ten adds").isEqualTo(2);
        List<String> all = IntStream.rangeClosed(0, 10).mapToObj(i -> "m" + i).collect(Collectors.toList());
        assertThat(slow.log()).containsExactly("save c1 [m0]", "save c1 " + all);
        assertThat(slow.stored("c1")).isEqualTo(all);
        WriteBehindFigures f = repository.figures();
        assertThat(f.saves()).isEqualTo(11);
        assertThat(f.coalesced()).isEqualTo(9);
        assertThat(f.writtenSaves()).isEqualTo(2);
        assertThat(f.pending()).isZero();
        assertThat(f.saves() + f.deletes()).isEqualTo(f.coalesced() + f.writtenSaves() + f.writtenDeletes());
    }

    @Test
    void aChatMemoryReadsItsOwnWritesWhileTheRepositoryIsHeld() throws Exception {
        slow.saveAll("other", List.of(new UserMessage("stored before")));
        WriteBehindChatMemoryRepository repository = track(over(slow).build());
        ChatMemory memory = window(repository);
        slow.hold();

        memory.add("c1", new UserMessage("hi"));
        assertThat(slow.awaitEntered(WAIT)).as("the setup's own save").isTrue();
        assertThat(slow.awaitEntered(WAIT)).as("c1's save, held").isTrue();
        memory.add("c1", new AssistantMessage("hello"));
        memory.add("c1", new UserMessage("how are you?"));

        assertThat(texts(memory.get("c1"))).containsExactly("hi", "hello", "how are you?");
        assertThat(texts(window(repository).get("c1"))).as("a second chat memory over the same repository")
                .containsExactly("hi", "hello", "how are you?");
        assertThat(slow.stored("c1")).as("nothing in the repository yet").isEmpty();
        assertThat(texts(repository.findByConversationId("other")))
                .as("a conversation with nothing waiting reads the repository, unheld").containsExactly("stored before");
        assertThat(repository.figures().pending()).isEqualTo(1);

        slow.open();
        assertThat(repository.flush(WAIT)).isTrue();
        assertThat(slow.stored("c1")).containsExactly("hi", "hello", "how are you?");
        assertThat(texts(memory.get("c1"))).containsExactly("hi", "hello", "how are you?");
    }

    @Test
    void aStateHandedOverWhileAnotherIsWrittenIsReadBackUntilItIsWrittenToo() throws Exception {
        WriteBehindChatMemoryRepository repository = track(over(slow).build());
        ChatMemory memory = window(repository);
        slow.hold();

        memory.add("c1", new UserMessage("a"));
        assertThat(slow.awaitEntered(WAIT)).as("[a] in flight, held").isTrue();
        memory.add("c1", new UserMessage("b"));            // handed over while [a] is written
        slow.allow(1);                                     // [a] returns; the writer takes [a, b], held
        assertThat(slow.awaitEntered(WAIT)).as("[a, b] in flight, held").isTrue();

        assertThat(slow.stored("c1")).containsExactly("a");
        assertThat(texts(memory.get("c1"))).as("the newer state, not the repository's older one").containsExactly("a", "b");
        assertThat(repository.figures().pending()).isEqualTo(1);
        slow.open();
        assertThat(repository.flush(WAIT)).isTrue();
        assertThat(slow.stored("c1")).containsExactly("a", "b");
        assertThat(repository.figures().pending()).isZero();
    }

    @Test
    void findConversationIdsIncludesPendingSavesAndExcludesPendingDeletes() throws Exception {
        slow.saveAll("stored", List.of(new UserMessage("a")));
        slow.saveAll("doomed", List.of(new UserMessage("b")));
        WriteBehindChatMemoryRepository repository = track(over(slow).build());
        ChatMemory memory = window(repository);
        slow.hold();

        memory.add("first", new UserMessage("x"));
        assertThat(slow.awaitEntered(WAIT)).isTrue();
        assertThat(slow.awaitEntered(WAIT)).isTrue();
        assertThat(slow.awaitEntered(WAIT)).as("first's save is in flight, held").isTrue();
        memory.add("second", new UserMessage("y"));   // waits behind it
        memory.clear("doomed");                         // a delete waits
        memory.add("gone", new UserMessage("z"));
        memory.clear("gone");                           // a save replaced by a delete: never in the repository

        assertThat(slow.storedIds()).containsExactlyInAnyOrder("stored", "doomed");
        assertThat(repository.findConversationIds())
                .as("the repository's, plus those with a save waiting or in flight, minus those with a delete waiting")
                .containsExactlyInAnyOrder("stored", "first", "second");
        assertThat(memory.get("doomed")).isEmpty();

        slow.open();
        assertThat(repository.flush(WAIT)).isTrue();
        assertThat(slow.storedIds()).containsExactlyInAnyOrder("stored", "first", "second");
        assertThat(repository.findConversationIds()).containsExactlyInAnyOrder("stored", "first", "second");
        assertThat(slow.log()).containsExactly("save stored [a]", "save doomed [b]", "save first [x]",
                "save second [y]", "delete doomed", "delete gone");
    }

    @Test
    void aDeleteIsARealDeleteOrderedAfterTheSaveInFlightAndReplacingTheSavesWaiting() throws Exception {
        WriteBehindChatMemoryRepository repository = track(over(slow).build());
        ChatMemory memory = window(repository);
        slow.hold();

        memory.add("c1", new UserMessage("m0"));
        assertThat(slow.awaitEntered(WAIT)).as("m0's save is in flight, held").isTrue();
        memory.add("c1", new UserMessage("m1"));   // waits behind it
        memory.clear("c1");                        // deleteByConversationId: replaces m1's save
        assertThat(memory.get("c1")).as("read-your-writes: the delete").isEmpty();

        slow.open();
        assertThat(repository.flush(WAIT)).isTrue();

        assertThat(slow.log()).containsExactly("save c1 [m0]", "delete c1");
        assertThat(slow.deletes()).isEqualTo(1);
        assertThat(slow.stored("c1")).as("the final state is deleted").isEmpty();
        assertThat(slow.storedIds()).doesNotContain("c1");
        assertThat(memory.get("c1")).isEmpty();
        assertThat(repository.figures().coalesced()).as("m1's save was never written").isEqualTo(1);
        assertThat(repository.figures().writtenDeletes()).isEqualTo(1);
    }

    @Test
    void aSaveAfterADeleteIsWrittenAfterIt() throws Exception {
        slow.saveAll("c1", List.of(new UserMessage("old")));
        WriteBehindChatMemoryRepository repository = track(over(slow).build());
        ChatMemory memory = window(repository);
        slow.hold();

        memory.clear("c1");
        assertThat(slow.awaitEntered(WAIT)).isTrue(); // the setup's own save, not held
        assertThat(slow.awaitEntered(WAIT)).as("the delete is in flight, held").isTrue();
        memory.add("c1", new UserMessage("new"));
        assertThat(texts(memory.get("c1"))).containsExactly("new");
        assertThat(repository.findConversationIds()).containsExactly("c1");

        slow.open();
        assertThat(repository.flush(WAIT)).isTrue();
        assertThat(slow.log()).containsExactly("save c1 [old]", "delete c1", "save c1 [new]");
        assertThat(slow.stored("c1")).containsExactly("new");
    }

    @Test
    void flushIsABarrierForWhatWasHandedOverBeforeItWithinItsTimeout() throws Exception {
        ManualTicker ticker = new ManualTicker();
        WriteBehindChatMemoryRepository repository = track(over(slow).ticker(ticker).build());
        assertThat(repository.flush(Duration.ZERO)).as("idle: met at once").isTrue();
        slow.hold();
        repository.saveAll("c1", List.of(new UserMessage("a")));
        assertThat(slow.awaitEntered(WAIT)).isTrue();

        CompletableFuture<Boolean> timedOut = CompletableFuture.supplyAsync(() -> repository.flush(Duration.ofSeconds(5)));
        awaitAThreadWaitingIn("flush");
        ticker.advance(Duration.ofSeconds(6));
        assertThat(timedOut.get(WAIT.toSeconds(), TimeUnit.SECONDS)).as("the repository is still held").isFalse();

        CompletableFuture<Boolean> barrier = CompletableFuture.supplyAsync(() -> repository.flush(Duration.ofSeconds(5)));
        awaitAThreadWaitingIn("flush");
        repository.saveAll("c2", List.of(new UserMessage("b")));   // after the barrier: not waited for
        slow.allow(1);                                              // c1's write only
        assertThat(barrier.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(slow.stored("c1")).containsExactly("a");
        assertThat(slow.awaitEntered(WAIT)).as("c2's write is held now").isTrue();
        assertThat(slow.stored("c2")).isEmpty();
    }

    /** Where the write-behind's lifecycle runs: the decorator base and its engine. */
    private static final String ENGINE_PACKAGES = "dev.memlife.";

    /** Waits until a thread waits (between its slices) inside the write-behind repository's {@code method}. */
    private static void awaitAThreadWaitingIn(String method) {
        await().atMost(WAIT).until(() -> Thread.getAllStackTraces().entrySet().stream()
                .anyMatch(e -> e.getKey().getState() == Thread.State.TIMED_WAITING
                        && Arrays.stream(e.getValue()).anyMatch(f -> f.getMethodName().equals(method)
                                && f.getClassName().startsWith(ENGINE_PACKAGES))));
    }

    @Test
    void shutdownDrainsWhatWaitsAndReportsEachConversationWritten() throws Exception {
        WriteBehindChatMemoryRepository repository = track(over(slow).build());
        slow.hold();
        repository.saveAll("c1", List.of(new UserMessage("a")));
        assertThat(slow.awaitEntered(WAIT)).isTrue();
        repository.saveAll("c2", List.of(new UserMessage("b")));
        repository.deleteByConversationId("c3");

        CompletableFuture<WriteBehindReport<String>> shutdown = CompletableFuture.supplyAsync(() -> repository.stop(WAIT));
        awaitAThreadWaitingIn("stop");
        assertThatThrownBy(() -> repository.saveAll("c4", List.of())).isInstanceOf(StoppedException.class)
                .hasMessageContaining("saveAll of conversation id c4");
        slow.open();
        WriteBehindReport<String> report = shutdown.get(WAIT.toSeconds(), TimeUnit.SECONDS);

        assertThat(report.complete()).as(report.toString()).isTrue();
        assertThat(report.writtenIds()).containsExactly("c1", "c2", "c3");
        assertThat(report.failedIds()).isEmpty();
        assertThat(report.abandonedIds()).isEmpty();
        assertThat(report.stillRunningIds()).isEmpty();
        assertThat(slow.log()).containsExactly("save c1 [a]", "save c2 [b]", "delete c3");
        assertThat(report.figures().rejected()).isEqualTo(1);
        assertThat(report.figures().pending()).isZero();
        assertThat(report.budget()).isEqualTo(WAIT);
        assertThat(repository.findConversationIds()).as("reads go on after shutdown").containsExactly("c1", "c2");
    }

    @Test
    void aRepositoryHungInAWriteDoesNotHoldCloseOrShutdownPastItsDeadline() throws Exception {
        ManualTicker ticker = new ManualTicker();
        WriteBehindChatMemoryRepository repository = track(over(slow).name("hung").ticker(ticker)
                .closeTimeout(Duration.ofSeconds(5)).build());
        slow.hold(); // the write hangs, ignoring interrupts, until the test lets it through
        repository.saveAll("c1", List.of(new UserMessage("a")));
        assertThat(slow.awaitEntered(WAIT)).isTrue();
        repository.saveAll("c2", List.of(new UserMessage("b")));

        CompletableFuture<Void> close = CompletableFuture.runAsync(repository::close);
        awaitAThreadWaitingIn("stop");
        ticker.advance(Duration.ofSeconds(6));
        close.get(WAIT.toSeconds(), TimeUnit.SECONDS); // returns, though the repository still hangs
        WriteBehindReport<String> report = repository.stop(Duration.ZERO);   // a later call: the same state, at once

        assertThat(report.complete()).isFalse();
        assertThat(report.stillRunningIds()).containsExactly("c1");
        assertThat(report.abandonedIds()).containsExactly("c2");
        assertThat(report.unfinished()).as("the abandoned, then the one still running").containsExactly("c2", "c1");
        assertThat(report.writtenIds()).isEmpty();
        assertThat(report.toString()).contains("abandonedIds=[c2]", "stillRunningIds=[c1]");
        assertThat(texts(repository.findByConversationId("c2"))).as("abandoned, still readable").containsExactly("b");
        assertThatThrownBy(() -> repository.deleteByConversationId("c1")).isInstanceOf(RejectedExecutionException.class)
                .hasMessageContaining("deleteByConversationId of conversation id c1 refused");

        slow.open();
        await().atMost(WAIT).until(() -> writerThreads("memlife-chat-writer-hung") == 0);
        assertThat(slow.log()).as("the write still running ended; nothing after the deadline started")
                .containsExactly("save c1 [a]");
        assertThat(slow.stored("c2")).isEmpty();
    }

    @Test
    void aFailedWriteIsKeptReadableAndTheNextStateOfThatConversationCarriesIt() throws Exception {
        WriteBehindChatMemoryRepository repository = track(over(slow).build());
        ChatMemory memory = window(repository);
        slow.failNext(1);

        memory.add("c1", new UserMessage("m0"));
        await().atMost(WAIT).until(() -> repository.figures().failedWrites() == 1);
        assertThat(texts(memory.get("c1"))).as("kept, and read back").containsExactly("m0");
        assertThat(repository.findConversationIds()).containsExactly("c1");
        assertThat(repository.figures().pending()).isEqualTo(1);
        assertThat(slow.stored("c1")).isEmpty();

        memory.add("c1", new AssistantMessage("m1"));
        assertThat(repository.flush(WAIT)).isTrue();
        assertThat(slow.stored("c1")).as("the later state, with the failed one's message").containsExactly("m0", "m1");
        assertThat(repository.figures().pending()).isZero();
    }

    @Test
    void aRepositoryThatKeepsFailingAConversationFailsTheFlushAndIsInTheReportByConversationId() throws Exception {
        WriteBehindChatMemoryRepository repository = track(over(slow).build());
        slow.failFor(id -> id.equals("bad"));
        repository.saveAll("bad", List.of(new UserMessage("x")));
        repository.saveAll("good", List.of(new UserMessage("y")));
        await().atMost(WAIT).until(() -> repository.figures().failedWrites() == 1);

        assertThat(repository.flush(WAIT)).as("tried again, refused again").isFalse();
        WriteBehindReport<String> report = repository.stop(WAIT);

        assertThat(report.complete()).isFalse();
        assertThat(report.failedIds()).containsOnlyKeys("bad");
        assertThat(report.failedIds().get("bad")).hasMessage("repository down for conversation bad");
        assertThat(report.figures().failedWrites()).as("first try, the flush's, the shutdown's").isEqualTo(3);
        assertThat(slow.stored("good")).containsExactly("y");
        assertThat(texts(repository.findByConversationId("bad"))).containsExactly("x");
        assertThat(report.toString()).contains("failedIds=[bad]");
    }

    @Test
    void theWriterIsANamedDaemonThreadThatRetiresWhenIdleAndComesBack() throws Exception {
        WriteBehindChatMemoryRepository repository = track(over(slow).name("keepalive-sai")
                .writerKeepAlive(Duration.ofMillis(20)).build());
        assertThat(writerThreads("memlife-chat-writer-keepalive-sai")).as("no thread before the first save").isZero();
        slow.hold();
        repository.saveAll("c1", List.of(new UserMessage("a")));
        assertThat(slow.awaitEntered(WAIT)).isTrue();
        Thread writer = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("memlife-chat-writer-keepalive-sai")).findFirst().orElseThrow();
        assertThat(writer.isDaemon()).isTrue();

        slow.open();
        assertThat(repository.flush(WAIT)).isTrue();
        await().atMost(WAIT).until(() -> !writer.isAlive());
        repository.saveAll("c1", List.of(new UserMessage("a"), new UserMessage("b")));
        assertThat(repository.flush(WAIT)).isTrue();
        assertThat(slow.stored("c1")).containsExactly("a", "b");
    }

    private static long writerThreads(String name) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(name) && t.isAlive())
                .count();
    }

    @Test
    void badInputIsRefusedNamingTheParameter() {
        WriteBehindChatMemoryRepository repository = track(over(slow).build());
        List<Message> withNull = new ArrayList<>(List.of(new UserMessage("a")));
        withNull.add(null);

        assertThatThrownBy(() -> WriteBehindChatMemoryRepository.builder(null)).hasMessage("repository");
        assertThatThrownBy(() -> over(slow).name(" ")).hasMessage("name must not be blank");
        assertThatThrownBy(() -> over(slow).closeTimeout(Duration.ofSeconds(-1)))
                .hasMessage("closeTimeout must not be negative, was PT-1S");
        assertThatThrownBy(() -> over(slow).writerKeepAlive(null)).hasMessage("writerKeepAlive");
        assertThatThrownBy(() -> over(slow).threadFactory(null)).hasMessage("threadFactory");
        assertThatThrownBy(() -> over(slow).ticker(null)).hasMessage("ticker");
        assertThatThrownBy(() -> repository.findByConversationId(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("conversationId");
        assertThatThrownBy(() -> repository.findByConversationId("")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("conversationId must not be blank");
        assertThatThrownBy(() -> repository.saveAll(null, List.of())).hasMessage("conversationId");
        assertThatThrownBy(() -> repository.saveAll(" ", List.of())).hasMessage("conversationId must not be blank");
        assertThatThrownBy(() -> repository.saveAll("c1", null)).hasMessage("messages");
        assertThatThrownBy(() -> repository.saveAll("c1", withNull)).hasMessage("messages[1]");
        assertThatThrownBy(() -> repository.deleteByConversationId(null)).hasMessage("conversationId");
        assertThatThrownBy(() -> repository.flush(null)).hasMessage("timeout");
        assertThatThrownBy(() -> repository.stop(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("budget must not be negative");
        assertThat(repository.figures()).isEqualTo(new WriteBehindFigures(0, 0, 0, 0, 0, 0, 0, 0, java.time.Duration.ZERO, 0));
    }

    @Test
    void theListHandedOverIsCopiedAndTheListReadBackIsTheCallers() throws Exception {
        WriteBehindChatMemoryRepository repository = track(over(slow).build());
        slow.hold();
        List<Message> handed = new ArrayList<>(List.of(new UserMessage("a")));
        repository.saveAll("c1", handed);
        handed.add(new UserMessage("changed after"));
        repository.findByConversationId("c1").add(new UserMessage("changed by a reader"));

        assertThat(texts(repository.findByConversationId("c1"))).containsExactly("a");
        slow.open();
        assertThat(repository.flush(WAIT)).isTrue();
        assertThat(slow.stored("c1")).containsExactly("a");
    }
}
