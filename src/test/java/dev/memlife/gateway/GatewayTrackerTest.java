package dev.memlife.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.memlife.MemoryManager;
import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.SessionCommitter;
import dev.memlife.agent.TeardownMode;
import dev.memlife.agent.TeardownReport;
import dev.memlife.session.SessionCommitTracker;
import dev.memlife.testing.ManualTicker;
import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The gateway and the session tracker wired together, as hermes-webui does ({@code
 * api/session_lifecycle.py} with its agent cache: commit a session before evicting its agent, keep
 * the agent while the session is dirty) and as hermes-agent's {@code gateway/run.py} sweeps ({@code
 * _sweep_idle_cached_agents} leaves finalizable, unexpired sessions to the expiry watcher).
 */
@Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class GatewayTrackerTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final SessionCommitTracker tracker = SessionCommitTracker.create();
    private final Map<String, RecordingProvider> providers = new ConcurrentHashMap<>();

    private AgentMemory agent(String key) {
        RecordingProvider p = new RecordingProvider("rec-" + key);
        providers.put(key, p);
        MemoryManager m = MemoryManager.builder().name(key).build();
        m.addProvider(p);
        m.initializeAll(key);
        return AgentMemory.create(m);
    }

    /** One turn through the gateway, marked dirty in the tracker with {@code owner}. */
    private void turn(AgentGateway gateway, String key, SessionCommitter owner) {
        try (AgentLease lease = gateway.acquire(key, this::agent)) {
            lease.agent().memory().syncAll("hello", "hi", key);
            tracker.markTurnCompleted(key, owner != null ? owner : lease.agent());
        }
    }

    @Test
    void evictingADirtySessionCommitsItFirstAndExtractsOnlyOnce() {
        AgentGateway gateway = AgentGateway.builder().maxAgents(1)
                .beforeEviction(tracker.commitBeforeEviction(WAIT)).build();
        turn(gateway, "a", null);
        AgentMemory a = gateway.peek("a").orElseThrow();

        turn(gateway, "b", null); // the cap evicts "a"

        TeardownReport released = a.awaitTeardown(WAIT).orElseThrow();
        assertThat(released.requested()).isEqualTo(TeardownMode.RELEASE);
        assertThat(tracker.hasUncommittedWork("a")).isFalse();
        assertThat(providers.get("a").sessionEnds()).as("the tracker's commit extracted, the release did not")
                .hasSize(1);
        assertThat(providers.get("a").count("shutdown")).isEqualTo(1);
        gateway.stop(WAIT);
    }

    @Test
    void anAgentWhoseSessionStaysDirtyIsKeptOpenUntilItsWorkIsCommitted() {
        ManualTicker ticker = new ManualTicker();
        AgentGateway gateway = AgentGateway.builder().maxAgents(1).ticker(ticker)
                .beforeEviction(tracker.commitBeforeEviction(WAIT)).build();
        AtomicInteger attempts = new AtomicInteger();
        AgentMemory[] first = new AgentMemory[1];
        SessionCommitter failsOnce = () -> {
            if (attempts.incrementAndGet() == 1) {
                throw new IllegalStateException("the extraction service is down");
            }
            first[0].commitSession();
        };
        turn(gateway, "a", failsOnce);
        first[0] = gateway.peek("a").orElseThrow();

        EvictionResult evicted = gateway.evict("a");
        await().atMost(WAIT).until(() -> attempts.get() == 1);
        await().atMost(WAIT).until(() -> gateway.figures().agentsTearingDown() == 1);
        assertThat(first[0].isOpen()).as("kept open while its session is dirty").isTrue();
        assertThat(providers.get("a").count("shutdown")).isZero();
        assertThat(evicted.teardown().orElseThrow().toCompletableFuture()).isNotDone();

        gateway.sweepIdle(); // retries the commit of the kept agents
        TeardownReport released = evicted.teardown().orElseThrow().toCompletableFuture()
                .orTimeout(10, TimeUnit.SECONDS).join();
        assertThat(released.requested()).isEqualTo(TeardownMode.RELEASE);
        assertThat(tracker.hasUncommittedWork("a")).isFalse();
        assertThat(providers.get("a").sessionEnds()).hasSize(1);
        assertThat(providers.get("a").count("shutdown")).isEqualTo(1);
        gateway.stop(WAIT);
    }

    @Test
    void theStopTearsDownAKeptAgentToo() {
        AgentGateway gateway = AgentGateway.builder().beforeEviction(tracker.commitBeforeEviction(WAIT)).build();
        turn(gateway, "a", () -> {
            throw new IllegalStateException("never commits");
        });
        AgentMemory a = gateway.peek("a").orElseThrow();
        EvictionResult evicted = gateway.evict("a");
        await().atMost(WAIT).until(() -> gateway.figures().agentsTearingDown() == 1);

        GatewayStopReport report = gateway.stop(WAIT);

        assertThat(report.closed()).containsKey("a");
        assertThat(a.isTornDown()).isTrue();
        assertThat(evicted.teardown().orElseThrow().toCompletableFuture()).isCompleted();
        assertThat(providers.get("a").count("shutdown")).isEqualTo(1);
    }

    @Test
    void theIdleSweepLeavesAloneTheSessionsTheirExpiryWillFinalize() {
        ManualTicker ticker = new ManualTicker();
        AgentGateway gateway = AgentGateway.builder().ticker(ticker).idleTtl(Duration.ofMinutes(10))
                .idleSweepSkips(key -> key.startsWith("expiring")).build();
        gateway.acquire("expiring-1", this::agent).close();
        gateway.acquire("plain", this::agent).close();
        ticker.advance(Duration.ofMinutes(11));

        assertThat(gateway.sweepIdle()).containsExactly("plain");
        assertThat(gateway.peek("expiring-1")).isPresent();
        gateway.stop(WAIT);
    }
}
