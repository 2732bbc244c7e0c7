package dev.memlife;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownMode;
import dev.memlife.agent.TeardownReport.Extraction;
import dev.memlife.agent.TeardownReport;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.testing.FailingProvider;
import dev.memlife.testing.HangingProvider;
import dev.memlife.testing.Hook;
import dev.memlife.testing.RecordingProvider;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * One regression test per defect of the reliability issue ("the write path tells the exact truth
 * under every fault"): each fails on the code before its fix. The store's defects (a deleted
 * SQLite file, unpaired surrogates) are in the store's own tests; the JVM hook's in {@code
 * session.ShutdownHooksTest}.
 */
@Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ReliabilityRegressionTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    /**
     * Queues {@code first} and holds it in {@code held}, so that the writes queued after it are
     * taken by the writer as one batch once {@code first} is released.
     */
    private static void queueBehindHeld(MemoryManager m, HeldWrites held, String first, List<String> rest)
            throws InterruptedException {
        m.syncAll("u", first, "s");
        assertThat(held.awaitHeld(first)).isTrue();
        for (String content : rest) {
            m.syncAll("u", content, "s");
        }
    }

    private static List<String> ids(List<Turn> turns) {
        List<String> ids = new ArrayList<>();
        turns.forEach(t -> ids.add(t.writeId()));
        return ids;
    }

    /**
     * Defect 1: when the writer was stuck inside write k of a batch, the writes before k that every
     * provider had taken were reported still running, and {@code pendingWrites()} overcounted,
     * because progress was published once per batch.
     */
    @Test
    void writesBeforeAStuckWriteOfTheSameBatchAreReportedDelivered() throws Exception {
        HeldWrites held = new HeldWrites("held").hold("w0").hold("w5");
        MemoryManager m = MemoryManager.create();
        m.addProvider(held);
        try {
            queueBehindHeld(m, held, "w0", List.of("w1", "w2", "w3", "w4", "w5", "w6", "w7"));
            held.release("w0");
            assertThat(held.awaitHeld("w5")).isTrue();

            assertThat(m.pendingWrites()).as("w5 in progress, w6 and w7 queued").isEqualTo(3);
            DrainReport report = m.stop(Duration.ofMillis(100));

            assertThat(report.delivered()).as("w0..w4: %s", report).isEqualTo(5);
            assertThat(report.stillRunning()).isEqualTo(1);
            assertThat(report.abandoned()).isEqualTo(2);
            List<String> delivered = ids(held.turns());
            assertThat(delivered).hasSize(5).allSatisfy(id ->
                    assertThat(report.statusOf(id)).isEqualTo(WriteStatus.DELIVERED));
        } finally {
            held.release("w5");
        }
    }

    /**
     * Defect 2: at the drain deadline a write the writer had claimed was not handed to the
     * remaining providers, and it was counted as failed although none of them failed it. A write
     * called still running must go on to every provider.
     */
    @Test
    void aWriteStillRunningAtTheDeadlineStillReachesEveryLaterProvider() throws Exception {
        HeldWrites first = new HeldWrites("first").hold("w1");
        RecordingProvider second = new RecordingProvider("second");
        MemoryManager m = MemoryManager.create();
        m.addProvider(first);
        m.addProvider(second);
        m.syncAll("u", "w1", "s");
        assertThat(first.awaitHeld("w1")).isTrue();

        DrainReport report = m.stop(Duration.ofMillis(50));
        first.release("w1");

        assertThat(report.stillRunningWriteIds()).hasSize(1);
        String id = report.stillRunningWriteIds().get(0);
        await().atMost(WAIT).until(() -> second.turns().size() == 1);
        assertThat(ids(second.turns())).containsExactly(id);
        assertThat(report.failed()).isZero();
        // and it is shut down only after the write left it
        await().atMost(WAIT).until(() -> second.events().contains("shutdown"));
        assertThat(second.events()).containsExactly("sync:u", "shutdown");
    }

    /**
     * Defect 3: when the writer thread could not be started, {@code syncAll} threw but the write
     * stayed queued, so a retry stored the turn twice under two write ids.
     */
    @Test
    void syncAllThatThrowsBecauseNoWriterCanStartQueuedNothing() {
        AtomicInteger calls = new AtomicInteger();
        ThreadFactory firstFails = r -> {
            if (calls.getAndIncrement() == 0) {
                throw new OutOfMemoryError("unable to create native thread (simulated)");
            }
            Thread t = new Thread(r, "writer");
            t.setDaemon(true);
            return t;
        };
        RecordingProvider provider = new RecordingProvider("rec");
        MemoryManager m = MemoryManager.builder().threadFactory(firstFails).build();
        m.addProvider(provider);

        assertThatThrownBy(() -> m.syncAll("u", "turn", "s")).isInstanceOf(RejectedExecutionException.class)
                .hasMessageContaining("not accepted");
        assertThat(m.rejectedWrites()).isEqualTo(1);
        assertThat(m.syncAll("u", "turn", "s")).as("the caller retries").isTrue();
        assertThat(m.flushPending(WAIT)).isTrue();

        assertThat(provider.turns()).hasSize(1);
        DrainReport report = m.stop();
        assertThat(report.delivered()).isEqualTo(1);
        assertThat(report.rejected()).isEqualTo(1);
    }

    /**
     * Defect 4: when no thread could be made for the providers' shutdown, {@code stop}
     * threw, no provider was shut down, and every later call threw too.
     */
    @Test
    void shutdownWithoutAThreadForTheProvidersStillReportsAndShutsThemDown() {
        RecordingProvider provider = new RecordingProvider("rec");
        MemoryManager m = MemoryManager.builder().threadFactory(r -> null).build();
        m.addProvider(provider);

        DrainReport report = m.stop();

        assertThat(report.providersNotShutDown()).isEmpty();
        assertThat(provider.events()).containsExactly("shutdown");
        assertThat(m.stop()).isSameAs(report);
    }

    /**
     * Defect 5: a provider that left the writer's interrupt flag set made the next provider's
     * interruptible I/O fail ({@code ClosedByInterruptException}) on every later write.
     */
    @Test
    void anInterruptLeftByOneProviderIsClearedBeforeTheNextOne(@TempDir Path dir) {
        RecordingProvider interrupter = new RecordingProvider("interrupter") {
            @Override
            public void syncTurn(Turn turn) {
                super.syncTurn(turn);
                Thread.currentThread().interrupt();
            }
        };
        List<String> written = new CopyOnWriteArrayList<>();
        MemoryProvider file = new MemoryProvider() {
            @Override
            public String name() {
                return "file";
            }

            @Override
            public void syncTurn(Turn turn) {
                try (FileChannel channel = FileChannel.open(dir.resolve("turns"), StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND)) { // interruptible I/O: fails at once if the flag is set
                    channel.write(ByteBuffer.wrap((turn.writeId() + "\n").getBytes(StandardCharsets.UTF_8)));
                    written.add(turn.writeId());
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }
        };
        MemoryManager m = MemoryManager.create();
        m.addProvider(interrupter);
        m.addProvider(file);
        for (int i = 0; i < 3; i++) {
            m.syncAll("u" + i, "a", "s");
        }

        DrainReport report = m.stop();

        assertThat(report.failed()).as("%s", report).isZero();
        assertThat(written).isEqualTo(ids(interrupter.turns())).hasSize(3);
        assertThat(report.interruptsByProvider()).isEqualTo(Map.of("interrupter", 3L));
    }

    /**
     * Defect 6: one provider's StackOverflowError failed the whole batch for every provider,
     * including writes no provider ever saw, and failuresByProvider did not name the provider.
     */
    @Test
    void aStackOverflowErrorFailsOnlyThatWriteForThatProvider() throws Exception {
        HeldWrites held = new HeldWrites("held").hold("w0");
        FailingProvider overflow = new FailingProvider("overflow", Set.of(Hook.SYNC_TURN),
                t -> t.assistantContent().equals("w2"), hook -> new StackOverflowError("simulated"));
        RecordingProvider last = new RecordingProvider("last");
        MemoryManager m = MemoryManager.create();
        m.addProvider(held);
        m.addProvider(overflow);
        m.addProvider(last);
        queueBehindHeld(m, held, "w0", List.of("w1", "w2", "w3", "w4"));
        held.release("w0");
        assertThat(m.flushPending(WAIT)).isTrue();

        DrainReport report = m.stop();

        assertThat(last.assistantContents()).containsExactly("w0", "w1", "w2", "w3", "w4");
        String w2 = last.turns().get(2).writeId();
        assertThat(report.failedWriteIds()).containsExactly(w2);
        assertThat(report.delivered()).isEqualTo(4);
        assertThat(report.failuresByProvider()).isEqualTo(Map.of("overflow", 1L));
    }

    /**
     * Defect 7: when extraction timed out, teardown shut the providers down while extraction still
     * ran, and the next provider's {@code onSessionEnd} then ran after its own {@code shutdown()}.
     * Now the providers extraction has not passed yet are shut down when it has, and the result says so.
     */
    @Test
    void noProviderIsShutDownBeforeALateExtractionHasPassedIt() {
        HangingProvider hanging = new HangingProvider("hanging", Hook.ON_SESSION_END);
        RecordingProvider after = new RecordingProvider("after");
        MemoryManager m = MemoryManager.create();
        m.addProvider(hanging);
        m.addProvider(after);
        AgentMemory agent = AgentMemory.builder(m).extractionTimeout(Duration.ofMillis(100)).build();
        TeardownReport result;
        try {
            result = agent.teardown(TeardownMode.CLOSE);

            assertThat(result.extraction()).isEqualTo(Extraction.TIMED_OUT);
            assertThat(result.providersShutDownLater()).containsExactlyInAnyOrder("hanging", "after");
            assertThat(after.events()).doesNotContain("shutdown");
        } finally {
            hanging.release();
        }
        await().atMost(WAIT).until(() -> after.events().contains("shutdown"));
        assertThat(after.events()).containsExactly("on_session_end", "shutdown");
        await().atMost(WAIT).until(() -> hanging.events().contains("shutdown"));
        assertThat(hanging.events()).endsWith("shutdown");
    }

    /**
     * A provider that calls {@code stop(3 s)} on its own manager from inside the write
     * {@code "stop"}, after {@code before} lets it, and records how long that took.
     */
    private static final class ShutsDownFromInside extends RecordingProvider {
        final CountDownLatch inside = new CountDownLatch(1);
        final CountDownLatch before = new CountDownLatch(1);
        final CompletableFuture<DrainReport> report = new CompletableFuture<>();
        volatile long millis = -1;
        volatile MemoryManager manager;

        ShutsDownFromInside(boolean waitFirst) {
            super("reentrant");
            if (!waitFirst) {
                before.countDown();
            }
        }

        @Override
        public void syncTurn(Turn turn) {
            super.syncTurn(turn);
            if (turn.assistantContent().equals("stop")) {
                inside.countDown();
                awaitQuietly(before);
                long start = System.nanoTime();
                report.complete(manager.stop(Duration.ofSeconds(3)));
                millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            }
        }
    }

    /** Defect 8, first half: {@code stop} from inside a write waited for itself for its whole deadline. */
    @Test
    void shutdownFromInsideAWriteDoesNotWaitForItself() throws Exception {
        ShutsDownFromInside provider = new ShutsDownFromInside(true);
        MemoryManager m = MemoryManager.create();
        provider.manager = m;
        m.addProvider(provider);
        m.syncAll("u", "stop", "s");
        assertThat(m.syncAll("u", "after", "s")).as("queued behind the write that shuts down").isTrue();
        provider.before.countDown();

        DrainReport report = provider.report.get(10, TimeUnit.SECONDS);

        assertThat(provider.millis).as("a re-entrant stop(3 s)").isLessThan(1_500);
        assertThat(report.stillRunningWriteIds()).as("%s", report).hasSize(1);
        assertThat(report.abandoned()).as("the write behind it, never started: %s", report).isEqualTo(1);
        assertThat(m.stop()).isSameAs(report);
    }

    /**
     * Defect 8, second half: a host's {@code stop} that is running while a provider calls
     * {@code stop} from inside a write used to hold both until the host's deadline; the
     * writer cannot drain while it waits, so the shared deadline becomes now.
     */
    @Test
    void aReentrantShutdownBringsTheHostsDeadlineForward() throws Exception {
        ShutsDownFromInside provider = new ShutsDownFromInside(true);
        MemoryManager m = MemoryManager.create();
        provider.manager = m;
        m.addProvider(provider);
        m.syncAll("u", "stop", "s");
        assertThat(provider.inside.await(10, TimeUnit.SECONDS)).isTrue();

        long start = System.nanoTime();
        CompletableFuture<DrainReport> host = CompletableFuture.supplyAsync(() -> m.stop(Duration.ofSeconds(20)));
        await().atMost(WAIT).until(m::isShutdown);
        provider.before.countDown();
        DrainReport report = host.get(10, TimeUnit.SECONDS);
        long hostMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertThat(hostMillis).as("host shutdown, not held to its 20 s deadline nor the provider's 3 s").isLessThan(2_000);
        assertThat(provider.report.get(10, TimeUnit.SECONDS)).isSameAs(report);
        assertThat(report.stillRunningWriteIds()).hasSize(1);
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Defect 10a: builder setters accepted durations too large to use; one failed much later with
     * {@code ArithmeticException}, after {@code reset()} had already taken the agent out.
     */
    @Test
    void durationsTooLargeToMeasureAreRefusedAtTheSetter() {
        Duration huge = Duration.ofSeconds(Long.MAX_VALUE);
        assertThatThrownBy(() -> MemoryManager.builder().drainTimeout(huge))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("drainTimeout");
        assertThatThrownBy(() -> AgentGateway.builder().resetTimeout(huge))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("resetTimeout");
        assertThatThrownBy(() -> AgentMemory.builder(MemoryManager.create()).flushTimeout(huge))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("flushTimeout");
        assertThatThrownBy(() -> MemoryManager.builder().providerShutdownTimeout(huge))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("providerShutdownTimeout");
    }

    /**
     * Defect 10b: the list handed to {@code syncBatch} was a view of the writer's reused buffer; a
     * provider that kept it got {@code ConcurrentModificationException} (or other writes) later.
     */
    @Test
    void aBatchAProviderKeepsStaysAsItWasHanded() throws Exception {
        List<List<Turn>> kept = new CopyOnWriteArrayList<>();
        List<List<String>> seen = new CopyOnWriteArrayList<>();
        MemoryProvider keeper = new MemoryProvider() {
            @Override
            public String name() {
                return "keeper";
            }

            @Override
            public void syncBatch(List<Turn> turns) {
                kept.add(turns);
                seen.add(ids(turns));
            }
        };
        MemoryManager m = MemoryManager.create();
        m.addProvider(keeper);
        for (int round = 0; round < 20; round++) {
            for (int i = 0; i < 5; i++) {
                m.syncAll("u", "r" + round + "w" + i, "s");
            }
            assertThat(m.flushPending(WAIT)).isTrue();
        }
        m.stop();

        for (int i = 0; i < kept.size(); i++) {
            assertThat(ids(kept.get(i))).isEqualTo(seen.get(i));
        }
    }

    /** Defect 10c: a blank user text dropped a real assistant reply with no count and no log. */
    @Test
    void aBlankUserTurnIsCountedNotDroppedUnseen() {
        MemoryManager m = MemoryManager.create();
        assertThat(m.syncAll(" ", "a real reply", "s")).isFalse();
        assertThat(m.blankTurns()).isEqualTo(1);
        DrainReport report = m.stop();
        assertThat(report.blankTurns()).isEqualTo(1);
        assertThat(report.submitted()).isZero();
    }

    /**
     * Defect 10d: the report's rejected count missed rejections that callers had already seen
     * before {@code stop} returned (those during the providers' shutdown).
     */
    @Test
    void rejectionsSeenBeforeShutdownReturnedAreInTheReport() throws Exception {
        CountDownLatch shuttingDown = new CountDownLatch(1);
        CountDownLatch lateWriteDone = new CountDownLatch(1);
        RecordingProvider slowShutdown = new RecordingProvider("slow") {
            @Override
            public void shutdown() {
                shuttingDown.countDown();
                awaitQuietly(lateWriteDone);
                super.shutdown();
            }
        };
        MemoryManager m = MemoryManager.create();
        m.addProvider(slowShutdown);
        CompletableFuture<DrainReport> report = CompletableFuture.supplyAsync(m::stop);
        assertThat(shuttingDown.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(m.syncAll("u", "late", "s")).isFalse();
        lateWriteDone.countDown();

        assertThat(report.get(10, TimeUnit.SECONDS).rejected()).isEqualTo(1);
    }

    /**
     * Found by the soak: a writer parked idle (every write delivered) when {@code stop}
     * came was never woken, so its thread and its manager stayed alive for good, one per idle
     * agent shut down.
     */
    @Test
    void anIdleWritersThreadEndsAtShutdown() throws Exception {
        // A keep-alive far longer than the test: the writer must end because shutdown woke it.
        MemoryManager m = MemoryManager.builder().name("idle").writerKeepAlive(Duration.ofHours(1)).build();
        m.addProvider(new RecordingProvider("rec"));
        m.syncAll("u", "a", "s");
        assertThat(m.flushPending(WAIT)).isTrue();
        Thread writer = m.writerThread();
        await().atMost(WAIT).until(() -> writer.getState() == Thread.State.TIMED_WAITING); // parked, idle

        assertThat(m.stop().delivered()).isEqualTo(1);

        writer.join(WAIT.toMillis());
        assertThat(writer.isAlive()).as("the writer of a shut-down manager").isFalse();
    }
}
