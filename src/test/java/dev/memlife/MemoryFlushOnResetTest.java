package dev.memlife;

import static org.assertj.core.api.Assertions.assertThat;

import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Port of hermes-agent {@code tests/gateway/test_memory_flush_on_reset.py}: regression tests for
 * #73297, memory rolled back after {@code /reset}.
 *
 * <p>The gateway's cleanup chokepoint used to shut the memory providers down without first
 * draining the manager's background writer; the shutdown's bounded drain abandoned whatever was
 * still queued, so a reset silently dropped writes the session had already handed off. The fix:
 * flush pending writes before shutdown. Invariant: what the store holds after a reset ⊇ what was
 * accepted before it. Here the reset path is {@link #cleanupAgentResources}, a flush-then-shutdown
 * helper; the gateway's own chokepoint is pinned by {@code dev.memlife.gateway.GatewayFlushOnResetTest}.
 */
@Timeout(30)
class MemoryFlushOnResetTest {

    /** How long the gate write occupies the single writer, so a write queued behind it stays pending. */
    private static final Duration GATE_DELAY = Duration.ofMillis(600);
    /** The shortened drain: shorter than the gate, so shutdown alone abandons the queued write. */
    private static final Duration SHORT_DRAIN = Duration.ofMillis(100);

    /** Records completed writes (the "disk"); the {@code __GATE__} write is slow. */
    private static final class SlowGateStore extends RecordingProvider {
        SlowGateStore() {
            super("recording");
        }

        @Override
        public void syncTurn(Turn turn) {
            if (turn.assistantContent().equals("__GATE__")) {
                try {
                    Thread.sleep(GATE_DELAY.toMillis()); // sleep-ok: the slow write is the behaviour modelled
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return;
            }
            super.syncTurn(turn);
        }
    }

    /** The reset path with the fix: flush the queued writes, extract, then shut down. */
    static DrainReport cleanupAgentResources(MemoryManager manager, List<Message> transcript) {
        manager.flushPending(Duration.ofSeconds(10));
        manager.onSessionEnd(transcript);
        return manager.stop();
    }

    /** The reset path before the fix: extract and shut down, trusting the bounded drain. */
    static DrainReport cleanupWithoutFlush(MemoryManager manager, List<Message> transcript) {
        manager.onSessionEnd(transcript);
        return manager.stop();
    }

    @Test
    void cleanupFlushesPendingWritesBeforeShutdown() {
        SlowGateStore provider = new SlowGateStore();
        MemoryManager mgr = MemoryManager.builder().drainTimeout(SHORT_DRAIN).build();
        mgr.addProvider(provider);
        mgr.initializeAll("sess-old");
        mgr.syncAll("user msg a", "__GATE__", "sess-old");
        mgr.syncAll("user msg b", "fact-1", "sess-old");
        List<String> lastKnownStateBeforeReset = List.of("fact-1");
        assertThat(provider.assistantContents()).as("precondition: the write must still be pending").isEmpty();

        DrainReport report = cleanupAgentResources(mgr, List.of(Message.user("earlier turn")));

        assertThat(provider.assistantContents())
                .as("#73297 regression: pending memory write lost across reset")
                .containsAll(lastKnownStateBeforeReset);
        assertThat(report.abandoned()).isZero();
        assertThat(report.delivered()).isEqualTo(2);
    }

    @Test
    void withoutTheFlushTheShortDrainAbandonsTheWriteAndTheReportSaysSo() {
        SlowGateStore provider = new SlowGateStore();
        MemoryManager mgr = MemoryManager.builder().drainTimeout(SHORT_DRAIN).build();
        mgr.addProvider(provider);
        mgr.initializeAll("sess-old");
        mgr.syncAll("user msg a", "__GATE__", "sess-old");
        mgr.syncAll("user msg b", "fact-1", "sess-old");

        DrainReport report = cleanupWithoutFlush(mgr, List.of(Message.user("earlier turn")));

        assertThat(provider.assistantContents()).doesNotContain("fact-1");
        assertThat(report.abandoned()).isEqualTo(1);
        assertThat(report.stillRunning()).isEqualTo(1); // the gate write
        assertThat(report.abandonedWriteIds()).hasSize(1);
        assertThat(report.submitted()).isEqualTo(2);
    }
}
