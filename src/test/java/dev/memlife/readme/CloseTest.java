package dev.memlife.readme;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.memlife.MemoryManager;
import dev.memlife.WriteStatus;
import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownMode;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.session.BackgroundCommit;
import dev.memlife.session.SessionCommitTracker;
import dev.memlife.testing.GatedProvider;
import dev.memlife.testing.ManualTicker;
import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every owner of threads or connections is {@link AutoCloseable}, and its {@code close()} is the
 * bounded default of its rich form, as the "Which call when" table of {@code docs/core.md} says.
 * (The store's and the shutdown hook's {@code close()} are held by their own tests.)
 */
@Timeout(30)
class CloseTest {

    @Test
    void closingAManagerDrainsItsQueueAndShutsItsProvidersDown() {
        RecordingProvider store = new RecordingProvider("store");
        MemoryManager memory = MemoryManager.create();
        memory.addProvider(store);

        try (MemoryManager m = memory) {
            assertThat(m.syncAll("u", "a", "s1")).isTrue();
        }

        assertThat(memory.isShutdown()).isTrue();
        assertThat(store.turns()).hasSize(1);
        String id = store.turns().get(0).writeId();
        assertThat(memory.stop().statusOf(id)).isEqualTo(WriteStatus.DELIVERED);
        assertThat(store.events()).last().isEqualTo("shutdown");
    }

    @Test
    void aManagersCloseIsBoundedByItsBudgetsOnItsTicker() {
        ManualTicker ticker = new ManualTicker();
        GatedProvider stuck = new GatedProvider("stuck");
        MemoryManager memory = MemoryManager.builder().ticker(ticker).drainTimeout(Duration.ofSeconds(5))
                .providerShutdownTimeout(Duration.ofSeconds(1)).build();
        memory.addProvider(stuck);
        memory.syncAll("u1", "a1", "s1");
        memory.syncAll("u2", "a2", "s1");
        assertThat(stuck.awaitHeld(Duration.ofSeconds(10))).isTrue();

        CompletableFuture<Void> closing = CompletableFuture.runAsync(memory::close);
        await().during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(5)).until(() -> !closing.isDone());
        ticker.advance(Duration.ofSeconds(6)); // past drain (5 s) + provider shutdown (1 s)
        await().atMost(Duration.ofSeconds(10)).until(closing::isDone);

        List<String> stillRunning = memory.stop().stillRunningWriteIds();
        assertThat(stillRunning).hasSize(1).allMatch(id -> id.endsWith(":1"));
        String prefix = stillRunning.get(0).substring(0, stillRunning.get(0).length() - 1);
        assertThat(memory.stop().abandonedWriteIds()).containsExactly(prefix + "2");
        assertThat(memory.stop().unfinished()).as("the abandoned write, then the one still running")
                .containsExactly(prefix + "2", prefix + "1");
        stuck.open();
    }

    @Test
    void closingAnAgentIsItsHardClose() {
        RecordingProvider store = new RecordingProvider("store");
        MemoryManager memory = MemoryManager.create();
        memory.addProvider(store);
        AgentMemory agent = AgentMemory.create(memory);

        try (AgentMemory a = agent) {
            a.memory().syncAll("u", "a", "s1");
        }

        assertThat(agent.teardownOwner()).contains(TeardownMode.CLOSE);
        assertThat(store.sessionEnds()).as("the hard close extracts").hasSize(1);
        assertThat(store.turns()).extracting(t -> t.userContent()).containsExactly("u");
        agent.close(); // idempotent: a second close touches nothing
        assertThat(store.sessionEnds()).hasSize(1);
    }

    @Test
    void closingAGatewayStopsItAndClosesItsAgents() {
        RecordingProvider store = new RecordingProvider("store");
        AgentGateway gateway = AgentGateway.create();
        MemoryManager memory = MemoryManager.create();
        memory.addProvider(store);
        AgentMemory agent = AgentMemory.create(memory);

        try (AgentGateway g = gateway) {
            g.acquire("chat:1", key -> agent).close();
        }

        assertThat(gateway.isStopped()).isTrue();
        assertThat(agent.teardownOwner()).contains(TeardownMode.CLOSE);
        assertThat(store.events()).last().isEqualTo("shutdown");
    }

    @Test
    void closingATrackerCommitsWhatIsDirtyAndRefusesLaterBackgroundCommits() {
        List<String> commits = new CopyOnWriteArrayList<>();
        SessionCommitTracker tracker = SessionCommitTracker.create();
        tracker.markTurnCompleted("s1", () -> commits.add("s1"));

        try (SessionCommitTracker t = tracker) {
            assertThat(t.hasUncommittedWork("s1")).isTrue();
        }

        assertThat(commits).containsExactly("s1");
        assertThat(tracker.hasUncommittedWork("s1")).isFalse();
        tracker.markTurnCompleted("s2", () -> commits.add("s2"));
        assertThat(tracker.commitInBackground("s2").status())
                .isEqualTo(BackgroundCommit.Status.REFUSED_DRAINING);
        assertThat(commits).containsExactly("s1");
    }
}
