package dev.memlife.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.memlife.MemoryManager;
import dev.memlife.MemoryProvider;
import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownMode;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.gateway.AgentLease;
import dev.memlife.micrometer.MemlifeMetrics;
import dev.memlife.session.SessionCommitTracker;
import dev.memlife.store.JdbcMemoryProvider;
import dev.memlife.testing.HangingProvider;
import dev.memlife.testing.Hook;
import dev.memlife.testing.RecordingProvider;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.SmartLifecycle;

/**
 * The auto-configuration's conditions and properties, in a real Spring context ({@code
 * ApplicationContextRunner}), under whichever Boot line the surefire execution runs (3.5.7 by
 * default, 4.0.7 in the {@code boot4} execution).
 */
@Timeout(60)
class MemlifeAutoConfigurationTest {

    private final ApplicationContextRunner runner = StarterContexts.runner();

    @TempDir
    Path dir;

    private DataSource sqlite() {
        return StarterContexts.sqlite(dir.resolve("memory.db"));
    }

    @Test
    void runsUnderTheBootLineOfThisSurefireExecution() {
        assertThat(SpringBootVersion.getVersion()).isEqualTo(System.getProperty("memlife.expectedBoot", "3.5.7"));
    }

    @Test
    void withoutADataSourceItCreatesTheGatewayTrackerAndLifecycleButNoStore() {
        runner.run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(AgentGateway.class)
                    .hasSingleBean(SessionCommitTracker.class).hasSingleBean(MemlifeLifecycle.class)
                    .doesNotHaveBean(JdbcMemoryProvider.class);
        });
    }

    @Test
    void withOneDataSourceItCreatesTheSharedStoreOnIt() {
        runner.withBean(DataSource.class, this::sqlite).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(JdbcMemoryProvider.class);
            JdbcMemoryProvider store = context.getBean(JdbcMemoryProvider.class);
            AgentGateway gateway = context.getBean(AgentGateway.class);
            try (AgentLease lease = gateway.acquire("s1", key -> agentUsing(key, store))) {
                assertThat(lease.agent().memory().syncAll("hello", "hi", "s1")).isTrue();
                assertThat(lease.agent().memory().flushPending(Duration.ofSeconds(10))).isTrue();
            }
            assertThat(store.turns("s1")).singleElement().satisfies(t -> assertThat(t.userContent()).isEqualTo("hello"));
        });
    }

    @Test
    void theGatewaysDefaultAgentFactoryUsesTheSharedStoreAndTheTranscriptIsExtracted() {
        runner.withBean(DataSource.class, this::sqlite).run(context -> {
            JdbcMemoryProvider store = context.getBean(JdbcMemoryProvider.class);
            AgentGateway gateway = context.getBean(AgentGateway.class);
            try (AgentLease lease = gateway.acquire("s1")) {
                assertThat(lease.agent().recordTurn("hello", "hi", "s1")).isTrue();
            }
            assertThat(gateway.reset("s1").status()).isEqualTo(dev.memlife.gateway.ResetResult.Status.CLOSED);
            assertThat(store.turns("s1")).singleElement().satisfies(t -> assertThat(t.userContent()).isEqualTo("hello"));
            assertThat(store.sessionEnds()).singleElement()
                    .satisfies(end -> assertThat(end.messageCount()).as("the transcript extraction saw").isEqualTo(2));
        });
    }

    @Test
    void theApplicationsOwnBeansWinAndItsOwnProviderReplacesTheStore() {
        AgentGateway own = AgentGateway.builder().name("own").build();
        runner.withBean(DataSource.class, this::sqlite).withBean("myGateway", AgentGateway.class, () -> own)
                .withBean("myProvider", MemoryProvider.class, () -> new RecordingProvider("mine"))
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(AgentGateway.class)
                            .doesNotHaveBean(JdbcMemoryProvider.class).doesNotHaveBean("memlifeGateway");
                    assertThat(context.getBean(AgentGateway.class)).isSameAs(own);
                });
    }

    @Test
    void memlifeEnabledFalseCreatesNothingAndStoreEnabledFalseOnlyNoStore() {
        runner.withBean(DataSource.class, this::sqlite).withPropertyValues("memlife.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(AgentGateway.class)
                        .doesNotHaveBean(MemlifeLifecycle.class).doesNotHaveBean(JdbcMemoryProvider.class));
        runner.withBean(DataSource.class, this::sqlite).withPropertyValues("memlife.store.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(AgentGateway.class)
                        .doesNotHaveBean(JdbcMemoryProvider.class));
    }

    @Test
    void propertiesBindWithTheirDefaults() {
        runner.run(context -> {
            MemlifeProperties p = context.getBean(MemlifeProperties.class);
            assertThat(p.enabled()).isTrue();
            assertThat(p.drainTimeout()).isEqualTo(Duration.ofSeconds(20));
            assertThat(p.gateway()).isEqualTo(new MemlifeProperties.Gateway("gateway", 128, Duration.ofHours(1),
                    TeardownMode.CLOSE, TeardownMode.COMMIT_THEN_RELEASE, null));
            assertThat(p.store()).isEqualTo(new MemlifeProperties.Store(true, "memlife_"));
            assertThat(p.tracker().name()).isEqualTo("memlife");
            assertThat(context.getBean(MemlifeLifecycle.class).budget()).as("20 s fits in the default 30 s phase")
                    .isEqualTo(Duration.ofSeconds(20));
        });
        runner.withBean(DataSource.class, this::sqlite)
                .withPropertyValues("memlife.drain-timeout=3s", "memlife.gateway.name=chat",
                        "memlife.gateway.max-agents=7", "memlife.gateway.idle-ttl=10m",
                        "memlife.gateway.stop-mode=release", "memlife.gateway.eviction-mode=RELEASE",
                        "memlife.store.table-prefix=chat_", "memlife.tracker.name=webui")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    MemlifeProperties p = context.getBean(MemlifeProperties.class);
                    assertThat(p.drainTimeout()).isEqualTo(Duration.ofSeconds(3));
                    assertThat(p.gateway()).isEqualTo(new MemlifeProperties.Gateway("chat", 7, Duration.ofMinutes(10),
                            TeardownMode.RELEASE, TeardownMode.RELEASE, null));
                    assertThat(p.store().tablePrefix()).isEqualTo("chat_");
                    assertThat(context.getBean(SessionCommitTracker.class).name()).isEqualTo("webui");
                    assertThat(context.getBean(MemlifeLifecycle.class).budget()).isEqualTo(Duration.ofSeconds(3));
                    assertThat(context.getBean(JdbcMemoryProvider.class).figures()).isNotNull();
                });
    }

    @Test
    void theLifecycleStopsJustBelowTheWebServersGracefulShutdown() throws Exception {
        Class<?> graceful;
        try {
            graceful = Class.forName("org.springframework.boot.web.context.WebServerGracefulShutdownLifecycle"); // 3
        } catch (ClassNotFoundException boot4) {
            graceful = Class.forName("org.springframework.boot.web.server.context.WebServerGracefulShutdownLifecycle");
        }
        int webServerPhase = graceful.getField("SMART_LIFECYCLE_PHASE").getInt(null);
        runner.run(context -> {
            SmartLifecycle lifecycle = context.getBean(MemlifeLifecycle.class);
            assertThat(lifecycle.getPhase()).as("stops after the graceful shutdown, before any lower phase")
                    .isEqualTo(webServerPhase - 1);
            assertThat(lifecycle.isAutoStartup()).isTrue();
            assertThat(lifecycle.isRunning()).isTrue();
        });
    }

    @Test
    void theDrainBudgetFitsInTheShutdownPhaseTimeout() {
        runner.withPropertyValues("spring.lifecycle.timeout-per-shutdown-phase=2s", "memlife.drain-timeout=20s")
                .run(context -> assertThat(context.getBean(MemlifeLifecycle.class).budget())
                        .isEqualTo(Duration.ofMillis(1_800)));
        assertThat(MemlifeLifecycle.budget(Duration.ofSeconds(5), Duration.ofSeconds(30))).isEqualTo(Duration.ofSeconds(5));
        assertThat(MemlifeLifecycle.budget(Duration.ofSeconds(30), Duration.ofSeconds(30)))
                .isEqualTo(Duration.ofSeconds(27));
    }

    @Test
    void aHungProviderDoesNotHoldTheContextClosePastTheBudget() {
        HangingProvider hung = new HangingProvider("hung", Hook.SYNC_TURN);
        try {
            runner.withBean("myProvider", MemoryProvider.class, () -> hung)
                    .withPropertyValues("spring.lifecycle.timeout-per-shutdown-phase=2s", "memlife.drain-timeout=20s")
                    .run(context -> {
                        AgentGateway gateway = context.getBean(AgentGateway.class);
                        try (AgentLease lease = gateway.acquire("s1", key -> agentUsing(key, hung))) {
                            assertThat(lease.agent().memory().syncAll("u", "a", "s1")).isTrue();
                        }
                        assertThat(hung.awaitHanging(Duration.ofSeconds(10))).as("the provider hangs in the write").isTrue();
                        MemlifeLifecycle lifecycle = context.getBean(MemlifeLifecycle.class);

                        long start = System.nanoTime();
                        context.getSourceApplicationContext().close();
                        Duration took = Duration.ofNanos(System.nanoTime() - start);

                        assertThat(took).as("context close with a hung provider; budget %s", lifecycle.budget())
                                .isLessThan(lifecycle.budget().plus(Duration.ofMillis(1_000)));
                        assertThat(lifecycle.report()).as("the drain reported at its budget").hasValueSatisfying(
                                r -> assertThat(r.gateway().notFinished()).containsExactly("s1"));
                        assertThat(gateway.isStopped()).isTrue();
                    });
        } finally {
            hung.release();
        }
    }

    @Test
    void theHealthIndicatorReportsTheQueueAndTheStore() {
        runner.withBean(DataSource.class, this::sqlite).run(context -> {
            Object indicator = context.getBean("memlifeHealthIndicator");
            String expected = System.getProperty("memlife.expectedBoot", "3.5.7").startsWith("4")
                    ? "MemlifeBoot4HealthIndicator" : "MemlifeHealthIndicator";
            assertThat(indicator.getClass().getSimpleName()).isEqualTo(expected);
            Object health = indicator.getClass().getMethod("health").invoke(indicator);
            Object status = health.getClass().getMethod("getStatus").invoke(health);
            @SuppressWarnings("unchecked") Map<String, Object> details = (Map<String, Object>) health.getClass().getMethod("getDetails").invoke(health);
            assertThat(status.getClass().getMethod("getCode").invoke(status)).isEqualTo("UP");
            assertThat(details).containsEntry("storeReachable", true).containsEntry("queueBacklog", 0L)
                    .containsKeys("agentsCached", "dirtySessions").doesNotContainKey("spoolBacklog");

            context.getBean(AgentGateway.class).stop(Duration.ofSeconds(5));
            Method healthMethod = indicator.getClass().getMethod("health");
            Object after = healthMethod.invoke(indicator);
            Object afterStatus = after.getClass().getMethod("getStatus").invoke(after);
            assertThat(afterStatus.getClass().getMethod("getCode").invoke(afterStatus)).isEqualTo("OUT_OF_SERVICE");
        });
        runner.withPropertyValues("management.health.memlife.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean("memlifeHealthIndicator"));
    }

    @Test
    void anApplicationsOwnMemlifeHealthIndicatorReplacesMemlifes() {
        runner.withBean("memlifeHealthIndicator", String.class, () -> "the application's").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean("memlifeHealthIndicator")).isEqualTo("the application's");
        });
    }

    @Test
    void withMicrometerPresentTheGatewaysMetersAreAMeterBinderBean() {
        runner.run(context -> {
            assertThat(context).hasSingleBean(MemlifeMetrics.class);
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            context.getBean(MemlifeMetrics.class).bindTo(registry);
            assertThat(registry.get("memlife.agents").tag("state", "leased").gauge().value()).isZero();
        });
        runner.withClassLoader(new FilteredClassLoader(MeterBinder.class))
                .run(context -> assertThat(context).doesNotHaveBean("memlifeMetrics"));
    }

    private static AgentMemory agentUsing(String key, MemoryProvider store) {
        MemoryManager memory = MemoryManager.builder().name(key).build();
        memory.useProvider(store);
        return AgentMemory.create(memory);
    }
}
