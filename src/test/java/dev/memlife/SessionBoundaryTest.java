package dev.memlife;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.memlife.internal.Threads;
import dev.memlife.internal.ThrottledLog;
import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/**
 * Session boundaries: {@link MemoryManager#commitSessionBoundaryAsync} ends the old session and
 * switches to the new one in order on the writer. Mirrors hermes-agent {@code
 * agent/memory_manager.py}: {@code commit_session_boundary_async} (one task on the single writer:
 * session end strictly before the switch, after every earlier write, before every later one) and
 * {@code on_session_switch}.
 */
@Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SessionBoundaryTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    /** Records writes, session ends and switches in one list; can hold the first write and the extraction. */
    private static final class Ordered extends RecordingProvider {
        final List<String> log = new CopyOnWriteArrayList<>();
        final CountDownLatch firstWrite = new CountDownLatch(1);
        final CountDownLatch writeHeld = new CountDownLatch(1);
        volatile CountDownLatch extraction = new CountDownLatch(0);
        final CountDownLatch extracting = new CountDownLatch(1);

        Ordered(String name) {
            super(name);
        }

        @Override
        public void syncTurn(Turn turn) {
            writeHeld.countDown();
            await(firstWrite);
            log.add("write " + turn.sessionId() + " " + turn.userContent());
        }

        @Override
        public void onSessionEnd(String sessionId, List<Message> messages) {
            extracting.countDown();
            await(extraction);
            log.add("end " + sessionId + " " + messages.size());
        }

        @Override
        public void onSessionSwitch(String newSessionId, String parentSessionId, boolean reset) {
            log.add("switch " + newSessionId + " from " + parentSessionId + (reset ? " reset" : ""));
        }

        private static void await(CountDownLatch latch) {
            try {
                latch.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private final Ordered provider = new Ordered("ordered");
    private MemoryManager manager;

    @AfterEach
    void release() {
        provider.firstWrite.countDown();
        provider.extraction = new CountDownLatch(0);
        if (manager != null) {
            manager.stop();
        }
    }

    private MemoryManager manager() {
        manager = MemoryManager.builder().name("boundary").build();
        manager.addProvider(provider);
        manager.initializeAll("old");
        return manager;
    }

    @Test
    void theOldSessionIsExtractedAfterItsWritesAndBeforeAnyProviderSeesTheNewOne() throws Exception {
        MemoryManager m = manager();
        m.syncAll("one", "a", "old");
        assertThat(provider.writeHeld.await(10, TimeUnit.SECONDS)).isTrue(); // the writer holds "one"
        m.syncAll("two", "a", "old");

        CompletionStage<Void> boundary = m.commitSessionBoundaryAsync(
                List.of(Message.user("one"), Message.user("two")), "new", "old");
        m.syncAll("three", "a", "new");
        assertThat(boundary.toCompletableFuture().isDone()).as("returned at once").isFalse();

        provider.firstWrite.countDown();
        boundary.toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(m.flushPending(WAIT)).isTrue();

        assertThat(provider.log).containsExactly("write old one", "write old two", "end old 2",
                "switch new from old reset", "write new three");
    }

    @Test
    void aSlowExtractionHoldsEveryLaterWriteBackUntilTheSwitch() throws Exception {
        MemoryManager m = manager();
        provider.firstWrite.countDown();
        provider.extraction = new CountDownLatch(1);
        CompletionStage<Void> boundary = m.commitSessionBoundaryAsync(List.of(), "new", "old");
        m.syncAll("after", "a", "new");
        assertThat(provider.extracting.await(10, TimeUnit.SECONDS)).isTrue();

        assertThat(provider.log).as("the writer is inside the extraction: nothing else reached the provider")
                .isEmpty();
        provider.extraction.countDown();
        boundary.toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(m.flushPending(WAIT)).isTrue();
        assertThat(provider.log).containsExactly("end old 0", "switch new from old reset", "write new after");
    }

    @Test
    void theSessionEndedIsTheOneLastSwitchedTo() throws Exception {
        MemoryManager m = manager();
        provider.firstWrite.countDown();
        m.commitSessionBoundaryAsync(List.of(), "second", "old").toCompletableFuture().get(10, TimeUnit.SECONDS);
        m.commitSessionBoundaryAsync(List.of(), "third", "second").toCompletableFuture().get(10, TimeUnit.SECONDS);
        m.onSessionEnd(List.of());
        assertThat(provider.log).containsExactly("end old 0", "switch second from old reset", "end second 0",
                "switch third from second reset", "end third 0");
    }

    @Test
    void aShutdownRightAfterABoundaryWaitsForIt() throws Exception {
        MemoryManager m = manager();
        provider.firstWrite.countDown();
        m.syncAll("one", "a", "old");
        CompletionStage<Void> boundary = m.commitSessionBoundaryAsync(List.of(Message.user("one")), "new", "old");

        DrainReport report = m.stop();
        assertThat(report.complete()).isTrue();
        boundary.toCompletableFuture().get(10, TimeUnit.SECONDS);
        assertThat(provider.log).containsExactly("write old one", "end old 1", "switch new from old reset");
        assertThatThrownBy(() -> m.commitSessionBoundaryAsync(List.of(), "later", "new"))
                .isInstanceOf(StoppedException.class);
    }

    @Test
    void aBoundaryTheDrainCannotReachEndsExceptionallyAndItsLaterWritesAreAbandoned() throws Exception {
        MemoryManager m = manager();
        m.syncAll("one", "a", "old");
        assertThat(provider.writeHeld.await(10, TimeUnit.SECONDS)).isTrue();
        CompletionStage<Void> boundary = m.commitSessionBoundaryAsync(List.of(), "new", "old");
        m.syncAll("two", "a", "new");

        DrainReport report = m.stop(Duration.ofMillis(100)); // "one" is held past the deadline
        assertThat(report.stillRunning()).isEqualTo(1);
        assertThat(report.abandoned()).isEqualTo(1);
        assertThatThrownBy(() -> boundary.toCompletableFuture().get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(StoppedException.class);
    }

    @Test
    void withNoProviderABoundaryDoesNothing() throws Exception {
        MemoryManager m = MemoryManager.create();
        m.commitSessionBoundaryAsync(List.of(), "new", "").toCompletableFuture().get(1, TimeUnit.SECONDS);
        m.stop();
    }

    /** on_session_switch: inline, on every provider; a blank session id does nothing. */
    @Test
    void aDirectSwitchReachesEveryProviderAtOnce() {
        MemoryManager m = manager();
        m.onSessionSwitch("resumed", "old", false);
        m.onSessionSwitch(" ", "old", true);
        assertThat(provider.log).containsExactly("switch resumed from old");
    }

    /**
     * The queue is in link order, not reservation order: a write reserved before the boundary but
     * linked after a later write must still go first, and the later one after the boundary.
     */
    @Test
    void aWriteReservedBeforeTheBoundaryButLinkedAfterALaterOneStillGoesFirst() throws Exception {
        RecordingProvider rec = new RecordingProvider("rec");
        RegisteredProvider[] route = {new RegisteredProvider(rec, "rec", true)};
        ThrottledLog warnings = new ThrottledLog(LoggerFactory.getLogger(SessionBoundaryTest.class));
        Writer writer = new Writer(new WriterContext("deferral", "d",
                new WriterContext.Settings(100, 16, Long.MAX_VALUE, WriteLoop.LINGER_NANOS),
                Threads.named("deferral-writer"), Ticker.system(), warnings, new ProviderCalls("deferral"), () -> route, null));
        assertThat(writer.enqueue("old", "one", "a", List.of(), route, 0)).isTrue();
        long second = writer.queue().reserve(); // a caller reserved the second write and is about to link it
        List<String> seenByBoundary = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> boundary = writer.boundary(
                () -> rec.turns().forEach(t -> seenByBoundary.add(t.userContent())));
        assertThat(writer.enqueue("new", "three", "a", List.of(), route, 0)).isTrue(); // linked before "two"

        await().atMost(WAIT).until(() -> rec.turns().size() == 1);
        assertThat(boundary).as("waits for the write reserved before it").isNotDone();

        QueuedTurn two = new QueuedTurn("d", "old", "two", "a", List.of(), route);
        two.assignSeq(second);
        writer.queue().append(two); // the writer is not parked while a boundary waits: no wake-up needed
        boundary.get(10, TimeUnit.SECONDS);
        assertThat(writer.flush(TimeUnit.SECONDS.toNanos(10))).isTrue();

        assertThat(seenByBoundary).containsExactly("one", "two");
        assertThat(rec.turns()).extracting(Turn::userContent).containsExactly("one", "two", "three");
        Writer.Outcome outcome = writer.drain(System.nanoTime() + TimeUnit.SECONDS.toNanos(5));
        assertThat(outcome.delivered()).isEqualTo(3);
    }
}
