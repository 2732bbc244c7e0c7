package dev.memlife;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.memlife.testing.GatedProvider;
import dev.memlife.testing.ManualTicker;
import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Design section 2, contracts 4 and 10: {@code flushPending} is a barrier, and its time is testable. */
@Timeout(30)
class FlushBarrierTest {

    @Test
    void flushCoversOnlyWritesAcceptedBeforeIt() throws Exception {
        HeldWrites provider = new HeldWrites("held").hold("A").hold("C");
        MemoryManager m = MemoryManager.create();
        m.addProvider(provider);
        m.syncAll("1", "A", "s");
        m.syncAll("2", "B", "s");
        assertThat(provider.awaitHeld("A")).isTrue();

        CompletableFuture<Boolean> flush = CompletableFuture.supplyAsync(() -> m.flushPending(Duration.ofSeconds(20)));
        await().atMost(Duration.ofSeconds(10)).until(() -> m.pendingWrites() == 2 && !flush.isDone());
        m.syncAll("3", "C", "s"); // accepted after the flush began: must not extend it
        provider.release("A");

        assertThat(flush.get(20, TimeUnit.SECONDS)).isTrue();
        assertThat(provider.assistantContents()).containsExactly("A", "B");
        assertThat(provider.awaitHeld("C")).isTrue(); // C is still held, yet the flush returned
        provider.release("C");
        m.stop();
    }

    @Test
    void flushReturnsAtOnceWithoutTouchingTheWriterWhenNothingIsPending() {
        MemoryManager m = MemoryManager.create();
        m.addProvider(new RecordingProvider("rec"));

        assertThat(m.flushPending(Duration.ofSeconds(30))).isTrue();
        assertThat(m.writerThread()).isNull();

        m.syncAll("u", "a", "s");
        assertThat(m.flushPending(Duration.ofSeconds(10))).isTrue();
        assertThat(m.flushPending(Duration.ZERO)).isTrue(); // idle again: no wait at all
        m.stop();
    }

    @Test
    void flushReturnsFalseWhenTheTimeoutPasses() {
        GatedProvider gated = new GatedProvider("gated");
        MemoryManager m = MemoryManager.create();
        m.addProvider(gated);
        try {
            m.syncAll("u", "a", "s");
            assertThat(gated.awaitHeld(Duration.ofSeconds(10))).isTrue();

            assertThat(m.flushPending(Duration.ofMillis(50))).isFalse();
            assertThat(m.flushPending(Duration.ZERO)).isFalse();
        } finally {
            gated.open();
        }
        m.stop();
    }

    @Test
    void flushReturnsFalseOnInterruptAndRestoresTheFlag() throws Exception {
        GatedProvider gated = new GatedProvider("gated");
        MemoryManager m = MemoryManager.create();
        m.addProvider(gated);
        AtomicReference<Boolean> result = new AtomicReference<>();
        AtomicBoolean flagAfter = new AtomicBoolean();
        try {
            m.syncAll("u", "a", "s");
            assertThat(gated.awaitHeld(Duration.ofSeconds(10))).isTrue();
            Thread flusher = new Thread(() -> {
                result.set(m.flushPending(Duration.ofSeconds(60)));
                flagAfter.set(Thread.currentThread().isInterrupted());
            });
            flusher.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> flusher.getState() == Thread.State.TIMED_WAITING);
            flusher.interrupt();
            flusher.join(10_000);
        } finally {
            gated.open();
        }
        assertThat(result.get()).isFalse();
        assertThat(flagAfter.get()).isTrue();
        m.stop();
    }

    @Test
    void flushFromTheWriterThreadItselfDoesNotDeadlock() {
        AtomicReference<MemoryManager> self = new AtomicReference<>();
        AtomicReference<Boolean> insideResult = new AtomicReference<>();
        RecordingProvider reentrant = new RecordingProvider("reentrant") {
            @Override
            public void syncTurn(Turn turn) {
                insideResult.set(self.get().flushPending(Duration.ofSeconds(60)));
                super.syncTurn(turn);
            }
        };
        MemoryManager m = MemoryManager.create();
        self.set(m);
        m.addProvider(reentrant);

        m.syncAll("u", "a", "s");

        assertThat(m.flushPending(Duration.ofSeconds(10))).isTrue();
        assertThat(insideResult.get()).isFalse(); // the barrier cannot be met from inside; it says so at once
        m.stop();
    }

    @Test
    void flushNeverThrowsOnAnOddTimeout() {
        MemoryManager m = MemoryManager.create();
        m.addProvider(new RecordingProvider("rec"));
        m.syncAll("u", "a", "s");

        assertThat(m.flushPending(Duration.ofDays(365_000))).isTrue();
        assertThat(m.flushPending(Duration.ofSeconds(-5))).isTrue();
        assertThat(m.flushPending(null)).isTrue();
        m.stop();
    }

    @Test
    void flushTimeoutFollowsTheInjectedTicker() throws Exception {
        ManualTicker ticker = new ManualTicker();
        GatedProvider gated = new GatedProvider("gated");
        MemoryManager m = MemoryManager.builder().ticker(ticker).build();
        m.addProvider(gated);
        try {
            m.syncAll("u", "a", "s");
            assertThat(gated.awaitHeld(Duration.ofSeconds(10))).isTrue();
            CompletableFuture<Boolean> flush = CompletableFuture.supplyAsync(() -> m.flushPending(Duration.ofSeconds(1)));

            // Real time passes, the manual ticker does not: the flush keeps waiting.
            await().pollDelay(Duration.ofMillis(200)).atMost(Duration.ofSeconds(10)).until(() -> !flush.isDone());
            ticker.advance(Duration.ofMillis(1_001));

            assertThat(flush.get(10, TimeUnit.SECONDS)).isFalse();
        } finally {
            gated.open();
        }
        m.stop();
    }

    @Test
    void flushReturnsFalseAtOnceForAWriteTheDrainAbandoned() throws Exception {
        HeldWrites provider = new HeldWrites("held").hold("A");
        MemoryManager m = MemoryManager.create();
        m.addProvider(provider);
        m.syncAll("1", "A", "s");
        m.syncAll("2", "B", "s");
        assertThat(provider.awaitHeld("A")).isTrue();
        CompletableFuture<Boolean> flush = CompletableFuture.supplyAsync(() -> m.flushPending(Duration.ofSeconds(60)));
        await().atMost(Duration.ofSeconds(10)).until(() -> !flush.isDone());

        DrainReport report = m.stop(Duration.ZERO);

        assertThat(flush.get(10, TimeUnit.SECONDS)).isFalse();
        assertThat(report.abandoned()).isEqualTo(1);
        provider.release("A");
    }
}
