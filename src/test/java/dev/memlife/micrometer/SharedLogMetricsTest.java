package dev.memlife.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.memlife.MemoryManager;
import dev.memlife.spool.LeaseLostException;
import dev.memlife.spool.SharedLog;
import dev.memlife.spool.SharedLogFigures;
import dev.memlife.store.CuttableDataSource;
import dev.memlife.store.PostgresAvailability;
import dev.memlife.testing.GatedProvider;
import dev.memlife.testing.RecordingProvider;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link SharedLogMetrics} in a real Micrometer registry: every meter by name, tags and value over
 * given figures, and over the live figures of two replicas of a real shared log on PostgreSQL
 * (skipped without it, failed under {@code MEMLIFE_REQUIRE_PG=1}), one of which dies and is taken
 * over.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SharedLogMetricsTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private final String prefix = "slm_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10) + "_";
    private final List<AutoCloseable> opened = new ArrayList<>();

    @AfterEach
    void dropTables() throws Exception {
        for (AutoCloseable c : opened) {
            c.close();
        }
        PostgresAvailability.dropTables(prefix, "shared_log", "shared_log_leases");
    }

    private static double counter(MeterRegistry registry, String name) {
        return registry.get(name).functionCounter().count();
    }

    private static double gauge(MeterRegistry registry, String name) {
        return registry.get(name).gauge().value();
    }

    private static double lagMillis(MeterRegistry registry) {
        return registry.get("memlife.sharedlog.takeover.lag").timeGauge().value(TimeUnit.MILLISECONDS);
    }

    @Test
    void everyMeterReadsItsFigureAndCarriesTheNameAndTheCallersTags() {
        AtomicReference<SharedLogFigures> figures = new AtomicReference<>(
                new SharedLogFigures(3, 100, 90, 10, 7, 5, 2, 4, 6, 1, 8, Duration.ofMillis(1500)));
        MeterRegistry registry = new SimpleMeterRegistry();
        new SharedLogMetrics("shared", figures::get, Tags.of("app", "chat")).bindTo(registry);

        assertThat(gauge(registry, "memlife.sharedlog.agents")).isEqualTo(3);
        assertThat(counter(registry, "memlife.sharedlog.appended")).isEqualTo(100);
        assertThat(counter(registry, "memlife.sharedlog.committed")).isEqualTo(90);
        assertThat(gauge(registry, "memlife.sharedlog.pending")).isEqualTo(10);
        assertThat(counter(registry, "memlife.sharedlog.commits")).isEqualTo(7);
        assertThat(counter(registry, "memlife.sharedlog.replayed")).isEqualTo(5);
        assertThat(counter(registry, "memlife.sharedlog.takeovers")).isEqualTo(2);
        assertThat(counter(registry, "memlife.sharedlog.adoptions")).isEqualTo(4);
        assertThat(counter(registry, "memlife.sharedlog.fenced.writes")).isEqualTo(6);
        assertThat(counter(registry, "memlife.sharedlog.fenced.leases")).isEqualTo(1);
        assertThat(counter(registry, "memlife.sharedlog.database.failures")).isEqualTo(8);
        assertThat(lagMillis(registry)).isEqualTo(1500);

        figures.set(new SharedLogFigures(0, 120, 120, 0, 9, 5, 2, 4, 6, 1, 9, Duration.ofMillis(1500)));
        assertThat(gauge(registry, "memlife.sharedlog.agents")).as("a meter read again reads the figures again").isZero();
        assertThat(counter(registry, "memlife.sharedlog.committed")).isEqualTo(120);
        assertThat(gauge(registry, "memlife.sharedlog.pending")).isZero();
        assertThat(counter(registry, "memlife.sharedlog.database.failures")).isEqualTo(9);

        assertThat(registry.getMeters().stream().map(m -> m.getId().getName()).sorted().collect(Collectors.toList()))
                .containsExactly("memlife.sharedlog.adoptions", "memlife.sharedlog.agents", "memlife.sharedlog.appended",
                        "memlife.sharedlog.commits", "memlife.sharedlog.committed",
                        "memlife.sharedlog.database.failures", "memlife.sharedlog.fenced.leases",
                        "memlife.sharedlog.fenced.writes", "memlife.sharedlog.pending", "memlife.sharedlog.replayed",
                        "memlife.sharedlog.takeover.lag", "memlife.sharedlog.takeovers");
        assertThat(registry.getMeters()).allSatisfy(m -> {
            assertThat(m.getId().getTags()).containsExactlyInAnyOrder(Tag.of("name", "shared"), Tag.of("app", "chat"));
            assertThat(m.getId().getDescription()).isNotBlank();
        });
    }

    @Test
    void aScrapeTakesOneSnapshotOfTheFigures() {
        SharedLogFigures figures = new SharedLogFigures(1, 2, 2, 0, 1, 0, 0, 0, 0, 0, 0, Duration.ZERO);
        int[] snapshots = {0};
        Supplier<SharedLogFigures> counted = () -> {
            snapshots[0]++;
            return figures;
        };
        MeterRegistry registry = new SimpleMeterRegistry();
        new SharedLogMetrics("shared", counted, Tags.empty()).bindTo(registry);

        registry.getMeters().forEach(m -> m.measure().forEach(measurement -> assertThat(measurement.getValue()).isNotNaN()));
        assertThat(snapshots[0]).isEqualTo(1);
        registry.getMeters().forEach(m -> m.measure().forEach(measurement -> assertThat(measurement.getValue()).isNotNaN()));
        assertThat(snapshots[0]).isEqualTo(2);
    }

    @Test
    void nullsAreRefused() {
        assertThatThrownBy(() -> new SharedLogMetrics(null, () -> null, Tags.empty()))
                .isInstanceOf(NullPointerException.class).hasMessage("name");
        assertThatThrownBy(() -> new SharedLogMetrics("shared", null, Tags.empty()))
                .isInstanceOf(NullPointerException.class).hasMessage("figures");
        assertThatThrownBy(() -> new SharedLogMetrics("shared", () -> null, null))
                .isInstanceOf(NullPointerException.class).hasMessage("tags");
    }

    /**
     * Two replicas of a real shared log: A takes writes (appended, committed, pending, commits,
     * agents), dies with them undelivered, B's sweeper adopts and takes its agent over (adoptions,
     * takeovers, replayed, the lag), and A, back on the database, finds its lease taken (fenced
     * leases and writes, database failures).
     */
    @Test
    void theMetersFollowTheLiveFiguresOfTwoReplicasThroughATakeover() throws Exception {
        requirePostgres();
        CuttableDataSource dbA = new CuttableDataSource();
        SharedLog a = replica("A", dbA, null);
        RecordingProvider atB = new RecordingProvider("store-at-B");
        SharedLog[] b = new SharedLog[1];
        b[0] = replica("B", new CuttableDataSource(), agent -> {
            MemoryManager m = MemoryManager.builder().name("B/" + agent).spool(b[0].agent(agent)).build();
            m.addProvider(atB);
            m.replaySpool();
            m.stop();
        });
        MeterRegistry registryA = new SimpleMeterRegistry();
        new SharedLogMetrics("A", a::figures, Tags.empty()).bindTo(registryA);
        MeterRegistry registryB = new SimpleMeterRegistry();
        new SharedLogMetrics("B", b[0]::figures, Tags.empty()).bindTo(registryB);
        assertThat(gauge(registryA, "memlife.sharedlog.agents")).isZero();
        assertThat(counter(registryA, "memlife.sharedlog.appended")).isZero();

        GatedProvider heldAtA = new GatedProvider("store-at-A");
        MemoryManager atA = MemoryManager.builder().name("A/agent-1").spool(a.agent("agent-1")).build();
        atA.addProvider(heldAtA);
        for (int i = 0; i < 10; i++) {
            assertThat(atA.syncAll("w-" + i, "r", "s")).isTrue();
        }
        assertThat(atA.awaitDurable(WAIT)).isTrue();
        assertThat(heldAtA.awaitHeld(WAIT)).isTrue();
        assertThat(gauge(registryA, "memlife.sharedlog.agents")).isEqualTo(1);
        assertThat(counter(registryA, "memlife.sharedlog.appended")).isEqualTo(10);
        assertThat(counter(registryA, "memlife.sharedlog.committed")).isEqualTo(10);
        assertThat(gauge(registryA, "memlife.sharedlog.pending")).isZero();
        assertThat(counter(registryA, "memlife.sharedlog.commits")).isBetween(1.0, 10.0);

        dbA.cut(); // A dies: B's sweeper adopts its agent once the lease expires
        await().atMost(WAIT).until(() -> atB.turns().size() == 10);
        await().atMost(WAIT).until(() -> counter(registryB, "memlife.sharedlog.replayed") == 10);
        assertThat(counter(registryB, "memlife.sharedlog.adoptions")).isGreaterThanOrEqualTo(1);
        assertThat(counter(registryB, "memlife.sharedlog.takeovers")).isEqualTo(1);
        await().atMost(WAIT).until(() -> lagMillis(registryB) > 0); // set just after the replay counts
        assertThat(lagMillis(registryA)).isZero();
        await().atMost(WAIT).until(() -> counter(registryA, "memlife.sharedlog.database.failures") >= 1);

        dbA.restore(); // A's next renewal finds the lease taken
        await().atMost(WAIT).until(() -> counter(registryA, "memlife.sharedlog.fenced.leases") == 1);
        assertThat(gauge(registryA, "memlife.sharedlog.agents")).isZero();
        assertThatThrownBy(() -> atA.syncAll("late", "r", "s")).isInstanceOf(LeaseLostException.class);
        // a meter may report the scrape's snapshot, taken before the write, for up to a second
        await().atMost(WAIT).until(() -> counter(registryA, "memlife.sharedlog.fenced.writes") == 1);
        heldAtA.open();
        atA.stop();
    }

    private SharedLog replica(String name, DataSource db, java.util.function.Consumer<String> adopter) {
        SharedLog.Builder builder = SharedLog.postgres(db).tablePrefix(prefix).replica(name).lease(Duration.ofSeconds(1))
                .sweepInterval(Duration.ofMillis(200)).claimTimeout(Duration.ofSeconds(10))
                .closeTimeout(Duration.ofSeconds(5));
        if (adopter != null) {
            builder.adopt(adopter);
        }
        SharedLog log = builder.open();
        opened.add(log);
        return log;
    }

    private static void requirePostgres() {
        PostgresAvailability.require();
    }
}
