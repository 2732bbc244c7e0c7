package dev.memlife.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.memlife.MemoryManager;
import dev.memlife.MemoryProvider;
import dev.memlife.SpoolFigures;
import dev.memlife.Turn;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.gateway.AgentLease;
import dev.memlife.spool.SharedLog;
import dev.memlife.spool.SpoolDirectory;
import dev.memlife.store.CuttableDataSource;
import dev.memlife.store.JdbcMemoryProvider;
import dev.memlife.store.PostgresAvailability;
import dev.memlife.store.StoredTurn;
import dev.memlife.testing.GatedProvider;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@code memlife.spool.shared=postgres} in a real Spring context on the real PostgreSQL (skipped
 * without it, failed under {@code MEMLIFE_REQUIRE_PG=1}): the starter opens one {@link SharedLog}
 * on the application's {@code DataSource} (a Hikari pool), the gateway's agents spool to it, the
 * context's close releases their leases (the log is closed before the pool), and its adopter
 * delivers what a dead replica left, through the gateway.
 * Under whichever Boot line the surefire execution runs.
 */
@Timeout(90)
class SharedLogStarterTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private final ApplicationContextRunner runner = StarterContexts.runner();
    private final String prefix = "ssl_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10) + "_";
    private final List<AutoCloseable> opened = new ArrayList<>();

    @TempDir
    Path dir;

    private static void requirePostgres() {
        PostgresAvailability.require();
    }

    @AfterEach
    void dropTables() throws Exception {
        for (AutoCloseable c : opened) {
            c.close();
        }
        PostgresAvailability.dropTables(prefix, "shared_log", "shared_log_leases", "turns", "session_ends",
                "schema_version");
    }

    /** A real pool, as a Boot application has: Spring closes it with the context, after the shared log. */
    private static DataSource postgres() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(PostgresAvailability.URL);
        config.setUsername(PostgresAvailability.USER);
        config.setPassword(PostgresAvailability.PASSWORD);
        config.setMaximumPoolSize(8);
        config.setPoolName("shared-log-test");
        return new HikariDataSource(config);
    }

    /** The shared log's settings: this test's tables, a lease of 1 s, a sweep every 200 ms. */
    private ApplicationContextRunner sharedLog(String replica) {
        return runner.withBean(DataSource.class, SharedLogStarterTest::postgres).withPropertyValues(
                "memlife.spool.shared=postgres", "memlife.spool.shared-table-prefix=" + prefix,
                "memlife.spool.replica=" + replica, "memlife.spool.lease=1s", "memlife.spool.sweep-interval=200ms",
                "memlife.store.table-prefix=" + prefix);
    }

    private List<SharedLog.Lease> leases() throws SQLException {
        try (Connection c = PostgresAvailability.connect()) {
            return SharedLog.inspect(c, prefix);
        }
    }

    /** The writes in the log table, by agent (ordinary writes only: not the kept failures). */
    private Map<String, Long> writesInTheLogTable() throws SQLException {
        Map<String, Long> byAgent = new LinkedHashMap<>();
        try (Connection c = PostgresAvailability.connect(); Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT agent, sum(last_seq - first_seq + 1) FROM " + prefix
                        + "shared_log WHERE NOT kept GROUP BY agent ORDER BY agent")) {
            while (r.next()) {
                byAgent.put(r.getString(1), r.getLong(2));
            }
        }
        return byAgent;
    }

    @Test
    void thePropertyWiresTheGatewaysAgentsOnTheSharedLogAndTheContextsCloseReleasesTheirLeases() throws Exception {
        requirePostgres();
        GatedProvider held = new GatedProvider("held"); // holds every delivery: the writes stay in the log table
        AtomicReference<SharedLog> log = new AtomicReference<>();
        sharedLog("r1").withBean("held", MemoryProvider.class, () -> held).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(SharedLog.class).doesNotHaveBean(SpoolDirectory.class);
            log.set(context.getBean(SharedLog.class));
            assertThat(context.getBeanFactory().getDependentBeans(context.getBeanNamesForType(DataSource.class)[0]))
                    .as("destroyed before the DataSource").contains("memlifeSharedLog");
            assertThat(log.get().replica()).isEqualTo("r1");
            assertThat(MemlifeAutoConfiguration.wiring(context.getBeanFactory()))
                    .contains("shared log memlifeSharedLog as replica r1");

            AgentGateway gateway = context.getBean(AgentGateway.class);
            for (String session : List.of("s1", "s2")) {
                try (AgentLease lease = gateway.acquire(session)) {
                    assertThat(lease.agent().recordTurn(session + "-1", "a", session)).isTrue();
                    assertThat(lease.agent().recordTurn(session + "-2", "a", session)).isTrue();
                    assertThat(lease.agent().memory().figures().spool()).isNotEqualTo(SpoolFigures.NONE);
                    assertThat(lease.agent().memory().awaitDurable(WAIT)).as("committed in the log").isTrue();
                }
            }
            assertThat(writesInTheLogTable()).as("the writes in %sshared_log", prefix)
                    .containsExactly(entry("s1", 2L), entry("s2", 2L));
            assertThat(leases()).extracting(SharedLog.Lease::agent).containsExactly("s1", "s2");
            assertThat(leases()).allSatisfy(l -> {
                assertThat(l.owner()).isEqualTo("r1");
                assertThat(l.live()).isTrue();
                assertThat(l.released()).isFalse();
                assertThat(l.lastPosition()).isEqualTo(2);
            });
            assertThat(log.get().figures().committed()).isEqualTo(4);
            assertThat(log.get().figures().heldAgents()).isEqualTo(2);

            Map<String, Object> details = healthDetails(context.getBean("memlifeHealthIndicator"));
            assertThat(details).containsKey("sharedLog");
            @SuppressWarnings("unchecked") Map<String, Object> shared = (Map<String, Object>) details.get("sharedLog");
            assertThat(shared).containsEntry("heldAgents", 2).containsEntry("committed", 4L)
                    .containsEntry("databaseFailures", 0L).containsKeys("pending", "takeovers", "lastTakeoverLag");

            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            context.getBean("memlifeSharedLogMetrics", MeterBinder.class).bindTo(registry);
            assertThat(registry.get("memlife.sharedlog.committed").tag("name", "memlifeSharedLog").functionCounter()
                    .count()).isEqualTo(4);
            assertThat(registry.get("memlife.sharedlog.agents").gauge().value()).isEqualTo(2);

            held.open();
            await().atMost(WAIT).until(() -> held.turns().size() == 4);
        });
        assertThat(held.turns()).extracting(Turn::userContent).containsExactlyInAnyOrder("s1-1", "s1-2", "s2-1", "s2-2");
        assertThat(leases()).as("after the context closed").hasSize(2).allSatisfy(l -> {
            assertThat(l.owner()).isEqualTo("r1");
            assertThat(l.released()).isTrue();
            assertThat(l.live()).isFalse();
            assertThat(l.backlog()).isZero();
        });
        assertThat(log.get().figures().heldAgents()).isZero();
    }

    @Test
    void aDeadReplicasBacklogIsAdoptedThroughTheGatewayIntoTheStore() throws Exception {
        requirePostgres();
        // The dead replica: its writes committed in the log, its delivery held, then cut off the database.
        CuttableDataSource db = new CuttableDataSource();
        SharedLog dead = SharedLog.postgres(db).tablePrefix(prefix).replica("dead")
                .lease(Duration.ofSeconds(1)).sweepInterval(Duration.ofMillis(200)).closeTimeout(Duration.ofSeconds(2))
                .open();
        opened.add(dead);
        GatedProvider neverDelivers = new GatedProvider("dead-store");
        MemoryManager atDead = MemoryManager.builder().name("dead/s9").spool(dead.agent("s9")).build();
        atDead.addProvider(neverDelivers);
        List<String> accepted = List.of("d-0", "d-1", "d-2", "d-3", "d-4");
        for (String m : accepted) {
            assertThat(atDead.syncAll(m, "r", "s9")).isTrue();
        }
        assertThat(atDead.awaitDurable(WAIT)).isTrue();
        assertThat(neverDelivers.awaitHeld(WAIT)).isTrue();
        db.cut(); // it dies: it never renews again

        try {
            sharedLog("r2").run(context -> {
                assertThat(context).hasNotFailed();
                JdbcMemoryProvider store = context.getBean(JdbcMemoryProvider.class);
                await().atMost(WAIT).until(() -> store.turns("s9").size() == accepted.size());
                assertThat(store.turns("s9")).extracting(StoredTurn::userContent).containsExactlyElementsOf(accepted);
                SharedLog log = context.getBean(SharedLog.class);
                assertThat(log.figures().adoptions()).isGreaterThanOrEqualTo(1);
                assertThat(log.figures().takeovers()).isEqualTo(1);
                assertThat(log.figures().replayed()).isEqualTo(accepted.size());
                assertThat(context.getBean(AgentGateway.class).peek("s9")).as("adopted through the gateway").isPresent();
            });
            assertThat(leases()).singleElement().satisfies(l -> {
                assertThat(l.agent()).isEqualTo("s9");
                assertThat(l.owner()).isEqualTo("r2");
                assertThat(l.epoch()).isEqualTo(2);
                assertThat(l.released()).isTrue();
                assertThat(l.backlog()).isZero();
            });
        } finally {
            neverDelivers.open();
            db.restore(); // its next renewal finds the lease taken
            atDead.stop(Duration.ofSeconds(2));
        }
    }

    @Test
    void theSharedLogsTimeoutsAndItsBoundOnUncommittedBytesComeFromTheProperties() throws Exception {
        requirePostgres();
        sharedLog("r3").withPropertyValues("memlife.spool.claim-timeout=250ms", "memlife.spool.shared-close-timeout=3s",
                "memlife.spool.shared-max-pending-bytes=2KB").run(context -> {
                    assertThat(context).hasNotFailed();
                    assertThat(context.getBean(SharedLog.class).toString())
                            .contains("claim 250 ms", "close 3000 ms", "at most 2048 bytes pending per agent");
                    try (AgentLease lease = context.getBean(AgentGateway.class).acquire("s7")) {
                        assertThat(lease.agent().recordTurn("small", "a", "s7")).isTrue();
                        assertThatThrownBy(() -> lease.agent().recordTurn("x".repeat(4_000), "a", "s7"))
                                .as("a write beyond the bound").isInstanceOf(RejectedExecutionException.class)
                                .hasMessageContaining("at most 2048");
                        assertThat(lease.agent().memory().awaitDurable(WAIT)).isTrue();
                        assertThat(lease.agent().memory().figures().rejected()).isEqualTo(1);
                    }
                });
        // Unset: the lease (1 s here) plus two sweeps (200 ms), 10 s, 64 MiB.
        sharedLog("r4").run(context -> assertThat(context.getBean(SharedLog.class).toString())
                .contains("claim 1400 ms", "close 10000 ms", "at most 67108864 bytes pending per agent"));
    }

    @Test
    void aLocalSpoolDirectoryAndTheSharedLogTogetherFailAtStartUp() {
        runner.withPropertyValues("memlife.spool.dir=" + dir.resolve("spools"), "memlife.spool.shared=postgres")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause()
                            .hasMessageContaining("memlife.spool.dir (" + dir.resolve("spools") + ")")
                            .hasMessageContaining("memlife.spool.shared (postgres) are both set")
                            .hasMessageContaining("remove one of them");
                });
    }

    @Test
    void theSharedLogWithoutADataSourceFailsAtStartUpAndUnsetThereIsNone() {
        runner.withPropertyValues("memlife.spool.shared=postgres").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                    .hasMessage("memlife.spool.shared=postgres needs the application's DataSource (one, or a primary "
                            + "one) on PostgreSQL, and the application has none");
        });
        runner.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(SharedLog.class)
                .doesNotHaveBean("memlifeSharedLogAdopter"));
    }

    private static Map<String, Object> healthDetails(Object indicator) throws Exception {
        Object health = indicator.getClass().getMethod("health").invoke(indicator);
        @SuppressWarnings("unchecked") Map<String, Object> details =
                (Map<String, Object>) health.getClass().getMethod("getDetails").invoke(health);
        return details;
    }
}
