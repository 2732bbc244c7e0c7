package dev.memlife.readme;

import static org.assertj.core.api.Assertions.assertThat;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.Message;
import dev.memlife.WriteStatus;
import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownMode;
import dev.memlife.agent.TeardownReport;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.gateway.AgentLease;
import dev.memlife.gateway.GatewayStopReport;
import dev.memlife.session.CommitResult;
import dev.memlife.session.SessionCommitTracker;
import dev.memlife.session.ShutdownHooks;
import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The examples of the README and of the guides it sends readers to ({@code docs/core.md}, {@code
 * docs/teardown.md}, {@code docs/gateway.md}, {@code docs/sessions.md}), run with assertions on what
 * they promise, so neither the front door nor the guides can drift from the code.
 */
@Timeout(60)
class ReadmeExamplesTest {

    @Test
    void theFirstScreensFiveLinesDeliverAndReportTheWrite() {
        RecordingProvider myStore = new RecordingProvider("store");
        String userText = "hi";
        String assistantText = "hello";
        String sessionId = "s-1";

        MemoryManager memory = MemoryManager.builder().name("agent-42").build();
        memory.addProvider(myStore);
        memory.syncAll(userText, assistantText, sessionId);
        DrainReport report = memory.stop();
        System.out.println(report);

        assertThat(myStore.turns()).hasSize(1);
        assertThat(report.statusOf(myStore.turns().get(0).writeId())).isEqualTo(WriteStatus.DELIVERED);
        assertThat(report.complete()).isTrue();
    }

    @Test
    void theMemoryManagerExampleDeliversAndReports() {
        RecordingProvider myStore = new RecordingProvider("store");
        String sessionId = "s-1";
        MemoryManager memory = MemoryManager.builder().name("agent-42").drainTimeout(Duration.ofSeconds(5)).build();
        memory.addProvider(myStore);
        memory.initializeAll(sessionId);
        memory.syncAll("hi", "hello", sessionId);
        memory.flushPending(Duration.ofSeconds(10));
        memory.onSessionEnd(List.of(Message.user("hi"), Message.assistant("hello")));
        DrainReport report = memory.stop();

        assertThat(report.delivered()).isEqualTo(1);
        assertThat(myStore.events()).containsExactly("initialize:s-1", "sync:hi", "on_session_end", "shutdown");
    }

    @Test
    void theTeardownGatewayAndHookExamplesWork() {
        RecordingProvider store = new RecordingProvider("store");
        MemoryManager memory = MemoryManager.create();
        memory.addProvider(store);
        AgentMemory agent = AgentMemory.create(memory);
        agent.append(Message.user("u"));
        agent.append(Message.assistant("a"));
        agent.memory().syncAll("u", "a", "s");
        TeardownReport result = agent.teardown(TeardownMode.CLOSE);
        assertThat(result.drainReport()).hasValueSatisfying(r -> assertThat(r.delivered()).isEqualTo(1));

        AgentGateway gateway = AgentGateway.builder().maxAgents(128).idleTtl(Duration.ofHours(1)).build();
        RecordingProvider gatewayStore = new RecordingProvider("store");
        try (AgentLease lease = gateway.acquire("key", key -> {
            MemoryManager m = MemoryManager.create();
            m.addProvider(gatewayStore);
            return AgentMemory.create(m);
        })) {
            lease.agent().memory().syncAll("u", "a", "key");
        }
        gateway.reset("key");
        GatewayStopReport stop = gateway.stop(Duration.ofSeconds(30));
        assertThat(stop.notFinished()).isEmpty();
        assertThat(gatewayStore.events()).containsExactly("sync:u", "on_session_end", "shutdown");

        SessionCommitTracker tracker = SessionCommitTracker.builder().name("webui").build();
        MemoryManager webManager = MemoryManager.create();
        AgentMemory webAgent = AgentMemory.create(webManager);
        tracker.markTurnCompleted("sid", webAgent);
        CommitResult r = tracker.commit("sid", webAgent, true, Duration.ofSeconds(5));
        assertThat(r.committed()).isTrue();

        ShutdownHooks hooks = ShutdownHooks.install(Duration.ofSeconds(20));
        try {
            hooks.register(tracker);
            hooks.register("gateway", gateway::stop);
            ShutdownHooks.Registration reg = hooks.register(webManager);
            reg.close();
        } finally {
            hooks.close();
        }
    }
}
