package dev.memlife.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.memlife.MemoryManager;
import dev.memlife.Message;
import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownListener;
import dev.memlife.agent.TeardownMode;
import dev.memlife.agent.TeardownReport;
import dev.memlife.testing.GatedProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Port of the seed {@code test_agent_cache_memory_lifecycle.py}: the memory-provider lifecycle of
 * cached gateway agents, soft eviction ({@code release}, {@code commitThenRelease}) versus the
 * end-of-session teardown ({@code close}, the gateway's {@code /reset} cleanup). Each test is one
 * seed test and asserts the same events.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AgentCacheMemoryLifecycleTest {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String KEY = "agent:main:telegram:dm:1";

    private final List<String> events = Collections.synchronizedList(new ArrayList<>());

    private List<String> events() {
        synchronized (events) {
            return List.copyOf(events);
        }
    }

    /** A real agent and manager whose provider owns a writer thread released only by shutdown(). */
    private static AgentMemory agent(String sessionId, WriterProvider provider, MemoryManager.Builder manager,
            TeardownListener listener) {
        MemoryManager m = manager.name(sessionId).build();
        m.addProvider(provider);
        m.initializeAll(sessionId);
        return AgentMemory.builder(m).listener(listener).build();
    }

    private static AgentMemory agent(String sessionId, WriterProvider provider) {
        return agent(sessionId, provider, MemoryManager.builder(), TeardownListener.NONE);
    }

    /** The leak: soft eviction must stop a real provider's writer thread, without extraction. */
    @Test
    void releaseJoinsRealProviderWriterThread() {
        WriterProvider provider = new WriterProvider(events);
        AgentMemory agent = agent("mem-writer-evict-test", provider);
        assertThat(provider.writerAlive()).isTrue();

        TeardownReport first = agent.release();
        TeardownReport second = agent.release(); // idempotent: the teardown claim is once-only

        assertThat(provider.writerAlive()).isFalse();
        TeardownReport close = agent.teardown(TeardownMode.CLOSE); // a later hard close neither re-extracts nor shuts down twice
        assertThat(events()).containsExactly("shutdown");
        assertThat(first.ran()).isTrue();
        assertThat(first.drainReport()).isPresent();
        assertThat(second.ran()).isFalse();
        assertThat(close.ran()).isFalse();
        assertThat(close.owner()).isEqualTo(TeardownMode.RELEASE);
    }

    /**
     * Soft release must not cancel the retired agent's queued memory writes: the manager's bounded
     * drain alone (here zero) would abandon them, so release flushes first.
     */
    @Test
    void releaseLetsQueuedWritesFinishBeforeShutdown() throws InterruptedException {
        WriterProvider provider = new WriterProvider(events);
        CountDownLatch gate = new CountDownLatch(1);
        CountDownLatch flushing = new CountDownLatch(1);
        provider.onSync(turn -> {
            awaitLatch(gate);
            provider.record("sync:" + turn.userContent());
        });
        AgentMemory agent = agent("mem-release-flush-test", provider, MemoryManager.builder().drainTimeout(Duration.ZERO),
                (a, mode, phase) -> {
                    if (phase == TeardownListener.Phase.FLUSH) {
                        flushing.countDown();
                    }
                });
        for (String turn : List.of("a", "b", "c")) {
            agent.memory().syncAll(turn, "reply", "mem-release-flush-test");
        }
        Thread releaser = new Thread(agent::release, "releaser");
        releaser.start();
        try {
            await().atMost(WAIT).until(() -> flushing.getCount() == 0 || !releaser.isAlive());
        } finally {
            gate.countDown();
            releaser.join(WAIT.toMillis());
        }
        assertThat(events()).containsExactly("sync:a", "sync:b", "sync:c", "shutdown");
    }

    /**
     * close() arriving while release() is still inside the provider shutdown must not start
     * extraction or a second shutdown against the providers being torn down.
     */
    @Test
    void closeRacingAnInProgressSoftReleaseDoesNotReextract() throws InterruptedException {
        WriterProvider provider = new WriterProvider(events);
        CountDownLatch inShutdown = new CountDownLatch(1);
        CountDownLatch letFinish = new CountDownLatch(1);
        AtomicBoolean letFinishInTime = new AtomicBoolean();
        provider.onShutdown(() -> {
            inShutdown.countDown();
            letFinishInTime.set(awaitLatch(letFinish));
            provider.realShutdown();
        });
        AgentMemory agent = agent("mem-release-race-test", provider);
        Thread releaser = new Thread(agent::release, "releaser");
        releaser.start();
        TeardownReport close;
        try {
            assertThat(inShutdown.await(5, TimeUnit.SECONDS)).isTrue();
            close = agent.teardown(TeardownMode.CLOSE); // must return at once: a loser never waits for the winner
        } finally {
            letFinish.countDown();
            releaser.join(5_000);
        }
        assertThat(letFinishInTime).isTrue();
        assertThat(close.ran()).isFalse();
        assertThat(close.owner()).isEqualTo(TeardownMode.RELEASE);
        assertThat(events()).containsExactly("shutdown");
    }

    /**
     * The gateway's eviction must run end-of-session extraction BEFORE the providers shut down (a
     * shut-down provider can no longer commit).
     */
    @Test
    void gatewaySoftEvictCommitsMemoryBeforeProviderShutdown() throws Exception {
        WriterProvider provider = new WriterProvider(events);
        AgentMemory agent = agent("mem-commit-order-test", provider);
        AgentGateway gateway = AgentGateway.builder().evictionMode(TeardownMode.COMMIT_THEN_RELEASE).build();
        try {
            gateway.put(KEY, agent);
            EvictionResult eviction = gateway.evict(KEY);
            assertThat(eviction.status()).isEqualTo(EvictionResult.Status.EVICTED);
            TeardownReport result = eviction.teardown().orElseThrow().toCompletableFuture().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);

            assertThat(result.ran()).isTrue();
            assertThat(events()).containsExactly("on_session_end", "shutdown");
            assertThat(provider.writerAlive()).isFalse();
        } finally {
            agent.close();
            gateway.stop();
        }
    }

    /**
     * {@code /new} gives up waiting on its cleanup worker after the timeout and then evicts the
     * same agent. The worker is still inside onSessionEnd(), so the eviction must not shut the
     * providers down under that extraction, and the providers must be shut down exactly once, after
     * it. (In memlife the eviction is the last step of {@link AgentGateway#reset}, as in the seed's
     * {@code /new} handler; {@link ResetResult#eviction()} is that eviction.)
     */
    @Test
    void evictionAfterTimedOutResetCleanupLeavesShutdownToIt() throws Exception {
        WriterProvider provider = new WriterProvider(events);
        CountDownLatch inSessionEnd = new CountDownLatch(1);
        CountDownLatch letFinish = new CountDownLatch(1);
        provider.onSessionEnd(messages -> {
            provider.record("on_session_end:start");
            inSessionEnd.countDown();
            if (awaitLatch(letFinish)) {
                provider.record("on_session_end:done");
            }
        });
        AgentMemory agent = agent("mem-reset-evict-race-test", provider);
        agent.append(Message.user("remember this"));
        // Only a deadline for giving up on the worker: onSessionEnd blocks until letFinish, so the
        // reset always times out, however slow the machine.
        AgentGateway gateway = AgentGateway.builder().resetTimeout(Duration.ofMillis(50)).build();
        gateway.put(KEY, agent);
        try {
            ResetResult reset = gateway.reset(KEY);
            assertThat(reset.status()).isEqualTo(ResetResult.Status.TIMED_OUT);
            assertThat(inSessionEnd.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            TeardownReport eviction = reset.eviction().orElseThrow().toCompletableFuture().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);

            assertThat(agent.transcript()).isEmpty(); // the soft eviction finished
            assertThat(eviction.ran()).isFalse();
            assertThat(events()).as("eviction shut providers down mid-extraction").containsExactly("on_session_end:start");
            assertThat(provider.writerAlive()).isTrue();
        } finally {
            letFinish.countDown();
            gateway.stop();
        }
        assertThat(events()).containsExactly("on_session_end:start", "on_session_end:done", "shutdown");
        assertThat(provider.writerAlive()).isFalse();
        assertThat(provider.transcripts()).containsExactly(List.of(Message.user("remember this")));
    }

    /**
     * {@code /new}'s cleanup job can still be in its pre-extraction flush (up to 10 s) when {@code
     * /new} stops waiting and evicts the agent; that eviction must not shut the providers down
     * first. The flush is held by a real queued write behind a gated provider.
     */
    @Test
    void evictionWhileResetCleanupIsStillFlushingLeavesShutdownToIt() throws Exception {
        WriterProvider provider = new WriterProvider(events);
        GatedProvider gate = new GatedProvider("gate");
        CountDownLatch inFlush = new CountDownLatch(1);
        MemoryManager manager = MemoryManager.builder().name("mem-reset-flush-test").build();
        manager.addProvider(gate);
        manager.addProvider(provider);
        AgentMemory agent = AgentMemory.builder(manager).listener((a, mode, phase) -> {
            if (mode == TeardownMode.CLOSE && phase == TeardownListener.Phase.FLUSH) {
                inFlush.countDown();
            }
        }).build();
        agent.append(Message.user("remember this"));
        manager.syncAll("held", "reply", "mem-reset-flush-test");
        assertThat(gate.awaitHeld(WAIT)).isTrue();
        AgentGateway gateway = AgentGateway.builder().resetTimeout(Duration.ofMillis(50)).build();
        gateway.put(KEY, agent);
        try {
            ResetResult reset = gateway.reset(KEY);
            assertThat(reset.status()).isEqualTo(ResetResult.Status.TIMED_OUT);
            assertThat(inFlush.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            TeardownReport eviction = reset.eviction().orElseThrow().toCompletableFuture().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);

            assertThat(agent.transcript()).isEmpty(); // the soft eviction finished
            assertThat(eviction.ran()).isFalse();
            assertThat(events()).as("eviction shut providers down before the /new cleanup extracted").isEmpty();
        } finally {
            gate.open();
            gateway.stop();
        }
        assertThat(events()).containsExactly("on_session_end", "shutdown");
        assertThat(provider.writerAlive()).isFalse();
        // The extraction got the transcript as it was when the reset claimed the agent.
        assertThat(provider.transcripts()).containsExactly(List.of(Message.user("remember this")));
    }

    private static boolean awaitLatch(CountDownLatch latch) {
        try {
            return latch.await(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
