package dev.memlife.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.memlife.MemoryManager;
import dev.memlife.Message;
import dev.memlife.StoppedException;
import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownMode;
import dev.memlife.agent.TeardownReport.Extraction;
import dev.memlife.agent.TeardownReport;
import dev.memlife.testing.FailingProvider;
import dev.memlife.testing.HangingProvider;
import dev.memlife.testing.Hook;
import dev.memlife.testing.ManualTicker;
import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AgentGatewayTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final ManualTicker ticker = new ManualTicker();
    private AgentGateway gateway = AgentGateway.builder().ticker(ticker).build();

    @AfterEach
    void stop() {
        gateway.stop();
    }

    private static AgentMemory agent(RecordingProvider provider) {
        return agent(provider, MemoryManager.builder(), Duration.ofSeconds(60));
    }

    private static AgentMemory agent(RecordingProvider provider, MemoryManager.Builder manager, Duration extraction) {
        MemoryManager m = manager.build();
        m.addProvider(provider);
        return AgentMemory.builder(m).extractionTimeout(extraction).build();
    }

    private static void awaitShutdown(RecordingProvider provider) {
        await().atMost(WAIT).until(() -> provider.count("shutdown") == 1);
    }

    @Test
    void unknownKeysAreNoOpsWithAClearResult() {
        assertThat(gateway.evict("nope").status()).isEqualTo(EvictionResult.Status.NOT_CACHED);
        assertThat(gateway.evict("nope").teardown()).isEmpty();
        ResetResult reset = gateway.reset("nope");
        assertThat(reset.status()).isEqualTo(ResetResult.Status.NOT_CACHED);
        assertThat(reset.close()).isEmpty();
        assertThat(gateway.peek("nope")).isEmpty();
    }

    @Test
    void nullArgumentsThrowNamingTheParameter() {
        AgentMemory agent = agent(new RecordingProvider("rec"));
        assertThatThrownBy(() -> gateway.put(null, agent)).isInstanceOf(NullPointerException.class).hasMessage("key");
        assertThatThrownBy(() -> gateway.put("k", null)).isInstanceOf(NullPointerException.class).hasMessage("agent");
        assertThatThrownBy(() -> gateway.acquire("k", null)).isInstanceOf(NullPointerException.class).hasMessage("factory");
        assertThatThrownBy(() -> gateway.evict(null)).isInstanceOf(NullPointerException.class).hasMessage("key");
        assertThatThrownBy(() -> gateway.reset(null)).isInstanceOf(NullPointerException.class).hasMessage("key");
        assertThatThrownBy(() -> gateway.acquire("k", key -> null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("factory returned null");
    }

    @Test
    void builderRejectsBadSettingsNamingThem() {
        AgentGateway.Builder b = AgentGateway.builder();
        assertThatThrownBy(() -> b.maxAgents(0)).hasMessage("maxAgents must be at least 1, was 0");
        assertThatThrownBy(() -> b.resetTimeout(Duration.ZERO)).hasMessage("resetTimeout must be positive, was PT0S");
        assertThatThrownBy(() -> b.housekeepingThreads(0)).hasMessage("housekeepingThreads must be at least 1, was 0");
        assertThatThrownBy(() -> b.evictionMode(TeardownMode.CLOSE)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> b.ticker(null)).isInstanceOf(NullPointerException.class).hasMessage("ticker");
        assertThatThrownBy(() -> b.stopMode(null)).isInstanceOf(NullPointerException.class).hasMessage("stopMode");
    }

    @Test
    void lruCapEvictsTheLeastRecentlyUsedIdleAgentButNeverABusyOne() {
        gateway = AgentGateway.builder().ticker(ticker).maxAgents(2).build();
        RecordingProvider a = new RecordingProvider("a");
        RecordingProvider b = new RecordingProvider("b");
        RecordingProvider c = new RecordingProvider("c");
        try (AgentLease busy = gateway.acquire("a", key -> agent(a))) {
            gateway.put("b", agent(b));
            gateway.put("c", agent(c)); // "a" is least recently used, but mid-turn

            awaitShutdown(b);
            assertThat(b.events()).containsExactly("on_session_end", "shutdown");
            assertThat(gateway.peek("a")).contains(busy.agent());
            assertThat(a.events()).isEmpty();
            assertThat(gateway.size()).isEqualTo(2);
        }
    }

    @Test
    void idleSweepEvictsByTheInjectedTickerAndSkipsBusyAgents() {
        RecordingProvider idle = new RecordingProvider("idle");
        RecordingProvider busy = new RecordingProvider("busy");
        gateway.put("idle", agent(idle));
        try (AgentLease lease = gateway.acquire("busy", key -> agent(busy))) {
            ticker.advance(Duration.ofMinutes(59));
            assertThat(gateway.sweepIdle()).isEmpty();

            ticker.advance(Duration.ofMinutes(1));
            assertThat(gateway.sweepIdle()).containsExactly("idle");

            awaitShutdown(idle);
            assertThat(gateway.peek("busy")).contains(lease.agent());
            assertThat(busy.events()).isEmpty();
        }
        ticker.advance(Duration.ofHours(1));
        assertThat(gateway.sweepIdle()).containsExactly("busy");
        awaitShutdown(busy);
    }

    @Test
    void acquireRunsTheIdleSweepOncePerSweepInterval() {
        RecordingProvider idle = new RecordingProvider("idle");
        gateway.put("idle", agent(idle));
        ticker.advance(Duration.ofHours(1));

        gateway.acquire("other", key -> agent(new RecordingProvider("other"))).close();

        awaitShutdown(idle);
        assertThat(gateway.peek("idle")).isEmpty();
    }

    @Test
    void evictionRunsOnAHousekeepingThreadNotTheCallers() throws Exception {
        AtomicReference<String> thread = new AtomicReference<>();
        RecordingProvider provider = new RecordingProvider("rec");
        MemoryManager manager = MemoryManager.builder().build();
        manager.addProvider(provider);
        AgentMemory agent = AgentMemory.builder(manager)
                .listener((a, mode, phase) -> thread.compareAndSet(null, Thread.currentThread().getName()))
                .build();
        agent.append(Message.user("hi"));
        gateway.put("k", agent);

        TeardownReport result = gateway.evict("k").teardown().orElseThrow().toCompletableFuture().get(10, TimeUnit.SECONDS);

        assertThat(result.requested()).isEqualTo(TeardownMode.COMMIT_THEN_RELEASE);
        assertThat(thread.get()).startsWith("memlife-housekeeping-gateway-");
        assertThat(agent.transcript()).isEmpty();
        assertThat(provider.sessionEnds()).containsExactly(List.of(Message.user("hi")));
    }

    @Test
    void evictionModeReleaseSkipsExtraction() throws Exception {
        gateway = AgentGateway.builder().ticker(ticker).evictionMode(TeardownMode.RELEASE).build();
        RecordingProvider provider = new RecordingProvider("rec");
        gateway.put("k", agent(provider));

        gateway.evict("k").teardown().orElseThrow().toCompletableFuture().get(10, TimeUnit.SECONDS);

        assertThat(provider.events()).containsExactly("shutdown");
    }

    @Test
    void explicitEvictionLeavesABusyAgentAlone() {
        RecordingProvider provider = new RecordingProvider("rec");
        try (AgentLease lease = gateway.acquire("k", key -> agent(provider))) {
            assertThat(gateway.evict("k").status()).isEqualTo(EvictionResult.Status.BUSY);
            assertThat(lease.agent().isOpen()).isTrue();
        }
        assertThat(provider.events()).isEmpty();
        assertThat(gateway.evict("k").status()).isEqualTo(EvictionResult.Status.EVICTED);
    }

    @Test
    void acquireReplacesAnAgentTornDownElsewhere() {
        AgentMemory first = agent(new RecordingProvider("first"));
        gateway.put("k", first);
        first.close();

        try (AgentLease lease = gateway.acquire("k", key -> agent(new RecordingProvider("second")))) {
            assertThat(lease.agent()).isNotSameAs(first);
            assertThat(lease.agent().isOpen()).isTrue();
        }
    }

    @Test
    void resetClosesTheAgentAndDropsItFromTheCache() {
        RecordingProvider provider = new RecordingProvider("rec");
        gateway.put("k", agent(provider));

        ResetResult reset = gateway.reset("k");

        assertThat(reset.status()).isEqualTo(ResetResult.Status.CLOSED);
        assertThat(reset.result().orElseThrow().requested()).isEqualTo(TeardownMode.CLOSE);
        assertThat(provider.events()).containsExactly("on_session_end", "shutdown");
        assertThat(gateway.peek("k")).isEmpty();
    }

    @Test
    void acquireWithoutAFactoryUsesTheGatewaysAgentFactory() {
        RecordingProvider provider = new RecordingProvider("rec");
        List<String> made = new java.util.concurrent.CopyOnWriteArrayList<>();
        gateway = AgentGateway.builder().ticker(ticker).agentFactory(key -> {
            made.add(key);
            return agent(provider);
        }).build();

        try (AgentLease lease = gateway.acquire("k")) {
            assertThat(lease.agent().recordTurn("hello", "hi", "k")).isTrue();
        }
        try (AgentLease again = gateway.acquire("k")) {
            assertThat(again.agent().transcript()).extracting(Message::content).containsExactly("hello", "hi");
        }
        assertThat(made).as("made once, then cached").containsExactly("k");
        assertThat(gateway.reset("k").status()).isEqualTo(ResetResult.Status.CLOSED);
        assertThat(provider.turns()).extracting(t -> t.userContent()).containsExactly("hello");
        assertThat(provider.sessionEnds()).singleElement().satisfies(messages ->
                assertThat(messages).extracting(Message::content).containsExactly("hello", "hi"));
    }

    @Test
    void acquireWithoutAFactoryOnAGatewayWithoutOneSaysHowToGiveIt() {
        assertThatThrownBy(() -> gateway.acquire("k")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("agentFactory(...)");
        assertThatThrownBy(() -> gateway.acquire(null)).isInstanceOf(NullPointerException.class).hasMessage("key");
        assertThatThrownBy(() -> AgentGateway.builder().agentFactory(null)).isInstanceOf(NullPointerException.class)
                .hasMessage("factory");
    }

    @Test
    void resultsPrintWhatBecameOfTheTeardownNotTheFuturesIdentity() {
        gateway.put("k", agent(new RecordingProvider("rec")));
        ResetResult reset = gateway.reset("k");
        await().atMost(WAIT).until(() -> reset.eviction().orElseThrow().toCompletableFuture().isDone());

        assertThat(reset.toString()).startsWith("ResetResult[k: CLOSED, close done: TeardownReport[")
                .contains("CLOSE ran", "eviction done: TeardownReport[").doesNotContain("CompletableFuture", "@");
        assertThat(gateway.reset("k").toString()).isEqualTo("ResetResult[k: NOT_CACHED]");

        gateway.put("e", agent(new RecordingProvider("rec")));
        EvictionResult evicted = gateway.evict("e");
        evicted.teardown().orElseThrow().toCompletableFuture().join();
        assertThat(evicted.toString()).startsWith("EvictionResult[e: EVICTED, teardown done: TeardownReport[")
                .doesNotContain("CompletableFuture", "@");
        assertThat(gateway.evict("e").toString()).isEqualTo("EvictionResult[e: NOT_CACHED]");
    }

    /** A provider hanging in extraction costs one housekeeping thread the extraction timeout, no more. */
    @Test
    void hangingExtractionCannotWedgeTheHousekeepingExecutor() {
        gateway = AgentGateway.builder().ticker(ticker).housekeepingThreads(1).build();
        HangingProvider hanging = new HangingProvider("hang", Hook.ON_SESSION_END);
        RecordingProvider healthy = new RecordingProvider("healthy");
        gateway.put("hung", agent(hanging, MemoryManager.builder(), Duration.ofMillis(200)));
        gateway.put("ok", agent(healthy));
        try {
            ResetResult first = gateway.reset("hung");
            ResetResult second = gateway.reset("ok");

            assertThat(first.status()).isEqualTo(ResetResult.Status.CLOSED);
            assertThat(first.result().orElseThrow().extraction()).isEqualTo(Extraction.TIMED_OUT);
            // The hung extraction still runs in the provider: it is shut down when it returns, not under it.
            assertThat(first.result().orElseThrow().providersShutDownLater()).containsExactly("hang");
            assertThat(hanging.count("shutdown")).isZero();
            assertThat(second.status()).isEqualTo(ResetResult.Status.CLOSED);
            assertThat(healthy.events()).containsExactly("on_session_end", "shutdown");
        } finally {
            hanging.release();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> hanging.count("shutdown") == 1);
    }

    @Test
    void hangingProviderShutdownIsReportedNotWaitedFor() {
        HangingProvider hanging = new HangingProvider("hang", Hook.SHUTDOWN);
        gateway.put("k", agent(hanging, MemoryManager.builder().providerShutdownTimeout(Duration.ofMillis(200)),
                Duration.ofSeconds(60)));
        try {
            ResetResult reset = gateway.reset("k");

            assertThat(reset.status()).isEqualTo(ResetResult.Status.CLOSED);
            assertThat(reset.result().orElseThrow().drainReport().orElseThrow().providersNotShutDown())
                    .containsExactly("hang");
        } finally {
            hanging.release();
        }
    }

    @Test
    void failingProviderDuringResetLeavesNoHalfTakenClaim() {
        FailingProvider failing = new FailingProvider("failing", Hook.ON_SESSION_END, Hook.SHUTDOWN);
        AgentMemory agent = agent(failing);
        gateway.put("k", agent);

        ResetResult reset = gateway.reset("k");

        assertThat(reset.status()).isEqualTo(ResetResult.Status.CLOSED);
        assertThat(agent.isTornDown()).isTrue();
        assertThat(failing.events()).containsExactly("fail:ON_SESSION_END", "fail:SHUTDOWN");
    }

    @Test
    void stopClosesEveryAgentUnderOneDeadlineAndNamesWhatDidNotFinish() {
        RecordingProvider healthy = new RecordingProvider("healthy");
        HangingProvider hanging = new HangingProvider("hang", Hook.ON_SESSION_END);
        gateway.put("ok", agent(healthy));
        gateway.put("hung", agent(hanging));
        try {
            CompletableFuture<GatewayStopReport> stopping = CompletableFuture.supplyAsync(() -> gateway.stop(Duration.ofSeconds(3)));
            assertThat(hanging.awaitHanging(WAIT)).isTrue();
            await().atMost(WAIT).until(() -> healthy.count("shutdown") == 1);
            await().during(Duration.ofMillis(300)).atMost(WAIT).until(() -> !stopping.isDone()); // real time does not end it
            ticker.advance(Duration.ofSeconds(3)); // the gateway's ticker does
            GatewayStopReport report = stopping.join();

            assertThat(report.closed()).containsOnlyKeys("ok");
            assertThat(report.notFinished()).containsExactly("hung");
            assertThat(report.complete()).isFalse();
            assertThat(report.housekeepingTerminated()).isFalse();
            assertThat(healthy.events()).containsExactly("on_session_end", "shutdown");
            assertThat(gateway.stop()).isSameAs(report);
            assertThatThrownBy(() -> gateway.acquire("k", key -> agent(new RecordingProvider("x"))))
                    .isInstanceOf(StoppedException.class).hasMessageContaining("stopped");
            assertThatThrownBy(() -> gateway.put("k", agent(new RecordingProvider("y"))))
                    .isInstanceOf(StoppedException.class).hasMessageContaining("stopped");
        } finally {
            hanging.release();
        }
        await().atMost(WAIT).until(() -> hanging.count("shutdown") == 1);
    }

    @Test
    void stopRefusesNewLeasesAtOnceAndWaitsForTheOpenOneSoTheTurnInFlightIsStored() {
        RecordingProvider store = new RecordingProvider("store");
        gateway.put("busy", agent(store));
        AgentLease inFlight = gateway.acquire("busy", key -> agent(new RecordingProvider("unused")));

        CompletableFuture<GatewayStopReport> stopping = CompletableFuture.supplyAsync(() -> gateway.stop(Duration.ofSeconds(30)));
        await().atMost(WAIT).untilAsserted(() -> assertThatThrownBy(() -> gateway.acquire("new", key -> agent(
                new RecordingProvider("late")))).isInstanceOf(StoppedException.class));
        await().during(Duration.ofMillis(300)).atMost(WAIT).until(() -> !stopping.isDone());
        assertThat(store.events()).as("nothing is torn down under an open lease").doesNotContain("shutdown");

        assertThat(inFlight.agent().memory().syncAll("the last turn", "answered", "busy")).isTrue();
        inFlight.close();
        GatewayStopReport report = stopping.join();

        assertThat(report.stillLeased()).isEmpty();
        assertThat(report.complete()).as("%s", report).isTrue();
        assertThat(report.closed()).containsOnlyKeys("busy");
        assertThat(store.events()).containsExactly("sync:the last turn", "on_session_end", "shutdown");
    }

    @Test
    void aLeaseNeverReleasedHoldsTheStopForHalfItsBudgetOnTheGatewaysTicker() {
        RecordingProvider store = new RecordingProvider("store");
        gateway.put("stuck", agent(store));
        AgentLease neverClosed = gateway.acquire("stuck", key -> agent(new RecordingProvider("unused")));
        neverClosed.agent().memory().syncAll("accepted", "before the stop", "stuck");

        CompletableFuture<GatewayStopReport> stopping = CompletableFuture.supplyAsync(() -> gateway.stop(Duration.ofSeconds(10)));
        await().during(Duration.ofMillis(300)).atMost(WAIT).until(() -> !stopping.isDone());
        ticker.advance(Duration.ofSeconds(5)); // half the budget: the teardowns keep the other half
        GatewayStopReport report = stopping.join();

        assertThat(report.stillLeased()).containsExactly("stuck");
        assertThat(report.complete()).isFalse();
        assertThat(report.closed()).containsOnlyKeys("stuck");
        assertThat(store.events()).as("torn down anyway, its accepted write flushed first")
                .containsExactly("sync:accepted", "on_session_end", "shutdown");
    }

    @Test
    void aReleaseStopKeepsEveryConversationResumable() {
        gateway = AgentGateway.builder().ticker(ticker).stopMode(TeardownMode.RELEASE).build();
        RecordingProvider store = new RecordingProvider("store");
        gateway.put("chat:1", agent(store));
        try (AgentLease lease = gateway.acquire("chat:1", key -> agent(new RecordingProvider("unused")))) {
            lease.agent().memory().syncAll("u", "a", "chat:1");
        }

        GatewayStopReport report = gateway.stop();

        assertThat(report.complete()).isTrue();
        assertThat(report.closed().get("chat:1").owner()).isEqualTo(TeardownMode.RELEASE);
        assertThat(report.closed().get("chat:1").extraction()).isEqualTo(Extraction.NOT_RUN);
        assertThat(store.events()).as("flushed and shut down; no extraction, no session end")
                .containsExactly("sync:u", "shutdown");
    }

    @Test
    void anInterruptedStopReturnsAtOnceWithTheFlagStillSet() {
        HangingProvider hanging = new HangingProvider("hang", Hook.ON_SESSION_END);
        gateway.put("hung", agent(hanging));
        GatewayStopReport report;
        try {
            Thread.currentThread().interrupt();
            report = gateway.stop(Duration.ofSeconds(30)); // the ticker never moves: only the interrupt ends it
            assertThat(Thread.currentThread().isInterrupted()).as("the flag is restored").isTrue();
        } finally {
            Thread.interrupted();
            hanging.release();
        }

        assertThat(report.complete()).isFalse();
        assertThat(report.closed()).doesNotContainKey("hung");
        await().atMost(WAIT).until(() -> hanging.count("shutdown") == 1);
    }

    @Test
    void aStopThatLeavesManyAgentsOpenLogsOneShortLineAndItsReportNamesThemAll() {
        Logger logger = (Logger) LoggerFactory.getLogger(AgentGateway.class);
        ListAppender<ILoggingEvent> captured = new ListAppender<>();
        captured.start();
        logger.addAppender(captured);
        List<String> keys = IntStream.range(0, 25).mapToObj(i -> "chat:" + i).toList();
        List<HangingProvider> hanging = keys.stream().map(k -> new HangingProvider(k, Hook.ON_SESSION_END)).toList();
        for (int i = 0; i < keys.size(); i++) {
            gateway.put(keys.get(i), agent(hanging.get(i)));
        }
        GatewayStopReport report;
        try {
            Thread.currentThread().interrupt(); // the stop returns at once, every agent still closing
            report = gateway.stop(Duration.ofSeconds(30));
        } finally {
            Thread.interrupted();
            logger.detachAppender(captured);
            hanging.forEach(HangingProvider::release);
        }

        assertThat(report.notFinished()).containsExactlyInAnyOrderElementsOf(keys);
        assertThat(captured.list).filteredOn(e -> e.getLevel() == Level.WARN).singleElement()
                .extracting(ILoggingEvent::getFormattedMessage).satisfies(line -> {
                    assertThat(line).contains("25 agents not closed [").contains(", and 15 more]")
                            .contains("the stop report names every agent");
                    assertThat(keys.stream().filter(k -> line.contains(k + ",") || line.contains(k + "]")))
                            .as("agents named in the line").hasSize(GatewayStop.KEYS_LOGGED);
                });
        await().atMost(WAIT).until(() -> hanging.stream().allMatch(h -> h.count("shutdown") == 1));
    }

    @Test
    void stopWaitsForResetsStillRunningInTheBackground() {
        HangingProvider hanging = new HangingProvider("hang", Hook.ON_SESSION_END);
        gateway = AgentGateway.builder().ticker(ticker).resetTimeout(Duration.ofMillis(20)).build();
        gateway.put("k", agent(hanging));
        CompletableFuture<ResetResult> resetting = CompletableFuture.supplyAsync(() -> gateway.reset("k"));
        assertThat(hanging.awaitHanging(WAIT)).isTrue();
        assertThat(resetting).as("the reset waits on the gateway's ticker, not on real time").isNotDone();
        ticker.advance(Duration.ofMillis(20));
        assertThat(resetting.join().status()).isEqualTo(ResetResult.Status.TIMED_OUT);
        hanging.release();

        GatewayStopReport report = gateway.stop();

        assertThat(report.complete()).isTrue();
        assertThat(hanging.count("shutdown")).isEqualTo(1);
    }
}
