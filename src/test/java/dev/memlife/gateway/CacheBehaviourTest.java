package dev.memlife.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.memlife.MemoryManager;
import dev.memlife.agent.AgentMemory;
import dev.memlife.testing.RecordingProvider;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/**
 * Small behaviours of the agent cache users notice, as hermes-agent's {@code gateway/run.py} has
 * them: looking does not reorder, a cache kept over its cap by mid-turn agents says so.
 */
@Timeout(30)
class CacheBehaviourTest {

    private final Logger logger = (Logger) LoggerFactory.getLogger(AgentGateway.class);
    private final ListAppender<ILoggingEvent> captured = new ListAppender<>();
    private AgentGateway gateway;

    @BeforeEach
    void capture() {
        captured.start();
        logger.addAppender(captured);
    }

    @AfterEach
    void stop() {
        logger.detachAppender(captured);
        if (gateway != null) {
            gateway.stop();
        }
    }

    private static AgentMemory agent(String key) {
        MemoryManager m = MemoryManager.builder().name(key).build();
        m.addProvider(new RecordingProvider("rec"));
        return AgentMemory.create(m);
    }

    /** gateway/run.py: only reusing a cached agent moves it to most recent; other lookups leave the order alone. */
    @Test
    void peekingDoesNotChangeWhichAgentIsEvictedNext() {
        gateway = AgentGateway.builder().maxAgents(2).build();
        gateway.acquire("a", CacheBehaviourTest::agent).close();
        gateway.acquire("b", CacheBehaviourTest::agent).close();
        assertThat(gateway.peek("a")).isPresent(); // looks at the least recently used one

        gateway.acquire("c", CacheBehaviourTest::agent).close();

        assertThat(gateway.peek("a")).as("still the least recently used: evicted").isEmpty();
        assertThat(gateway.peek("b")).isPresent();
        assertThat(gateway.peek("c")).isPresent();
    }

    @Test
    void leasingAnAgentAgainMakesItTheMostRecentlyUsed() {
        gateway = AgentGateway.builder().maxAgents(2).build();
        gateway.acquire("a", CacheBehaviourTest::agent).close();
        gateway.acquire("b", CacheBehaviourTest::agent).close();
        gateway.acquire("a", CacheBehaviourTest::agent).close(); // reused

        gateway.acquire("c", CacheBehaviourTest::agent).close();

        assertThat(gateway.peek("b")).isEmpty();
        assertThat(gateway.peek("a")).isPresent();
    }

    /**
     * gateway/run.py logs "Agent cache over cap ... held by mid-turn agents" on every insert;
     * memlife logs it once per burst (throttled) and evicts the agents once they are idle.
     */
    @Test
    void aCacheKeptOverItsCapByMidTurnAgentsSaysSoOncePerBurst() {
        gateway = AgentGateway.builder().name("busy").maxAgents(1).build();
        AgentLease a = gateway.acquire("a", CacheBehaviourTest::agent);
        AgentLease b = gateway.acquire("b", CacheBehaviourTest::agent);
        AgentLease c = gateway.acquire("c", CacheBehaviourTest::agent);

        assertThat(gateway.size()).isEqualTo(3);
        List<String> warnings = captured.list.stream().map(ILoggingEvent::getFormattedMessage)
                .filter(m -> m.contains("over its cap")).toList();
        assertThat(warnings).hasSize(1);
        assertThat(warnings.get(0)).contains("'busy'", "(2 > 1)", "1 excess agents are mid-turn");

        a.close();
        b.close();
        c.close();
        gateway.acquire("d", CacheBehaviourTest::agent).close();
        assertThat(gateway.size()).as("the idle ones are evicted at the next insert").isEqualTo(1);
        assertThat(gateway.peek("d")).isPresent();
    }
}
