package dev.memlife.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.memlife.MemoryManager;
import dev.memlife.WriteFigures;
import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownMode;
import dev.memlife.testing.FailingProvider;
import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link AgentGateway#figures()}: its agents, their writes together, and its teardowns. */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class GatewayFiguresTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private static AgentMemory agent(String key, RecordingProvider shared) {
        MemoryManager m = MemoryManager.builder().name(key).build();
        m.useProvider(shared);
        return AgentMemory.create(m);
    }

    @Test
    void agentsAndTheirWritesAreCountedWhileCachedAndAfterTheyLeave() {
        RecordingProvider shared = new RecordingProvider("shared");
        AgentGateway gateway = AgentGateway.builder().name("figures").build();
        assertThat(gateway.figures()).isEqualTo(new GatewayFigures(0, 0, 0, WriteFigures.NONE, Map.of()));

        AgentLease a = gateway.acquire("a", key -> agent(key, shared));
        a.agent().memory().syncAll("a1", "x", "a");
        a.agent().memory().syncAll("a2", "x", "a");
        try (AgentLease b = gateway.acquire("b", key -> agent(key, shared))) {
            b.agent().memory().syncAll("b1", "x", "b");
        }
        GatewayFigures two = gateway.figures();
        assertThat(two.agentsCached()).isEqualTo(2);
        assertThat(two.agentsLeased()).isEqualTo(1);
        assertThat(two.writes().accepted()).isEqualTo(3);

        EvictionResult evicted = gateway.evict("b");
        assertThat(evicted.status()).isEqualTo(EvictionResult.Status.EVICTED);
        evicted.teardown().orElseThrow().toCompletableFuture().join();
        await().atMost(WAIT).until(() -> gateway.figures().agentsTearingDown() == 0);
        a.close();
        assertThat(gateway.reset("a").status()).isEqualTo(ResetResult.Status.CLOSED);
        await().atMost(WAIT).until(() -> gateway.figures().agentsTearingDown() == 0);

        GatewayFigures after = gateway.figures();
        assertThat(after.agentsCached()).isZero();
        assertThat(after.writes().accepted()).isEqualTo(3);
        assertThat(after.writes().delivered()).isEqualTo(3);
        assertThat(after.writes().pending()).isZero();
        assertThat(after.teardowns()).containsOnlyKeys(TeardownMode.COMMIT_THEN_RELEASE, TeardownMode.CLOSE);
        assertThat(after.teardowns().get(TeardownMode.COMMIT_THEN_RELEASE))
                .isEqualTo(new GatewayFigures.TeardownCounts(1, 0, 0));
        assertThat(after.teardowns().get(TeardownMode.CLOSE)).isEqualTo(new GatewayFigures.TeardownCounts(1, 0, 0));
        assertThat(shared.turns()).extracting(t -> t.userContent()).containsExactlyInAnyOrder("a1", "a2", "b1");
        gateway.stop();
    }

    @Test
    void aTeardownWithAFailedWriteCountsAsIncompleteAndTheStopCountsInItsMode() {
        FailingProvider failing = FailingProvider.failingWrites("failing", t -> t.userContent().equals("bad"));
        AgentGateway gateway = AgentGateway.builder().stopMode(TeardownMode.RELEASE).build();
        try (AgentLease lease = gateway.acquire("k", key -> {
            MemoryManager m = MemoryManager.builder().name(key).build();
            m.useProvider(failing);
            return AgentMemory.create(m);
        })) {
            lease.agent().memory().syncAll("bad", "x", "k");
            lease.agent().memory().syncAll("good", "x", "k");
        }
        try (AgentLease lease = gateway.acquire("j", key -> agent(key, new RecordingProvider("rec")))) {
            lease.agent().memory().syncAll("fine", "x", "j");
        }
        gateway.stop(WAIT);

        GatewayFigures figures = gateway.figures();
        assertThat(figures.teardowns()).containsOnlyKeys(TeardownMode.RELEASE);
        assertThat(figures.teardowns().get(TeardownMode.RELEASE)).isEqualTo(new GatewayFigures.TeardownCounts(1, 1, 0));
        assertThat(figures.writes().failed()).isEqualTo(1);
        assertThat(figures.writes().delivered()).isEqualTo(2);
        assertThat(figures.agentsCached()).isZero();
        assertThat(figures.agentsTearingDown()).isZero();
    }

    /**
     * Agents come and go all the time (a cache of 3 over 12 keys) while a poller reads the
     * figures: the counters never go back, and at the end they hold every write exactly once.
     */
    @Test
    void countersNeverGoBackWhileAgentsComeAndGo() throws Exception {
        RecordingProvider shared = new RecordingProvider("shared");
        AgentGateway gateway = AgentGateway.builder().maxAgents(3).build();
        AtomicLong accepted = new AtomicLong();
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<String> wentBack = new AtomicReference<>();
        Thread poller = new Thread(() -> {
            WriteFigures last = WriteFigures.NONE;
            while (!done.get()) {
                WriteFigures now = gateway.figures().writes();
                if (now.accepted() < last.accepted() || now.delivered() < last.delivered()) {
                    wentBack.compareAndSet(null, last + " then " + now);
                }
                last = now;
            }
        });
        poller.start();
        List<Thread> writers = new ArrayList<>();
        for (int w = 0; w < 3; w++) {
            Thread t = new Thread(() -> {
                for (int i = 0; i < 400; i++) {
                    String key = "k" + ThreadLocalRandom.current().nextInt(12);
                    try (AgentLease lease = gateway.acquire(key, k -> agent(k, shared))) {
                        if (lease.agent().memory().syncAll("t", "x", key)) {
                            accepted.incrementAndGet();
                        }
                    }
                }
            });
            t.start();
            writers.add(t);
        }
        for (Thread t : writers) {
            t.join(TimeUnit.SECONDS.toMillis(30));
        }
        gateway.stop(WAIT);
        await().atMost(WAIT).until(() -> gateway.figures().agentsTearingDown() == 0);
        done.set(true);
        poller.join(TimeUnit.SECONDS.toMillis(10));

        assertThat(wentBack.get()).as("a counter went back").isNull();
        WriteFigures end = gateway.figures().writes();
        assertThat(end.accepted()).isEqualTo(accepted.get()).isEqualTo(1_200);
        assertThat(end.delivered()).isEqualTo(shared.turns().size()).isEqualTo(1_200);
        assertThat(end.pending()).isZero();
    }
}
