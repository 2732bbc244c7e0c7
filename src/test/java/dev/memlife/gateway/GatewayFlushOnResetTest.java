package dev.memlife.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.Message;
import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownListener;
import dev.memlife.agent.TeardownMode;
import dev.memlife.testing.GatedProvider;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Port of the seed {@code test_memory_flush_on_reset.py} onto the gateway's cleanup chokepoint.
 *
 * <p>Regression for hermes-agent #73297, memory rollback after {@code /reset}: the gateway's
 * cleanup chokepoint shut the memory manager down without first draining its background writer;
 * shutdown only gives the writer a bounded drain and abandons whatever is still queued, so a reset
 * could drop writes the session had already handed off, and the next session loaded stale memory.
 * The contract pinned here: the cleanup flushes the queued writes before the providers shut down,
 * so {@code disk_state_after_reset ⊇ last_known_state_before_reset}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GatewayFlushOnResetTest {

    private static final String SESSION = "sess-old";
    private static final String KEY = "agent:main:telegram:dm:1";
    /** Shortened so shutdown's drain alone abandons the pending write, as in production (#73297). */
    private static final Duration SHORT_DRAIN = Duration.ofMillis(100);
    /** How long the gate write occupies the writer once the cleanup has begun (the seed's 0.6 s). */
    private static final Duration GATE_DELAY = Duration.ofMillis(600);

    /** The "disk": records completed writes; the {@code __GATE__} write holds the single writer. */
    private final GatedProvider provider = new GatedProvider("recording",
            turn -> turn.assistantContent().equals("__GATE__"));
    private final MemoryManager manager = MemoryManager.builder().name(SESSION).drainTimeout(SHORT_DRAIN).build();

    @AfterEach
    void openGate() {
        provider.open();
    }

    /** Occupies the writer with the gate write and queues "fact-1" behind it: pending. */
    private void queueFactBehindGate() {
        manager.addProvider(provider);
        manager.initializeAll(SESSION);
        manager.syncAll("user msg a", "__GATE__", SESSION);
        manager.syncAll("user msg b", "fact-1", SESSION);
        assertThat(provider.awaitHeld(Duration.ofSeconds(10))).isTrue();
        assertThat(provider.assistantContents()).as("precondition: write must still be pending").isEmpty();
    }

    @Test
    void resetCleanupFlushesPendingWritesBeforeShutdown() {
        queueFactBehindGate();
        List<String> lastKnownStateBeforeReset = List.of("fact-1");
        // The gate write is slow: it clears GATE_DELAY after the cleanup began, long after the
        // shortened drain would have given up on "fact-1" behind it.
        AgentMemory agent = AgentMemory.builder(manager).listener((a, mode, phase) -> {
            if (phase == TeardownListener.Phase.FLUSH) {
                CompletableFuture.delayedExecutor(GATE_DELAY.toMillis(), TimeUnit.MILLISECONDS)
                        .execute(provider::open); // sleep-ok: the slow provider is the behaviour under test
            }
        }).build();
        agent.append(Message.user("earlier turn"));
        AgentGateway gateway = AgentGateway.create();
        gateway.put(KEY, agent);
        try {
            // The gateway cleanup path the /reset handler runs. No explicit flush here: the
            // contract is that the cleanup itself flushes before shutdown.
            ResetResult reset = gateway.reset(KEY);

            assertThat(reset.status()).isEqualTo(ResetResult.Status.CLOSED);
            List<String> diskStateAfterReset = provider.assistantContents();
            assertThat(diskStateAfterReset)
                    .as("#73297 regression: pending memory write lost across reset")
                    .containsAll(lastKnownStateBeforeReset);
            DrainReport report = reset.result().orElseThrow().drainReport().orElseThrow();
            assertThat(report.abandoned()).isZero();
            assertThat(reset.result().orElseThrow().requested()).isEqualTo(TeardownMode.CLOSE);
        } finally {
            gateway.stop();
        }
    }

    /** The same scenario without the flush: shutdown's bounded drain alone abandons the write. */
    @Test
    void shutdownWithoutFlushAbandonsThePendingWriteAndReportsIt() {
        queueFactBehindGate();

        DrainReport report = manager.stop();

        assertThat(report.abandoned()).isEqualTo(1);
        assertThat(report.abandonedWriteIds()).hasSize(1);
        assertThat(report.submitted()).isEqualTo(2);
        provider.open();
        assertThat(provider.assistantContents()).doesNotContain("fact-1");
    }
}
