package dev.memlife.spring;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.langchain4j.store.memory.chat.InMemoryChatMemoryStore;
import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.gateway.AgentLease;
import dev.memlife.langchain4j.WriteBehindChatMemoryStore;
import dev.memlife.session.SessionCommitTracker;
import dev.memlife.spool.SpoolDirectory;
import dev.memlife.store.JdbcMemoryProvider;
import dev.memlife.testing.GatedProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The starter wires what the application needs and no more: an application that only wraps its
 * chat memory gets only that (no gateway, no memlife table in its database), {@code
 * memlife.gateway.enabled} decides when set, one line says what was wired, and {@code
 * memlife.spool.dir} gives every agent a spool and replays what a crash left before the context
 * is up.
 */
@Timeout(60)
class StarterPerNeedTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private final ApplicationContextRunner runner = StarterContexts.runner();

    @TempDir
    Path dir;

    private DataSource sqlite() {
        return StarterContexts.sqlite(dir.resolve("app.db"));
    }

    private org.springframework.ai.chat.memory.ChatMemoryRepository sqliteRepository() {
        try {
            return new dev.memlife.springai.SqliteChatMemoryRepository(dir.resolve("app.db"));
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private List<String> tables() throws Exception {
        List<String> names = new ArrayList<>();
        try (Connection c = sqlite().getConnection();
                ResultSet rs = c.createStatement().executeQuery("SELECT name FROM sqlite_master WHERE type = 'table'")) {
            while (rs.next()) {
                names.add(rs.getString(1));
            }
        }
        return names;
    }

    @Test
    void anApplicationThatOnlyWrapsItsChatMemoryStoreGetsOnlyThatAndNoMemlifeTable() throws Exception {
        runner.withBean(DataSource.class, this::sqlite)
                .withBean("chatStore", WriteBehindChatMemoryStore.class,
                        () -> WriteBehindChatMemoryStore.over(new InMemoryChatMemoryStore()))
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(WriteBehindChatMemoryStore.class)
                            .doesNotHaveBean(AgentGateway.class).doesNotHaveBean(JdbcMemoryProvider.class)
                            .doesNotHaveBean(SessionCommitTracker.class).doesNotHaveBean(MemlifeLifecycle.class)
                            .hasBean("memlifeHealthIndicator"); // the write-behind store's health
                    assertThat(MemlifeAutoConfiguration.wiring(context.getBeanFactory()))
                            .isEqualTo("memlife wired: no gateway, store or tracker (memlife.gateway.enabled=true adds "
                                    + "them), WriteBehindChatMemoryStore chatStore");
                });
        assertThat(tables()).as("tables in the application's database").noneMatch(t -> t.startsWith("memlife_"));
    }

    @Test
    void anApplicationWhoseConversationsLiveInAFrameworksChatMemoryGetsNoGatewayUnlessItAsks() throws Exception {
        runner.withBean(DataSource.class, this::sqlite)
                .withBean("chatMemoryStore", dev.langchain4j.store.memory.chat.ChatMemoryStore.class,
                        InMemoryChatMemoryStore::new)
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(AgentGateway.class)
                        .doesNotHaveBean(JdbcMemoryProvider.class));
        assertThat(tables()).noneMatch(t -> t.startsWith("memlife_"));
    }

    @Test
    void anApplicationWithOnlyASpringAiChatMemoryRepositoryGetsNoGatewayAndNoMemlifeTable() throws Exception {
        runner.withBean(DataSource.class, this::sqlite)
                .withBean("chatMemoryRepository", org.springframework.ai.chat.memory.ChatMemoryRepository.class,
                        this::sqliteRepository)
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(AgentGateway.class)
                        .doesNotHaveBean(JdbcMemoryProvider.class).doesNotHaveBean(SessionCommitTracker.class));
        assertThat(tables()).as("the repository's own table only").contains("chat_messages")
                .noneMatch(t -> t.startsWith("memlife_"));
    }

    @Test
    void aWriteBehindStoreWhoseBackendKeepsFailingIsDownInHealthAndCountedInItsMeters() {
        FailingStore backend = new FailingStore();
        runner.withBean("chatStore", WriteBehindChatMemoryStore.class, () -> WriteBehindChatMemoryStore.over(backend))
                .run(context -> {
                    WriteBehindChatMemoryStore store = context.getBean(WriteBehindChatMemoryStore.class);
                    io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
                            new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
                    context.getBean("memlifeWriteBehindMetrics", io.micrometer.core.instrument.binder.MeterBinder.class)
                            .bindTo(registry);
                    HealthCheck check = new HealthCheck(null, null, null,
                            () -> WriteBehindBeans.figures(context.getBeanFactory()));
                    assertThat(check.check().status()).isEqualTo(HealthCheck.Status.UP);

                    for (int i = 1; i <= HealthCheck.FAILING_DOWN; i++) {
                        store.updateMessages("c", List.of(dev.langchain4j.data.message.UserMessage.from("m" + i)));
                        int failed = i;
                        org.awaitility.Awaitility.await().atMost(WAIT).until(() -> store.figures().failedWrites() == failed);
                    }

                    HealthCheck.Result down = check.check();
                    assertThat(down.status()).as("the backend failed %d calls in a row", HealthCheck.FAILING_DOWN)
                            .isEqualTo(HealthCheck.Status.DOWN);
                    assertThat(down.details()).containsKey("writeBehind.chatStore");
                    assertThat(registry.get("memlife.writebehind.failed").tag("name", "chatStore").functionCounter().count())
                            .isEqualTo(HealthCheck.FAILING_DOWN);
                    assertThat(registry.get("memlife.writebehind.pending").tag("name", "chatStore").gauge().value())
                            .isEqualTo(1);
                    assertThat(registry.get("memlife.writebehind.failing").gauge().value()).isEqualTo(HealthCheck.FAILING_DOWN);

                    backend.failing = false;
                    assertThat(store.flush(WAIT)).as("the kept state is written once the backend takes it").isTrue();
                    assertThat(check.check().status()).isEqualTo(HealthCheck.Status.UP);
                    assertThat(registry.get("memlife.writebehind.pending").gauge().value()).isZero();
                });
    }

    /** A LangChain4j store that refuses every update while {@link #failing}. */
    private static final class FailingStore extends InMemoryChatMemoryStore {
        volatile boolean failing = true;

        @Override
        public void updateMessages(Object memoryId, List<dev.langchain4j.data.message.ChatMessage> messages) {
            if (failing) {
                throw new IllegalStateException("test: the store is down");
            }
            super.updateMessages(memoryId, messages);
        }
    }

    @Test
    void theIdeKnowsEveryNewPropertyWithWhatItDoes() throws Exception {
        String metadata;
        try (java.io.InputStream in = getClass().getClassLoader()
                .getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
            assertThat(in).as("the configuration processor's metadata").isNotNull();
            metadata = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
        for (String property : List.of("memlife.gateway.enabled", "memlife.spool.dir", "memlife.spool.max-bytes",
                "memlife.spool.segment-bytes", "memlife.spool.recovery-timeout", "memlife.vector-store.write-behind",
                "memlife.vector-store.batch-size", "memlife.vector-store.close-timeout", "memlife.vector-store.spool-dir",
                "memlife.vector-store.durable", "memlife.spool.shared", "memlife.spool.shared-table-prefix",
                "memlife.spool.lease", "memlife.spool.sweep-interval", "memlife.spool.replica",
                "memlife.spool.claim-timeout", "memlife.spool.shared-close-timeout",
                "memlife.spool.shared-max-pending-bytes")) {
            assertThat(metadata).as(property).containsPattern(
                    "\"name\": \"" + java.util.regex.Pattern.quote(property) + "\",\\s*\"type\": \"[^\"]+\",\\s*\"description\": \"\\w");
        }
    }

    @Test
    void memlifeGatewayEnabledDecidesWhenSet() throws Exception {
        runner.withBean(DataSource.class, this::sqlite)
                .withBean("chatStore", WriteBehindChatMemoryStore.class,
                        () -> WriteBehindChatMemoryStore.over(new InMemoryChatMemoryStore()))
                .withPropertyValues("memlife.gateway.enabled=true")
                .run(context -> assertThat(context).hasNotFailed().hasSingleBean(AgentGateway.class)
                        .hasSingleBean(JdbcMemoryProvider.class).hasSingleBean(MemlifeLifecycle.class));
        assertThat(tables()).contains("memlife_turns");

        runner.withBean(DataSource.class, this::sqlite).withPropertyValues("memlife.gateway.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(AgentGateway.class)
                        .doesNotHaveBean(JdbcMemoryProvider.class).doesNotHaveBean(SessionCommitTracker.class));
    }

    @Test
    void oneLineAtStartUpSaysWhatWasWired() {
        Logger log = (Logger) LoggerFactory.getLogger(MemlifeAutoConfiguration.class);
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        log.addAppender(lines);
        ch.qos.logback.classic.Level level = log.getLevel();
        log.setLevel(ch.qos.logback.classic.Level.INFO);
        try {
            runner.withBean(DataSource.class, this::sqlite).withPropertyValues("memlife.gateway.name=chat")
                    .run(context -> assertThat(context).hasNotFailed());
        } finally {
            log.setLevel(level);
            log.detachAppender(lines);
        }
        assertThat(lines.list).extracting(ILoggingEvent::getFormattedMessage)
                .containsExactly("memlife wired: gateway 'chat', store memlifeStore, tracker memlifeTracker");
    }

    @Test
    void theShutdownReportTotalsEveryAgentsWritesByOutcome() {
        java.util.concurrent.atomic.AtomicReference<MemlifeLifecycle> lifecycle = new java.util.concurrent.atomic.AtomicReference<>();
        runner.withBean(DataSource.class, this::sqlite).run(context -> {
            lifecycle.set(context.getBean(MemlifeLifecycle.class));
            AgentGateway gateway = context.getBean(AgentGateway.class);
            for (String session : List.of("a", "b", "c")) {
                try (AgentLease lease = gateway.acquire(session)) {
                    assertThat(lease.agent().recordTurn("hello " + session, "hi", session)).isTrue();
                    assertThat(lease.agent().recordTurn("again " + session, "hi", session)).isTrue();
                }
            }
            gateway.reset("a"); // an agent gone before the shutdown still counts, once
        });
        MemlifeLifecycle.Report report = lifecycle.get().report().orElseThrow();
        assertThat(report.writeTotals())
                .isEqualTo("writes accepted 6: delivered 6, failed 0, abandoned 0, still running 0; rejected 0");
    }

    @Test
    void withASpoolDirEveryAgentSpoolsAndWhatACrashLeftIsReplayedBeforeTheContextIsUp() throws Exception {
        Path spools = dir.resolve("spools");
        // A run that ended with writes its store never took: abandoned at its drain deadline, they
        // stay in the agent's spool, as after a crash.
        SpoolDirectory earlier = SpoolDirectory.open(spools);
        GatedProvider held = new GatedProvider("held");
        MemoryManager crashed = MemoryManager.builder().name("s1").spool(earlier.newSpool("s1")).build();
        crashed.addProvider(held);
        assertThat(crashed.syncAll("first", "a", "s1")).isTrue();
        assertThat(held.awaitHeld(WAIT)).isTrue();
        assertThat(crashed.syncAll("second", "a", "s1")).isTrue();
        assertThat(crashed.syncAll("third", "a", "s1")).isTrue();
        DrainReport ended = crashed.stop(Duration.ofMillis(200));
        held.open();
        List<String> unfinished = new ArrayList<>(ended.stillRunningWriteIds()); // delivered after the stop:
        unfinished.addAll(ended.abandonedWriteIds()); // its mark never reached the spool, so it is replayed too
        assertThat(unfinished).hasSize(3);

        runner.withBean(DataSource.class, this::sqlite).withPropertyValues("memlife.spool.dir=" + spools)
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(SpoolDirectory.class);
                    JdbcMemoryProvider store = context.getBean(JdbcMemoryProvider.class);
                    assertThat(store.turns("s1")).as("replayed at start-up, with their ids")
                            .extracting(dev.memlife.store.StoredTurn::writeId).containsExactlyElementsOf(unfinished);

                    AgentGateway gateway = context.getBean(AgentGateway.class);
                    try (AgentLease lease = gateway.acquire("s2")) {
                        assertThat(lease.agent().recordTurn("hello", "hi", "s2")).isTrue();
                        assertThat(lease.agent().memory().figures().spool()).as("the agent has a spool").isNotEqualTo(dev.memlife.SpoolFigures.NONE);
                        assertThat(lease.agent().memory().flushPending(WAIT)).isTrue();
                    }
                    assertThat(store.turns("s2")).extracting(dev.memlife.store.StoredTurn::userContent).containsExactly("hello");
                    try (Stream<Path> agents = Files.list(spools)) {
                        assertThat(agents).as("the new agent's spool").anyMatch(p -> p.getFileName().toString().startsWith("s2."));
                    }
                });
    }
}
