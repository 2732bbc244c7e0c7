package dev.memlife;

import static dev.memlife.HeldWrites.awaitQuietly;
import static dev.memlife.HeldWrites.writeIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.memlife.internal.Threads;
import dev.memlife.internal.ThrottledLog;
import dev.memlife.testing.FailingProvider;
import dev.memlife.testing.GatedProvider;
import dev.memlife.testing.HangingProvider;
import dev.memlife.testing.Hook;
import dev.memlife.testing.ManualTicker;
import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/** Design section 2, contracts 5, 6 and 8: the bounded drain, late writes, and accounting. */
@Timeout(30)
class ShutdownDrainTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void shutdownDrainsTheQueueInFifoOrderBeforeShuttingProvidersDown() {
        List<String> log = new CopyOnWriteArrayList<>();
        RecordingProvider provider = new RecordingProvider("rec") {
            @Override
            public void syncTurn(Turn turn) {
                log.add(turn.assistantContent());
            }

            @Override
            public void shutdown() {
                log.add("shutdown");
            }
        };
        MemoryManager m = MemoryManager.create();
        m.addProvider(provider);
        for (int i = 0; i < 50; i++) {
            m.syncAll("u", "a" + i, "s");
        }

        DrainReport report = m.stop(Duration.ofSeconds(10));

        assertThat(log).hasSize(51).endsWith("shutdown");
        for (int i = 0; i < 50; i++) {
            assertThat(log.get(i)).isEqualTo("a" + i);
        }
        assertThat(report.delivered()).isEqualTo(50);
        assertThat(report.complete()).isTrue();
        assertThat(m.isShutdown()).isTrue();
    }

    @Test
    void theDeadlineAbandonsWhatTheWriterHasNotStartedAndReportsTheirIds() {
        GatedProvider gated = new GatedProvider("gated");
        MemoryManager m = MemoryManager.builder().build();
        m.addProvider(gated);
        DrainReport report;
        try {
            m.syncAll("1", "in flight", "s");
            assertThat(gated.awaitHeld(Duration.ofSeconds(10))).isTrue();
            m.syncAll("2", "queued-a", "s");
            m.syncAll("3", "queued-b", "s");
            m.syncAll("4", "queued-c", "s");

            report = m.stop(Duration.ofMillis(50));
        } finally {
            gated.open();
        }

        assertThat(report.abandoned()).isEqualTo(3);
        assertThat(report.stillRunning()).isEqualTo(1);
        assertThat(report.delivered()).isZero();
        assertThat(report.complete()).isFalse();
        assertThat(report.submitted()).isEqualTo(4);
        assertThat(report.abandonedWriteIds()).hasSize(3).doesNotHaveDuplicates();
        // The held write finishes detached; the abandoned ones never reach the provider.
        assertThat(gated.awaitTurns(1, Duration.ofSeconds(10))).isTrue();
        assertThat(m.flushPending(Duration.ofSeconds(1))).isFalse();
        assertThat(gated.assistantContents()).containsExactly("in flight");
        assertThat(gated.turns().get(0).writeId()).isNotIn(report.abandonedWriteIds());
        String prefix = gated.turns().get(0).writeId().replaceFirst(":1$", ":");
        assertThat(report.abandonedWriteIds()).as("the ids of the three queued writes, in queue order")
                .containsExactly(prefix + 2, prefix + 3, prefix + 4);
    }

    @Test
    void theDeadlineIsSharedByTheWholeQueueNotPerWrite() {
        List<String> seen = new CopyOnWriteArrayList<>();
        RecordingProvider slow = new RecordingProvider("slow") {
            @Override
            public void syncTurn(Turn turn) {
                try {
                    Thread.sleep(20); // sleep-ok: a slow provider is the behaviour under test
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                seen.add(turn.assistantContent());
            }
        };
        MemoryManager m = MemoryManager.create();
        m.addProvider(slow);
        for (int i = 0; i < 200; i++) {
            m.syncAll("u", "a" + i, "s");
        }

        long start = System.nanoTime();
        DrainReport report = m.stop(Duration.ofMillis(200));
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertThat(elapsedMillis).isLessThan(200 + 2_000); // the budget plus a generous margin for a loaded machine
        assertThat(report.abandoned()).isPositive();
        assertThat(report.delivered() + report.stillRunning() + report.abandoned()).isEqualTo(200);
    }

    @Test
    void theDrainDeadlineFollowsTheInjectedTicker() throws Exception {
        ManualTicker ticker = new ManualTicker();
        GatedProvider gated = new GatedProvider("gated");
        MemoryManager m = MemoryManager.builder().ticker(ticker).build();
        m.addProvider(gated);
        try {
            m.syncAll("1", "held", "s");
            assertThat(gated.awaitHeld(Duration.ofSeconds(10))).isTrue();
            m.syncAll("2", "queued", "s");
            CompletableFuture<DrainReport> drain = CompletableFuture.supplyAsync(() -> m.stop(Duration.ofSeconds(1)));

            // Real time passes, the manual ticker does not: the drain keeps waiting for the queue.
            await().pollDelay(Duration.ofMillis(200)).atMost(Duration.ofSeconds(10)).until(() -> !drain.isDone());
            ticker.advance(Duration.ofMillis(1_001));

            DrainReport report = drain.get(10, TimeUnit.SECONDS);
            assertThat(report.abandoned()).isEqualTo(1);
            assertThat(report.stillRunning()).isEqualTo(1);
        } finally {
            gated.open();
        }
    }

    @Test
    void drainDeadlineHoldsWhenAProviderHangsInAWrite() {
        HangingProvider hanging = new HangingProvider("hangs", Hook.SYNC_TURN);
        MemoryManager m = MemoryManager.create();
        m.addProvider(hanging);
        try {
            m.syncAll("u", "a", "s");
            m.syncAll("u", "b", "s");
            assertThat(hanging.awaitHanging(Duration.ofSeconds(10))).isTrue();

            long start = System.nanoTime();
            DrainReport report = m.stop(Duration.ofMillis(100));
            long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            assertThat(elapsedMillis).isLessThan(100 + 2_000);
            assertThat(report.stillRunning()).isEqualTo(1);
            assertThat(report.abandoned()).isEqualTo(1);
            // Never shut down under a running write: it is shut down once the write returns.
            assertThat(report.providersShutDownLater()).containsExactly("hangs");
            assertThat(hanging.events()).doesNotContain("shutdown");
        } finally {
            hanging.release();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> hanging.events().contains("shutdown"));
    }

    /**
     * Regression (reliability issue, defect 1): when the writer was stuck inside write k of a
     * batch, the writes before k that every provider had taken were reported still running, and
     * {@code pendingWrites()} overcounted, because progress was published once per batch.
     */
    @Test
    void writesBeforeAStuckWriteOfTheSameBatchAreReportedDelivered() throws Exception {
        HeldWrites held = new HeldWrites("held").hold("w0").hold("w5");
        MemoryManager m = MemoryManager.create();
        m.addProvider(held);
        try {
            held.queueBehindHeld(m, "w0", List.of("w1", "w2", "w3", "w4", "w5", "w6", "w7"));
            held.release("w0");
            assertThat(held.awaitHeld("w5")).isTrue();

            assertThat(m.pendingWrites()).as("w5 in progress, w6 and w7 queued").isEqualTo(3);
            DrainReport report = m.stop(Duration.ofMillis(100));

            assertThat(report.delivered()).as("w0..w4: %s", report).isEqualTo(5);
            assertThat(report.stillRunning()).isEqualTo(1);
            assertThat(report.abandoned()).isEqualTo(2);
            List<String> delivered = writeIds(held.turns());
            assertThat(delivered).hasSize(5).allSatisfy(id ->
                    assertThat(report.statusOf(id)).isEqualTo(WriteStatus.DELIVERED));
        } finally {
            held.release("w5");
        }
    }

    /**
     * Regression (reliability issue, defect 2): at the drain deadline a write the writer had
     * claimed was not handed to the remaining providers, and it was counted as failed although
     * none of them failed it. A write called still running must go on to every provider.
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
        assertThat(writeIds(second.turns())).containsExactly(id);
        assertThat(report.failed()).isZero();
        // and it is shut down only after the write left it
        await().atMost(WAIT).until(() -> second.events().contains("shutdown"));
        assertThat(second.events()).containsExactly("sync:u", "shutdown");
    }

    @Test
    void providersAreShutDownOnceInReverseRegistrationOrder() {
        List<String> order = new CopyOnWriteArrayList<>();
        MemoryManager m = MemoryManager.create();
        for (String name : List.of("first", "second", "third")) {
            m.addProvider(new RecordingProvider(name) {
                @Override
                public void shutdown() {
                    order.add(name());
                }
            });
        }

        m.stop();
        m.stop();

        assertThat(order).containsExactly("third", "second", "first");
    }

    @Test
    void aSecondShutdownReturnsTheFirstReportAndCallsNoProviderAgain() {
        RecordingProvider provider = new RecordingProvider("rec");
        MemoryManager m = MemoryManager.create();
        m.addProvider(provider);
        m.syncAll("u", "a", "s");

        DrainReport first = m.stop();
        DrainReport second = m.stop(Duration.ofSeconds(1));

        assertThat(second).isSameAs(first);
        assertThat(provider.count("shutdown")).isEqualTo(1);
    }

    /**
     * Concurrent calls share one drain and one report; the earliest deadline holds for all of them
     * (regression, reliability issue defect 8: a second caller's own deadline used to be ignored).
     */
    @Test
    void concurrentShutdownCallsShareOneDrainUnderTheEarliestDeadline() throws Exception {
        GatedProvider gated = new GatedProvider("gated");
        MemoryManager m = MemoryManager.create();
        m.addProvider(gated);
        m.syncAll("u", "a", "s");
        assertThat(gated.awaitHeld(Duration.ofSeconds(10))).isTrue();
        CompletableFuture<DrainReport> first = CompletableFuture.supplyAsync(() -> m.stop(Duration.ofSeconds(20)));
        await().atMost(Duration.ofSeconds(10)).until(m::isShutdown);
        try {
            long start = System.nanoTime();
            DrainReport second = m.stop(Duration.ofMillis(200));
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

            assertThat(tookMillis).as("a 200 ms shutdown, plus margin").isLessThan(200 + 1_000);
            assertThat(first.get(10, TimeUnit.SECONDS)).isSameAs(second);
            assertThat(second.stillRunningWriteIds()).hasSize(1);
        } finally {
            gated.open();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> gated.count("shutdown") == 1);
    }

    @Test
    void aProviderThatHangsInShutdownCannotHangTheCallerAndIsNamed() {
        HangingProvider hanging = new HangingProvider("wedged", Hook.SHUTDOWN);
        RecordingProvider healthy = new RecordingProvider("healthy");
        MemoryManager m = MemoryManager.builder().providerShutdownTimeout(Duration.ofMillis(100)).build();
        m.addProvider(hanging);
        m.addProvider(healthy);
        try {
            DrainReport report = m.stop();

            assertThat(report.providersNotShutDown()).containsExactly("wedged");
            assertThat(healthy.count("shutdown")).isEqualTo(1); // reverse order: it went first
        } finally {
            hanging.release();
        }
    }

    @Test
    void aProviderThatThrowsInShutdownDoesNotStopTheOthers() {
        FailingProvider failing = new FailingProvider("failing", Hook.SHUTDOWN);
        RecordingProvider first = new RecordingProvider("first");
        MemoryManager m = MemoryManager.create();
        m.addProvider(first);
        m.addProvider(failing);

        DrainReport report = m.stop();

        assertThat(failing.events()).contains("fail:SHUTDOWN");
        assertThat(first.count("shutdown")).isEqualTo(1);
        assertThat(report.providersNotShutDown()).isEmpty();
    }

    /**
     * Regression (reliability issue, defect 4): when no thread could be made for the providers'
     * shutdown, {@code stop} threw, no provider was shut down, and every later call threw too.
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

    @Test
    void aWriteAfterShutdownIsRejectedCountedAndTheCallerLearnsIt() {
        RecordingProvider provider = new RecordingProvider("rec");
        MemoryManager m = MemoryManager.create();
        m.addProvider(provider);
        m.stop();

        boolean accepted = m.syncAll("late", "write", "s");

        assertThat(accepted).isFalse();
        assertThat(m.rejectedWrites()).isEqualTo(1);
        assertThat(provider.turns()).isEmpty();
    }

    @Test
    void writesArrivingDuringTheDrainAreRejectedAndInTheReport() throws Exception {
        GatedProvider gated = new GatedProvider("gated");
        MemoryManager m = MemoryManager.create();
        m.addProvider(gated);
        m.syncAll("u", "held", "s");
        assertThat(gated.awaitHeld(Duration.ofSeconds(10))).isTrue();
        CompletableFuture<DrainReport> drain = CompletableFuture.supplyAsync(() -> m.stop(Duration.ofSeconds(20)));
        await().atMost(Duration.ofSeconds(10)).until(m::isShutdown);
        // isShutdown flips before the writer stops accepting; wait until writes are refused.
        await().atMost(Duration.ofSeconds(10)).until(() -> !m.syncAll("during", "drain", "s"));

        gated.open();
        DrainReport report = drain.get(10, TimeUnit.SECONDS);

        assertThat(report.rejected()).isEqualTo(m.rejectedWrites()).isPositive();
        assertThat(report.delivered()).isEqualTo(report.submitted() - report.rejected());
        assertThat(gated.assistantContents()).doesNotContain("drain");
    }

    /**
     * Regression (reliability issue, defect 10d): the report's rejected count missed rejections
     * that callers had already seen before {@code stop} returned (those during the providers'
     * shutdown).
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

    @Test
    void accountingAddsUpUnderConcurrentWritersFailuresAndAnEarlyShutdown() throws Exception {
        FailingProvider sometimesFails = FailingProvider.failingWrites("flaky",
                t -> t.assistantContent().hashCode() % 7 == 0);
        RecordingProvider slowish = new RecordingProvider("slowish");
        MemoryManager m = MemoryManager.builder().queueCapacity(500).enqueueTimeout(Duration.ZERO).build();
        m.addProvider(sometimesFails);
        m.addProvider(slowish);
        AtomicLong accepted = new AtomicLong();
        AtomicLong refused = new AtomicLong();
        CountDownLatch halfway = new CountDownLatch(4);
        List<Thread> writers = new ArrayList<>();
        for (int w = 0; w < 4; w++) {
            int id = w;
            Thread t = new Thread(() -> {
                for (int i = 0; i < 5_000; i++) {
                    if (i == 2_500) {
                        halfway.countDown();
                    }
                    try {
                        (m.syncAll("u", id + "-" + i, "s") ? accepted : refused).incrementAndGet();
                    } catch (QueueFullException e) {
                        refused.incrementAndGet();
                    }
                }
            });
            t.start();
            writers.add(t);
        }
        halfway.await();

        DrainReport report = m.stop(Duration.ofMillis(5));
        for (Thread t : writers) {
            t.join();
        }

        long rejectedNow = m.rejectedWrites();
        assertThat(accepted.get() + refused.get()).isEqualTo(20_000);
        assertThat(rejectedNow).isEqualTo(refused.get());
        assertThat(report.delivered() + report.failed() + report.abandoned() + report.stillRunning())
                .isEqualTo(accepted.get());
        assertThat(report.submitted() - report.rejected()).isEqualTo(accepted.get());
        // A write still running at the deadline may already have failed at "flaky" without being counted yet.
        assertThat(report.failuresByProvider().getOrDefault("flaky", 0L))
                .isBetween(report.failed(), report.failed() + report.stillRunning());
        assertThat((long) slowish.turns().size()).isLessThanOrEqualTo(accepted.get() - report.abandoned());
    }

    @Test
    void aWriteWhoseCallerDiedBetweenReservingAndLinkingCannotHangTheDrain() {
        ThrottledLog warnings = new ThrottledLog(LoggerFactory.getLogger(ShutdownDrainTest.class));
        RegisteredProvider[] route = {new RegisteredProvider(new RecordingProvider("rec"), "rec", true)};
        Writer writer = new Writer(new WriterContext("dying-caller", "p",
                new WriterContext.Settings(10, 16, Long.MAX_VALUE, WriteLoop.LINGER_NANOS),
                Threads.named("dying-caller-writer"), Ticker.system(), warnings, new ProviderCalls("dying-caller"), () -> route, null));
        assertThat(writer.enqueue("s", "u", "linked", List.of(), route, 0)).isTrue();
        assertThat(writer.queue().reserve()).as("a caller reserves the second write and dies").isEqualTo(2);

        long start = System.nanoTime();
        Writer.Outcome outcome = writer.drain(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50));
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertThat(tookMillis).as("deadline 50 ms, plus at most 100 ms waiting for the link, plus margin")
                .isLessThan(2_000);
        assertThat(outcome.delivered()).as("the linked write").isEqualTo(1);
        assertThat(outcome.abandonedIds()).isEmpty();
        assertThat(outcome.stillRunning()).as("the write that was never linked").isEqualTo(1);
    }
}
