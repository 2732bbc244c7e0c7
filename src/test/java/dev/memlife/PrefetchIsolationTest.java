package dev.memlife;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.memlife.testing.HangingProvider;
import dev.memlife.testing.Hook;
import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Prefetch with a stuck provider, and the next turn's recall started early. Mirrors hermes-agent
 * {@code agent/memory_manager.py}: {@code _prefetch_provider} (a provider whose prefetch is still
 * running is skipped until it returns) and {@code queue_prefetch_all}.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class PrefetchIsolationTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    /** Calls of the hung provider's prefetch, hung or not. */
    private final AtomicInteger hungCalls = new AtomicInteger();
    private final HangingProvider hung = new HangingProvider("hung", Hook.PREFETCH) {
        @Override
        public String prefetch(String query, String sessionId) {
            hungCalls.incrementAndGet();
            return super.prefetch(query, sessionId);
        }
    };

    @AfterEach
    void release() {
        hung.release();
    }

    /** Recalls "recall:<query>@<session>", counting its calls; holds each call while {@link #hold} is closed. */
    private static final class Recalling extends RecordingProvider {
        final AtomicInteger calls = new AtomicInteger();
        volatile CountDownLatch hold = new CountDownLatch(0);

        Recalling(String name) {
            super(name);
        }

        @Override
        public String prefetch(String query, String sessionId) {
            calls.incrementAndGet();
            try {
                hold.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "";
            }
            return "recall:" + query + "@" + sessionId;
        }
    }

    @Test
    void aHungProviderHoldsOneThreadAndTheHealthyOneRecallsOnEveryTurn() {
        Recalling healthy = new Recalling("healthy");
        MemoryManager manager = MemoryManager.builder().name("prefetch").prefetchTimeout(Duration.ofSeconds(2)).build();
        manager.addProvider(hung); // registered first, as in the issue
        manager.addProvider(healthy);

        for (int turn = 1; turn <= 100; turn++) {
            assertThat(manager.prefetchAll("q" + turn, "s")).as("turn %d", turn).isEqualTo("recall:q" + turn + "@s");
            assertThat(hung.hangingCount()).as("threads held by the hung provider after turn %d", turn).isEqualTo(1);
        }
        assertThat(hungCalls.get()).isEqualTo(1); // skipped on every later turn
        assertThat(healthy.calls.get()).isEqualTo(100);

        hung.release(); // its one call returns: it is called again from the next turn on
        await().atMost(WAIT).until(() -> hung.hangingCount() == 0);
        await().atMost(WAIT).until(() -> {
            manager.prefetchAll("again", "s");
            return hungCalls.get() == 2; // the hung call, returned; and a new one
        });
        manager.stop();
    }

    @Test
    void aRecallQueuedForTheNextTurnIsHandedToItWithoutCallingTheProvidersAgain() {
        Recalling provider = new Recalling("recall");
        provider.hold = new CountDownLatch(1);
        MemoryManager manager = MemoryManager.create();
        manager.addProvider(provider);

        manager.queuePrefetchAll("next question", "s"); // returns while the provider is still held
        await().atMost(WAIT).until(() -> provider.calls.get() == 1);
        provider.hold.countDown();

        assertThat(manager.prefetchAll("next question", "s")).isEqualTo("recall:next question@s");
        assertThat(provider.calls.get()).isEqualTo(1);
        assertThat(manager.prefetchAll("next question", "s")).isEqualTo("recall:next question@s");
        assertThat(provider.calls.get()).as("a queued recall is used once").isEqualTo(2);
        manager.stop();
    }

    @Test
    void aRecallQueuedForAnotherQueryOrSessionIsDiscarded() {
        Recalling provider = new Recalling("recall");
        MemoryManager manager = MemoryManager.create();
        manager.addProvider(provider);

        manager.queuePrefetchAll("guess", "s");
        await().atMost(WAIT).until(() -> provider.calls.get() == 1);
        assertThat(manager.prefetchAll("actual", "s")).isEqualTo("recall:actual@s");

        manager.queuePrefetchAll("actual", "other session");
        assertThat(manager.prefetchAll("actual", "s")).isEqualTo("recall:actual@s");

        manager.queuePrefetchAll("first guess", "s");
        manager.queuePrefetchAll("second guess", "s"); // the newer replaces the older
        assertThat(manager.prefetchAll("second guess", "s")).isEqualTo("recall:second guess@s");
        manager.stop();
    }

    @Test
    void queueingNeverWaitsForAStuckProvider() {
        Recalling healthy = new Recalling("healthy");
        MemoryManager manager = MemoryManager.builder().prefetchTimeout(Duration.ofSeconds(2)).build();
        manager.addProvider(hung);
        manager.addProvider(healthy);

        manager.queuePrefetchAll("q", "s");
        assertThat(hung.awaitHanging(WAIT)).isTrue();
        manager.queuePrefetchAll("q", "s"); // the hung provider's call still runs: skipped, not a second thread
        assertThat(manager.prefetchAll("q", "s")).isEqualTo("recall:q@s");
        assertThat(hung.hangingCount()).isEqualTo(1);
        manager.stop();
    }
}
