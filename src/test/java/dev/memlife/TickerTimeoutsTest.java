package dev.memlife;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.memlife.testing.GatedProvider;
import dev.memlife.testing.HangingProvider;
import dev.memlife.testing.Hook;
import dev.memlife.testing.ManualTicker;
import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Design section 2, contract 10: every timeout a manager measures follows its injected {@link
 * Ticker}. Here the enqueue wait of a full queue, the prefetch timeout and the providers' shutdown
 * timeout (the flush and the drain deadline are in {@link FlushBarrierTest} and {@link
 * ShutdownDrainTest}). Each test lets real time pass, three times the timeout, and sees the wait go
 * on; then it advances the ticker past the timeout and sees the wait end.
 */
@Timeout(30)
class TickerTimeoutsTest {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final Duration TIMEOUT = Duration.ofMillis(100);
    private static final Duration PAST_TIMEOUT = TIMEOUT.plusMillis(1);
    /** Real time the waits must outlast: three times the timeout. */
    private static final Duration REAL_TIME = TIMEOUT.multipliedBy(3);

    @Test
    void theEnqueueWaitOfAFullQueueFollowsTheInjectedTicker() throws Exception {
        ManualTicker ticker = new ManualTicker();
        GatedProvider gated = new GatedProvider("gated");
        MemoryManager m = MemoryManager.builder().ticker(ticker).queueCapacity(1).enqueueTimeout(TIMEOUT).build();
        m.addProvider(gated);
        try {
            m.syncAll("1", "held", "s");
            assertThat(gated.awaitHeld(WAIT)).as("the writer holds the first write").isTrue();
            m.syncAll("2", "queued", "s"); // the queue (capacity 1) is full now
            CompletableFuture<Boolean> third = CompletableFuture.supplyAsync(() -> m.syncAll("3", "waits", "s"));

            await().during(REAL_TIME).atMost(WAIT).until(() -> !third.isDone());
            ticker.advance(PAST_TIMEOUT);

            assertThatThrownBy(() -> third.get(WAIT.toSeconds(), TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(QueueFullException.class)
                    .hasMessageContaining("waited " + PAST_TIMEOUT.toMillis() + " ms");
        } finally {
            gated.open();
        }
        assertThat(m.flushPending(WAIT)).isTrue();
        DrainReport report = m.stop();

        assertThat(gated.assistantContents()).containsExactly("held", "queued");
        for (Turn written : gated.turns()) {
            assertThat(report.statusOf(written.writeId())).as(written.writeId()).isEqualTo(WriteStatus.DELIVERED);
        }
        assertThat(report.delivered()).isEqualTo(2);
        assertThat(report.rejected()).as("the write that waited").isEqualTo(1);
    }

    @Test
    void thePrefetchTimeoutFollowsTheInjectedTicker() throws Exception {
        ManualTicker ticker = new ManualTicker();
        HangingProvider hanging = new HangingProvider("hangs", Hook.PREFETCH);
        RecordingProvider answers = new RecordingProvider("answers") {
            @Override
            public String prefetch(String query, String sessionId) {
                return "recalled for " + query;
            }
        };
        MemoryManager m = MemoryManager.builder().ticker(ticker).prefetchTimeout(TIMEOUT).build();
        m.addProvider(hanging);
        m.addProvider(answers);
        try {
            CompletableFuture<String> recall = CompletableFuture.supplyAsync(() -> m.prefetchAll("tea", "s"));
            assertThat(hanging.awaitHanging(WAIT)).isTrue();

            await().during(REAL_TIME).atMost(WAIT).until(() -> !recall.isDone());
            ticker.advance(PAST_TIMEOUT);

            assertThat(recall.get(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo("recalled for tea");
        } finally {
            hanging.release();
        }
        m.stop();
    }

    @Test
    void theProvidersShutdownTimeoutFollowsTheInjectedTicker() throws Exception {
        ManualTicker ticker = new ManualTicker();
        HangingProvider hanging = new HangingProvider("hangs", Hook.SHUTDOWN);
        MemoryManager m = MemoryManager.builder().ticker(ticker).providerShutdownTimeout(TIMEOUT).build();
        m.addProvider(hanging);
        try {
            m.syncAll("u", "a", "s");
            assertThat(m.flushPending(WAIT)).isTrue();
            CompletableFuture<DrainReport> shutdown = CompletableFuture.supplyAsync(m::stop);
            assertThat(hanging.awaitHanging(WAIT)).as("shutdown() hangs").isTrue();

            await().during(REAL_TIME).atMost(WAIT).until(() -> !shutdown.isDone());
            ticker.advance(PAST_TIMEOUT);

            DrainReport report = shutdown.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(report.providersNotShutDown()).containsExactly("hangs");
            assertThat(report.delivered()).isEqualTo(1);
            assertThat(report.statusOf(hanging.turns().get(0).writeId())).isEqualTo(WriteStatus.DELIVERED);
        } finally {
            hanging.release();
        }
    }
}
