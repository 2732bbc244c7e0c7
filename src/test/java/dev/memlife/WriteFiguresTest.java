package dev.memlife;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.memlife.testing.FailingProvider;
import dev.memlife.testing.GatedProvider;
import dev.memlife.testing.ManualTicker;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link MemoryManager#figures()}: what the write path reports while it runs, and after. */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class WriteFiguresTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void aManagerThatNeverWroteHasNoFigures() {
        MemoryManager manager = MemoryManager.create();
        assertThat(manager.figures()).isEqualTo(WriteFigures.NONE);
        assertThat(manager.figures().meanBatchSize()).isZero();
    }

    @Test
    void writesHeldByTheWriterArePendingAndAgeUntilTheyAreDelivered() {
        GatedProvider gated = new GatedProvider("gated");
        MemoryManager manager = MemoryManager.builder().name("held").build();
        manager.addProvider(gated);
        for (int i = 0; i < 5; i++) {
            manager.syncAll("u" + i, "a", "s");
        }
        assertThat(gated.awaitHeld(WAIT)).isTrue();

        WriteFigures held = manager.figures();
        assertThat(held.accepted()).isEqualTo(5);
        assertThat(held.pending()).isEqualTo(5);
        assertThat(held.delivered()).isZero();
        assertThat(manager.flushPending(Duration.ofMillis(1))).isFalse();
        await().atMost(WAIT).until(() -> manager.figures().oldestPendingAge().toMillis() >= 30);
        assertThat(manager.figures().flushWaits()).isEqualTo(1);
        assertThat(manager.figures().flushTimeouts()).isEqualTo(1);

        gated.open();
        assertThat(manager.flushPending(WAIT)).isTrue();
        WriteFigures done = manager.figures();
        assertThat(done.delivered()).isEqualTo(5);
        assertThat(done.pending()).isZero();
        assertThat(done.oldestPendingAge()).isEqualTo(Duration.ZERO);
        assertThat(done.batchedWrites()).isEqualTo(5);
        assertThat(done.batches()).isBetween(1L, 5L);
        assertThat(done.largestBatch()).isBetween(1L, 5L);
        assertThat(done.meanBatchSize()).isEqualTo(5.0 / done.batches());
        assertThat(done.flushWaits()).isBetween(1L, 2L); // the second flush waits only if it beat the writer
        assertThat(done.flushTimeouts()).isEqualTo(1);
    }

    @Test
    void failedRejectedAndAbandonedWritesAreCountedAsTheReportCountsThem() {
        FailingProvider failing = FailingProvider.failingWrites("failing", t -> t.userContent().startsWith("bad"));
        GatedProvider gated = new GatedProvider("gated", t -> t.userContent().equals("hold"));
        MemoryManager manager = MemoryManager.builder().name("mixed").maxBatchSize(1).build();
        manager.addProvider(failing);
        manager.addProvider(gated);
        manager.syncAll("good", "a", "s");
        manager.syncAll("bad-1", "a", "s");
        manager.syncAll("bad-2", "a", "s");
        manager.syncAll("hold", "a", "s");
        manager.syncAll("queued-1", "a", "s");
        manager.syncAll("queued-2", "a", "s");
        assertThat(gated.awaitHeld(WAIT)).isTrue();

        DrainReport report = manager.stop(Duration.ofMillis(50)); // "hold" runs on; the two behind it are abandoned
        assertThat(manager.syncAll("late", "a", "s")).isFalse();
        WriteFigures figures = manager.figures();
        assertThat(figures.accepted()).isEqualTo(6);
        assertThat(figures.delivered()).isEqualTo(report.delivered()).isEqualTo(1);
        assertThat(figures.failed()).isEqualTo(report.failed()).isEqualTo(2);
        assertThat(figures.abandoned()).isEqualTo(report.abandoned()).isEqualTo(2);
        assertThat(figures.pending()).isEqualTo(report.stillRunning()).isEqualTo(1);
        assertThat(figures.rejected()).isEqualTo(1);
        gated.open();
        await().atMost(WAIT).until(() -> manager.figures().pending() == 0);
        assertThat(manager.figures().delivered()).isEqualTo(2);
    }

    @Test
    void aWriteNoWriterHasTakenAgesFromTheFirstSnapshotThatSawIt() {
        CountDownLatch release = new CountDownLatch(1);
        ThreadFactory heldWriter = body -> {
            Thread t = new Thread(() -> {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    return;
                }
                body.run();
            }, "held-writer");
            t.setDaemon(true);
            return t;
        };
        MemoryManager manager = MemoryManager.builder().name("untaken").threadFactory(heldWriter).build();
        manager.addProvider(new GatedProvider("open", t -> false));
        manager.syncAll("u", "a", "s");

        assertThat(manager.figures().pending()).isEqualTo(1);
        assertThat(manager.figures().batches()).isZero();
        await().atMost(WAIT).until(() -> manager.figures().oldestPendingAge().toMillis() >= 30);

        release.countDown();
        assertThat(manager.flushPending(WAIT)).isTrue();
        assertThat(manager.figures().oldestPendingAge()).isEqualTo(Duration.ZERO);
        assertThat(manager.figures().delivered()).isEqualTo(1);
    }

    /**
     * The flushes that waited are timed on the manager's ticker, for the timer of a metrics
     * registry: count and total time. A flush that returns at once is neither counted nor timed.
     */
    @Test
    void flushWaitsAreTimedOnTheTicker() throws Exception {
        ManualTicker ticker = new ManualTicker();
        GatedProvider gated = new GatedProvider("gated");
        MemoryManager manager = MemoryManager.builder().name("timed").ticker(ticker).build();
        manager.addProvider(gated);
        assertThat(manager.flushPending(WAIT)).isTrue(); // idle: returns at once
        manager.syncAll("u1", "a", "s");
        manager.syncAll("u2", "a", "s");
        assertThat(gated.awaitHeld(WAIT)).isTrue();

        CompletableFuture<Boolean> flush =
                CompletableFuture.supplyAsync(() -> manager.flushPending(Duration.ofSeconds(3)));
        await().atMost(WAIT).until(() -> manager.figures().flushWaits() == 1);
        ticker.advance(Duration.ofSeconds(5)); // past the flush's timeout: it returns false at its next slice
        assertThat(flush.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isFalse();
        WriteFigures afterFlush = manager.figures();
        assertThat(afterFlush.flushWaits()).isEqualTo(1);
        assertThat(afterFlush.flushWaitTime()).isEqualTo(Duration.ofSeconds(5));
        assertThat(afterFlush.drains()).isZero();
        assertThat(afterFlush.drainTime()).isEqualTo(Duration.ZERO);

        gated.open();
        manager.stop();
    }

    @Test
    void theDrainIsTimed() {
        GatedProvider gated = new GatedProvider("gated");
        MemoryManager manager = MemoryManager.builder().name("drain-timed").build();
        manager.addProvider(gated);
        manager.syncAll("u1", "a", "s");
        manager.syncAll("u2", "a", "s");
        assertThat(gated.awaitHeld(WAIT)).isTrue();

        DrainReport report = manager.stop(Duration.ofMillis(200)); // u1 runs on, u2 is abandoned at 180 ms
        gated.open();

        WriteFigures figures = manager.figures();
        assertThat(report.abandoned()).isEqualTo(1);
        assertThat(figures.drains()).isEqualTo(1);
        assertThat(figures.drainTime()).isBetween(Duration.ofMillis(150), report.elapsed());
        assertThat(figures.flushWaits()).isZero();
        assertThat(figures.flushWaitTime()).isEqualTo(Duration.ZERO);
    }

    @Test
    void figuresAddUpAcrossManagers() {
        WriteFigures a = new WriteFigures(10, 7, 1, 1, 2, 1, Duration.ofMillis(5), 3, 9, 4, 2, 1);
        WriteFigures b = new WriteFigures(4, 4, 0, 0, 0, 0, Duration.ofMillis(9), 1, 4, 4, 1, 0);
        assertThat(a.plus(b)).isEqualTo(new WriteFigures(14, 11, 1, 1, 2, 1, Duration.ofMillis(9), 4, 13, 4, 3, 1));
        assertThat(a.plus(WriteFigures.NONE)).isEqualTo(a);
        WriteFigures timed = new WriteFigures(1, 1, 0, 0, 0, 0, Duration.ZERO, 1, 1, 1, 2, 0, Duration.ofMillis(30), 1,
                Duration.ofMillis(400), SpoolFigures.NONE);
        WriteFigures twice = timed.plus(timed);
        assertThat(twice.flushWaitTime()).isEqualTo(Duration.ofMillis(60));
        assertThat(twice.drains()).isEqualTo(2);
        assertThat(twice.drainTime()).isEqualTo(Duration.ofMillis(800));
        assertThatThrownBy(() -> new WriteFigures(0, 0, 0, 0, 0, 0, Duration.ZERO, 0, 0, 0, 0, 0,
                Duration.ofMillis(-1), 0, Duration.ZERO, SpoolFigures.NONE))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("negative");
        assertThatThrownBy(() -> new WriteFigures(-1, 0, 0, 0, 0, 0, Duration.ZERO, 0, 0, 0, 0, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-1");
        assertThatThrownBy(() -> a.plus(null)).hasMessageContaining("other");
    }
}
