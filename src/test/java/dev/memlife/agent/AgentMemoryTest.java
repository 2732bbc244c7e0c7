package dev.memlife.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.memlife.MemoryManager;
import dev.memlife.Message;
import dev.memlife.agent.TeardownReport.Extraction;
import dev.memlife.testing.FailingProvider;
import dev.memlife.testing.HangingProvider;
import dev.memlife.testing.Hook;
import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AgentMemoryTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private static MemoryManager manager(RecordingProvider... providers) {
        MemoryManager m = MemoryManager.builder().build();
        for (RecordingProvider p : providers) {
            m.addProvider(p);
        }
        return m;
    }

    @Test
    void closeFlushesThenExtractsThenShutsDownOnce() {
        RecordingProvider provider = new RecordingProvider("rec");
        AgentMemory agent = AgentMemory.create(manager(provider));
        agent.append(Message.user("hi"));
        agent.memory().syncAll("a", "reply", "s");

        TeardownReport result = agent.teardown(TeardownMode.CLOSE);

        assertThat(provider.events()).containsExactly("sync:a", "on_session_end", "shutdown");
        assertThat(result.ran()).isTrue();
        assertThat(result.flushed()).isTrue();
        assertThat(result.extraction()).isEqualTo(Extraction.COMPLETED);
        assertThat(result.drainReport().orElseThrow().delivered()).isEqualTo(1);
        assertThat(agent.isTornDown()).isTrue();
        assertThat(agent.awaitTeardown(Duration.ZERO)).contains(result);
    }

    @Test
    void releaseDoesNotExtract() {
        RecordingProvider provider = new RecordingProvider("rec");
        AgentMemory agent = AgentMemory.create(manager(provider));

        TeardownReport result = agent.release();

        assertThat(provider.events()).containsExactly("shutdown");
        assertThat(result.extraction()).isEqualTo(Extraction.NOT_RUN);
        assertThat(agent.teardownOwner()).contains(TeardownMode.RELEASE);
    }

    @Test
    void loserReturnsAtOnceNamingTheOwnerAndAwaitTeardownWaitsForIt() throws Exception {
        HangingProvider provider = new HangingProvider("hang", Hook.ON_SESSION_END);
        AgentMemory agent = AgentMemory.create(manager(provider));
        CompletableFuture<TeardownReport> close = CompletableFuture.supplyAsync(() -> agent.teardown(TeardownMode.CLOSE));
        try {
            assertThat(provider.awaitHanging(WAIT)).isTrue();

            TeardownReport release = agent.release();

            assertThat(release.ran()).isFalse();
            assertThat(release.owner()).isEqualTo(TeardownMode.CLOSE);
            assertThat(release.drainReport()).isEmpty();
            assertThat(agent.awaitTeardown(Duration.ofMillis(20))).isEmpty();
        } finally {
            provider.release();
        }
        assertThat(agent.awaitTeardown(WAIT)).contains(close.get(10, TimeUnit.SECONDS));
        assertThat(provider.count("shutdown")).isEqualTo(1);
    }

    @Test
    void extractionGetsTheTranscriptAsItWasWhenTheClaimWasWon() {
        HangingProvider provider = new HangingProvider("hang", Hook.ON_SESSION_END);
        AgentMemory agent = AgentMemory.create(manager(provider));
        agent.append(Message.user("remember this"));
        CompletableFuture<TeardownReport> close = CompletableFuture.supplyAsync(() -> agent.teardown(TeardownMode.CLOSE));
        try {
            assertThat(provider.awaitHanging(WAIT)).isTrue();
            agent.clearTranscript();
            agent.append(Message.user("later"));
        } finally {
            provider.release();
        }
        close.join();
        assertThat(provider.sessionEnds()).containsExactly(List.of(Message.user("remember this")));
    }

    @Test
    void hangingExtractionIsBoundedByTheExtractionTimeout() {
        HangingProvider provider = new HangingProvider("hang", Hook.ON_SESSION_END);
        AgentMemory agent = AgentMemory.builder(manager(provider)).extractionTimeout(Duration.ofMillis(200)).build();
        try {
            TeardownReport result = agent.teardown(TeardownMode.CLOSE);

            assertThat(result.extraction()).isEqualTo(Extraction.TIMED_OUT);
            assertThat(result.drainReport()).isPresent();
            assertThat(agent.isTornDown()).isTrue();
        } finally {
            provider.release();
        }
    }

    /**
     * Regression (reliability issue, defect 7): when extraction timed out, teardown shut the
     * providers down while extraction still ran, and the next provider's {@code onSessionEnd} then
     * ran after its own {@code shutdown()}. Now the providers extraction has not passed yet are
     * shut down when it has, and the result says so.
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

    @Test
    void failingExtractionAndShutdownStillFinishTheClaim() {
        FailingProvider failing = new FailingProvider("failing", Hook.ON_SESSION_END, Hook.SHUTDOWN);
        RecordingProvider other = new RecordingProvider("other");
        AgentMemory agent = AgentMemory.create(manager(failing, other));

        TeardownReport result = agent.teardown(TeardownMode.CLOSE);

        assertThat(result.ran()).isTrue();
        assertThat(agent.isTornDown()).isTrue();
        assertThat(failing.events()).containsExactly("fail:ON_SESSION_END", "fail:SHUTDOWN");
        assertThat(other.events()).containsExactly("on_session_end", "shutdown");
    }

    @Test
    void commitSessionExtractsWithoutTearingDown() throws Exception {
        RecordingProvider provider = new RecordingProvider("rec");
        AgentMemory agent = AgentMemory.create(manager(provider));
        agent.append(Message.user("one"));

        agent.commitSession();

        assertThat(provider.events()).containsExactly("on_session_end");
        assertThat(agent.isOpen()).isTrue();
        agent.release();
        assertThat(provider.events()).containsExactly("on_session_end", "shutdown");
    }

    @Test
    void commitSessionIsRefusedOnceATeardownWasClaimed() {
        AgentMemory agent = AgentMemory.create(manager(new RecordingProvider("rec")));
        agent.release();

        assertThatThrownBy(agent::commitSession).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("commitSession refused");
    }

    /** A soft release arriving during a commit's extraction must not shut the providers down under it. */
    @Test
    void teardownWaitsForARunningCommitBeforeShuttingDown() throws Exception {
        HangingProvider provider = new HangingProvider("hang", Hook.ON_SESSION_END);
        ConcurrentLinkedQueue<TeardownListener.Phase> phases = new ConcurrentLinkedQueue<>();
        AgentMemory agent = AgentMemory.builder(manager(provider)).listener((a, mode, phase) -> phases.add(phase)).build();
        CompletableFuture<Void> commit = CompletableFuture.runAsync(() -> {
            try {
                agent.commitSession();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        Thread releaser = new Thread(agent::release, "releaser");
        try {
            assertThat(provider.awaitHanging(WAIT)).isTrue();
            releaser.start();
            await().atMost(WAIT).until(() -> phases.contains(TeardownListener.Phase.SHUTDOWN)
                    || (phases.contains(TeardownListener.Phase.FLUSH) && releaser.getState() == Thread.State.TIMED_WAITING));
            assertThat(provider.events()).doesNotContain("shutdown");
        } finally {
            provider.release();
        }
        commit.get(10, TimeUnit.SECONDS);
        releaser.join(WAIT.toMillis());
        assertThat(provider.events()).containsExactly("hang:ON_SESSION_END", "on_session_end", "shutdown");
    }

    @Test
    void teardownAsyncRunsOnTheCallerWhenTheExecutorRefuses() {
        RecordingProvider provider = new RecordingProvider("rec");
        AgentMemory agent = AgentMemory.create(manager(provider));

        CompletableFuture<TeardownReport> result = agent.teardownAsync(TeardownMode.CLOSE, r -> {
            throw new RejectedExecutionException("full");
        });

        assertThat(result).isCompleted();
        assertThat(result.join().ran()).isTrue();
        assertThat(provider.events()).containsExactly("on_session_end", "shutdown");
    }

    @Test
    void teardownAsyncRunsOnTheCallerWhenTheExecutorCannotStartAThread() {
        RecordingProvider provider = new RecordingProvider("rec");
        AgentMemory agent = AgentMemory.create(manager(provider));

        CompletableFuture<TeardownReport> result = agent.teardownAsync(TeardownMode.RELEASE, r -> {
            throw new OutOfMemoryError("unable to create native thread (simulated)");
        });

        assertThat(result.join().ran()).isTrue();
        assertThat(agent.isTornDown()).isTrue();
        assertThat(provider.events()).containsExactly("shutdown");
    }

    @Test
    void teardownAsyncClaimsOnTheCallersThreadBeforeTheWorkRuns() {
        RecordingProvider provider = new RecordingProvider("rec");
        AgentMemory agent = AgentMemory.create(manager(provider));
        List<Runnable> parked = new java.util.ArrayList<>();

        CompletableFuture<TeardownReport> close = agent.teardownAsync(TeardownMode.CLOSE, parked::add);
        TeardownReport release = agent.release();

        assertThat(release.ran()).isFalse();
        assertThat(provider.events()).isEmpty();
        parked.forEach(Runnable::run);
        assertThat(close.join().ran()).isTrue();
        assertThat(provider.events()).containsExactly("on_session_end", "shutdown");
    }

    @Test
    void awaitTeardownTimesOutWhenNothingTearsDown() {
        AgentMemory agent = AgentMemory.create(manager(new RecordingProvider("rec")));

        assertThat(agent.awaitTeardown(Duration.ofMillis(10))).isEmpty();
        assertThat(agent.isOpen()).isTrue();
    }

    @Test
    void badArgumentsAreNamed() {
        assertThatThrownBy(() -> AgentMemory.create(null)).isInstanceOf(NullPointerException.class).hasMessage("manager");
        AgentMemory.Builder builder = AgentMemory.builder(manager());
        assertThatThrownBy(() -> builder.flushTimeout(Duration.ofSeconds(-1)))
                .hasMessage("flushTimeout must not be negative, was PT-1S");
        assertThatThrownBy(() -> builder.extractionTimeout(Duration.ZERO))
                .hasMessage("extractionTimeout must be positive, was PT0S");
        AgentMemory agent = builder.build();
        assertThatThrownBy(() -> agent.append(null)).isInstanceOf(NullPointerException.class).hasMessage("message");
        assertThatThrownBy(() -> agent.teardown(null)).isInstanceOf(NullPointerException.class).hasMessage("mode");
        assertThatThrownBy(() -> agent.teardownAsync(TeardownMode.CLOSE, null))
                .isInstanceOf(NullPointerException.class).hasMessage("executor");
        assertThat(agent.isOpen()).isTrue();
    }
}
