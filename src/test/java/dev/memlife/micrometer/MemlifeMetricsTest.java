package dev.memlife.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.memlife.DrainReport;
import dev.memlife.Durability;
import dev.memlife.MemoryManager;
import dev.memlife.WriteFigures;
import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownMode;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.gateway.AgentLease;
import dev.memlife.gateway.ResetResult;
import dev.memlife.spool.Spool;
import dev.memlife.testing.FailingProvider;
import dev.memlife.testing.GatedProvider;
import dev.memlife.testing.RecordingProvider;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link MemlifeMetrics} in a real Micrometer registry ({@link SimpleMeterRegistry}): every meter
 * by name and tags, over a manager, a gateway and a plain source of figures, reading live values.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class MemlifeMetricsTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    private final MeterRegistry registry = new SimpleMeterRegistry();

    private double counter(String name, String... tags) {
        return registry.get(name).tags(tags).functionCounter().count();
    }

    private double gauge(String name, String... tags) {
        return registry.get(name).tags(tags).gauge().value();
    }

    private double millis(String timeGauge) {
        return registry.get(timeGauge).timeGauge().value(TimeUnit.MILLISECONDS);
    }

    private FunctionTimer timer(String name) {
        return registry.get(name).functionTimer();
    }

    /**
     * One manager through every way a write ends: delivered, failed, abandoned at the drain
     * deadline, rejected after shutdown; a flush that times out; the drain.
     */
    @Test
    void aManagersWritesByOutcomeItsQueueItsFlushesAndItsDrain() {
        GatedProvider gate = new GatedProvider("gate", t -> t.userContent().equals("hold"));
        FailingProvider failing = FailingProvider.failingWrites("failing", t -> t.userContent().equals("bad"));
        MemoryManager memory = MemoryManager.builder().name("metrics-manager").build();
        memory.addProvider(gate);
        memory.addProvider(failing);
        new MemlifeMetrics(memory, Tags.of("app", "chat")).bindTo(registry);

        memory.syncAll("ok", "a", "s");
        memory.syncAll("bad", "a", "s");
        assertThat(memory.flushPending(WAIT)).isTrue();
        memory.syncAll("hold", "a", "s");
        assertThat(gate.awaitHeld(WAIT)).isTrue();
        memory.syncAll("queued 1", "a", "s");
        memory.syncAll("queued 2", "a", "s");
        assertThat(memory.flushPending(Duration.ofMillis(50))).isFalse();

        assertThat(gauge("memlife.writes.pending")).isEqualTo(3);
        await().atMost(WAIT).until(() -> millis("memlife.writes.oldest.pending") > 0);

        DrainReport report = memory.stop(Duration.ofMillis(200));
        assertThat(memory.syncAll("late", "a", "s")).isFalse();
        gate.open();
        await().atMost(WAIT).until(() -> counter("memlife.writes", "outcome", "delivered") == 2); // "hold" ends

        assertThat(report.abandoned()).isEqualTo(2);
        assertThat(counter("memlife.writes.accepted")).isEqualTo(5);
        assertThat(counter("memlife.writes", "outcome", "failed")).isEqualTo(1);
        assertThat(counter("memlife.writes", "outcome", "abandoned")).isEqualTo(2);
        assertThat(counter("memlife.writes", "outcome", "rejected")).isEqualTo(1);
        assertThat(gauge("memlife.writes.pending")).isZero();
        assertThat(millis("memlife.writes.oldest.pending")).isZero();
        assertThat(counter("memlife.batches")).isGreaterThanOrEqualTo(2);
        assertThat(counter("memlife.batch.writes")).isEqualTo(3); // ok, bad, hold: the rest were abandoned
        assertThat(gauge("memlife.batch.size.max")).isBetween(1.0, 2.0);
        FunctionTimer flush = timer("memlife.flush");
        assertThat(flush.count()).isBetween(1.0, 2.0); // the first flush may have found the writer done
        assertThat(flush.totalTime(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(50);
        assertThat(counter("memlife.flush.timeouts")).isEqualTo(1);
        FunctionTimer drain = timer("memlife.drain");
        assertThat(drain.count()).isEqualTo(1);
        assertThat(drain.totalTime(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(100); // the deadline: ~180 ms
        assertThat(registry.get("memlife.writes").tags("outcome", "delivered").meter().getId().getTags())
                .containsExactlyInAnyOrder(Tag.of("name", "metrics-manager"), Tag.of("app", "chat"),
                        Tag.of("outcome", "delivered"));
        assertThat(registry.find("memlife.agents").meters()).as("a manager has no agents").isEmpty();
        assertThat(registry.find("memlife.teardowns").meters()).isEmpty();
    }

    @Test
    void aMeterReadsTheLiveValueEveryTime() {
        GatedProvider gate = new GatedProvider("gate");
        MemoryManager memory = MemoryManager.builder().name("metrics-live").build();
        memory.addProvider(gate);
        new MemlifeMetrics(memory).bindTo(registry);

        assertThat(gauge("memlife.writes.pending")).isZero();
        memory.syncAll("u", "a", "s");
        assertThat(gauge("memlife.writes.pending")).isEqualTo(1);
        assertThat(counter("memlife.writes.accepted")).isEqualTo(1);
        memory.syncAll("u", "a", "s");
        assertThat(gauge("memlife.writes.pending")).isEqualTo(2);
        gate.open();
        assertThat(memory.flushPending(WAIT)).isTrue();
        assertThat(gauge("memlife.writes.pending")).isZero();
        assertThat(counter("memlife.writes", "outcome", "delivered")).isEqualTo(2);
        memory.stop();
    }

    /** A scrape reads every meter: the meters share one snapshot, and the next scrape takes a new one. */
    @Test
    void aScrapeTakesOneSnapshotOfTheFiguresNotOnePerMeter() {
        AtomicInteger snapshots = new AtomicInteger();
        MemoryManager memory = MemoryManager.builder().name("metrics-snapshots").build();
        Supplier<WriteFigures> counted = () -> {
            snapshots.incrementAndGet();
            return memory.figures();
        };
        new MemlifeMetrics(counted, Tags.of("name", "counted")).bindTo(registry);

        scrape();
        assertThat(snapshots).hasValue(1);
        memory.syncAll("u", "a", "s");
        assertThat(memory.flushPending(WAIT)).isTrue();
        scrape();
        assertThat(snapshots).hasValue(2);
        assertThat(counter("memlife.writes.accepted")).isEqualTo(1);
        memory.stop();
    }

    private void scrape() {
        for (Meter meter : registry.getMeters()) {
            meter.measure().forEach(m -> assertThat(m.getValue()).as(meter.getId().toString()).isNotNaN());
        }
    }

    @Test
    void aSourceOfFiguresGetsTheWriteMetersWithItsTagsOnly() {
        WriteFigures figures = new WriteFigures(10, 6, 1, 2, 3, 1, Duration.ofSeconds(4), 5, 9, 3, 2, 1);
        new MemlifeMetrics(() -> figures, Tags.of("service", "chat")).bindTo(registry);

        assertThat(counter("memlife.writes.accepted")).isEqualTo(10);
        assertThat(counter("memlife.writes", "outcome", "delivered")).isEqualTo(6);
        assertThat(counter("memlife.writes", "outcome", "failed")).isEqualTo(1);
        assertThat(counter("memlife.writes", "outcome", "abandoned")).isEqualTo(2);
        assertThat(counter("memlife.writes", "outcome", "rejected")).isEqualTo(3);
        assertThat(gauge("memlife.writes.pending")).isEqualTo(1);
        assertThat(registry.get("memlife.writes.oldest.pending").timeGauge().value(TimeUnit.SECONDS)).isEqualTo(4);
        assertThat(counter("memlife.batches")).isEqualTo(5);
        assertThat(counter("memlife.batch.writes")).isEqualTo(9);
        assertThat(gauge("memlife.batch.size.max")).isEqualTo(3);
        assertThat(timer("memlife.flush").count()).isEqualTo(2);
        assertThat(counter("memlife.flush.timeouts")).isEqualTo(1);
        assertThat(timer("memlife.drain").count()).isZero();
        assertThat(registry.getMeters()).allSatisfy(m -> assertThat(m.getId().getTag("service")).isEqualTo("chat"));
        assertThat(registry.getMeters()).allSatisfy(m -> assertThat(m.getId().getTag("name")).isNull());
        assertThat(registry.getMeters()).allSatisfy(m -> assertThat(m.getId().getName()).startsWith("memlife."));
        assertThat(registry.find("memlife.agents").meters()).isEmpty();
    }

    @Test
    void aGatewaysAgentsByStateAndTeardownsByModeAndOutcome() {
        AgentGateway gateway = AgentGateway.builder().name("metrics-gateway").stopMode(TeardownMode.RELEASE).build();
        new MemlifeMetrics(gateway, Tags.of("app", "chat")).bindTo(registry);
        RecordingProvider store = new RecordingProvider("store");
        FailingProvider failing = FailingProvider.failingWrites("failing", t -> t.userContent().equals("bad"));

        AgentLease a = gateway.acquire("a", key -> agent(key, store));
        a.agent().memory().syncAll("a1", "x", "a");
        try (AgentLease b = gateway.acquire("b", key -> agent(key, failing))) {
            b.agent().memory().syncAll("bad", "x", "b");
        }
        assertThat(gauge("memlife.agents", "state", "leased")).isEqualTo(1);
        assertThat(gauge("memlife.agents", "state", "idle")).isEqualTo(1);
        assertThat(gauge("memlife.agents", "state", "tearing_down")).isZero();

        assertThat(gateway.reset("b").status()).isEqualTo(ResetResult.Status.CLOSED); // a failed write: incomplete
        a.close();
        gateway.stop(WAIT); // tears "a" down in the stop mode, RELEASE: every write delivered, completed
        await().atMost(WAIT).until(() -> gauge("memlife.agents", "state", "tearing_down") == 0);

        assertThat(gauge("memlife.agents", "state", "idle")).isZero();
        assertThat(gauge("memlife.agents", "state", "leased")).isZero();
        assertThat(counter("memlife.teardowns", "mode", "close", "outcome", "incomplete")).isEqualTo(1);
        assertThat(counter("memlife.teardowns", "mode", "release", "outcome", "completed")).isEqualTo(1);
        assertThat(registry.get("memlife.teardowns").functionCounters()).hasSize(9);
        assertThat(registry.get("memlife.teardowns").functionCounters().stream().mapToDouble(c -> c.count()).sum())
                .isEqualTo(2);
        assertThat(counter("memlife.writes.accepted")).isEqualTo(2);
        assertThat(counter("memlife.writes", "outcome", "delivered")).isEqualTo(1);
        assertThat(counter("memlife.writes", "outcome", "failed")).isEqualTo(1);
        assertThat(timer("memlife.drain").count()).as("each agent's manager drained once").isEqualTo(2);
        assertThat(registry.getMeters()).allSatisfy(m -> assertThat(m.getId().getTags())
                .contains(Tag.of("name", "metrics-gateway"), Tag.of("app", "chat")));
    }

    private static AgentMemory agent(String key, RecordingProvider provider) {
        MemoryManager m = MemoryManager.builder().name("metrics-" + key).build();
        m.useProvider(provider);
        return AgentMemory.create(m);
    }

    @Test
    void theSpoolMetersReadTheSpool() {
        GatedProvider gate = new GatedProvider("gate");
        MemoryManager memory = MemoryManager.builder().name("metrics-spool").spool(Spool.open(dir.resolve("spool")))
                .build();
        memory.addProvider(gate);
        new MemlifeMetrics(memory).bindTo(registry);

        assertThat(memory.syncAllDurable("u1", "a", "s", List.of(), WAIT)).isEqualTo(Durability.DURABLE);
        assertThat(memory.syncAllDurable("u2", "a", "s", List.of(), WAIT)).isEqualTo(Durability.DURABLE);

        assertThat(gauge("memlife.spool.backlog")).isEqualTo(2);
        assertThat(gauge("memlife.spool.bytes")).isPositive();
        assertThat(gauge("memlife.spool.segments")).isEqualTo(1);
        assertThat(counter("memlife.spool.commits")).isBetween(1.0, 2.0);
        assertThat(counter("memlife.spool.replayed")).isZero();
        assertThat(counter("memlife.spool.corrupt")).isZero();
        assertThat(counter("memlife.spool.failed.kept")).isZero();
        await().atMost(WAIT).until(() -> millis("memlife.spool.oldest.undelivered") > 0);
        gate.open();
        assertThat(memory.flushPending(WAIT)).isTrue();
        await().atMost(WAIT).until(() -> gauge("memlife.spool.backlog") == 0);
        memory.stop();
    }

    @Test
    void everyMeterIsDescribedAndAManagerHasTheSameMetersAsASourceOfFigures() {
        MemoryManager memory = MemoryManager.builder().name("metrics-names").build();
        new MemlifeMetrics(memory).bindTo(registry);
        SimpleMeterRegistry other = new SimpleMeterRegistry();
        new MemlifeMetrics(memory::figures, Tags.empty()).bindTo(other);

        assertThat(registry.getMeters()).allSatisfy(m -> assertThat(m.getId().getDescription()).isNotBlank());
        assertThat(registry.getMeters().stream().map(m -> m.getId().getName()).distinct().sorted()
                .collect(Collectors.toList())).containsExactly("memlife.batch.size.max", "memlife.batch.writes",
                        "memlife.batches", "memlife.drain", "memlife.flush", "memlife.flush.timeouts",
                        "memlife.spool.backlog", "memlife.spool.bytes", "memlife.spool.commits",
                        "memlife.spool.corrupt", "memlife.spool.failed.kept", "memlife.spool.oldest.undelivered",
                        "memlife.spool.replayed", "memlife.spool.segments", "memlife.writes", "memlife.writes.accepted",
                        "memlife.writes.oldest.pending", "memlife.writes.pending");
        assertThat(other.getMeters()).hasSameSizeAs(registry.getMeters());
        memory.stop();
    }

    @Test
    void nullsAreRefusedAtTheConstructor() {
        assertThatThrownBy(() -> new MemlifeMetrics((MemoryManager) null)).isInstanceOf(NullPointerException.class)
                .hasMessage("manager");
        assertThatThrownBy(() -> new MemlifeMetrics((AgentGateway) null)).isInstanceOf(NullPointerException.class)
                .hasMessage("gateway");
        assertThatThrownBy(() -> new MemlifeMetrics((Supplier<WriteFigures>) null, Tags.empty()))
                .isInstanceOf(NullPointerException.class).hasMessage("figures");
        assertThatThrownBy(() -> new MemlifeMetrics(MemoryManager.create(), null))
                .isInstanceOf(NullPointerException.class).hasMessage("tags");
    }
}
