package dev.memlife.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.memlife.MemoryManager;
import dev.memlife.Message;
import dev.memlife.Ticker;
import dev.memlife.agent.SessionCommitter;
import dev.memlife.testing.ManualTicker;
import dev.memlife.testing.RecordingProvider;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link ShutdownHooks}: one process-wide hook, one shared deadline, a summary that needs no logger. */
@Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ShutdownHooksTest {

    /** Records hooks instead of registering them with the JVM; remove() can simulate a JVM shutting down. */
    private static final class FakeRegistry implements ShutdownHooks.HookRegistry {
        final List<Thread> added = new ArrayList<>();
        volatile boolean shuttingDown;

        @Override
        public void add(Thread hook) {
            added.add(hook);
        }

        @Override
        public boolean remove(Thread hook) {
            if (shuttingDown) {
                throw new IllegalStateException("Shutdown in progress");
            }
            return added.remove(hook);
        }
    }

    private final ByteArrayOutputStream printed = new ByteArrayOutputStream();
    private final FakeRegistry registry = new FakeRegistry();

    private ShutdownHooks hooks(Duration deadline) {
        return hooks(deadline, Ticker.system());
    }

    private ShutdownHooks hooks(Duration deadline, Ticker ticker) {
        return new ShutdownHooks(deadline, ticker, registry, () -> new PrintStream(printed, true, StandardCharsets.UTF_8));
    }

    /** What the JVM does on SIGTERM: run the hook thread to the end. */
    private static void simulateJvmShutdown(ShutdownHooks hooks) throws InterruptedException {
        Thread hook = hooks.hookThread();
        hook.start();
        hook.join(20_000);
        assertThat(hook.isAlive()).isFalse();
    }

    /**
     * The Java form of the seed's static-wiring guard: the hook really is registered with the
     * {@link Runtime} (removing it succeeds only if it was there), exactly once however often
     * install is called. That it then drains on SIGTERM is shown end to end by {@link SigtermDrainProcessTest}.
     */
    @Test
    void installRegistersOneHookWithTheRuntime() {
        ShutdownHooks first = ShutdownHooks.install(Duration.ofSeconds(5));
        try {
            assertThat(ShutdownHooks.install(Duration.ofSeconds(1))).isSameAs(first);
            assertThat(ShutdownHooks.installed()).containsSame(first);
            assertThat(first.budget()).isEqualTo(Duration.ofSeconds(5));
            assertThat(first.state()).isEqualTo(ShutdownHooks.State.INSTALLED);
        } finally {
            assertThat(first.uninstall()).as("Runtime.removeShutdownHook found it").isTrue();
        }
        assertThat(first.uninstall()).as("idempotent").isFalse();
        assertThat(first.state()).isEqualTo(ShutdownHooks.State.CLOSED);
        assertThat(ShutdownHooks.installed()).isEmpty();
        ShutdownHooks again = ShutdownHooks.install(Duration.ofSeconds(2));
        try {
            assertThat(again).isNotSameAs(first);
        } finally {
            assertThat(again.uninstall()).isTrue();
        }
    }

    @Test
    void hookCommitsSessionsBeforeComponentsBeforeManagersAndPrintsASummary() throws InterruptedException {
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        RecordingProvider provider = new RecordingProvider("store") {
            @Override
            public void onSessionEnd(List<Message> messages) {
                order.add("commit");
                super.onSessionEnd(messages);
            }

            @Override
            public void shutdown() {
                order.add("manager shutdown");
                super.shutdown();
            }
        };
        MemoryManager manager = MemoryManager.builder().name("agent-1").build();
        manager.addProvider(provider);
        SessionCommitTracker tracker = SessionCommitTracker.builder().name("webui").build();
        SessionCommitter agent = () -> manager.onSessionEnd(List.of(Message.user("hi")));
        tracker.markTurnCompleted("s1", agent);
        ShutdownHooks hooks = hooks(Duration.ofSeconds(10));
        hooks.register(manager); // registration order does not matter: managers go last
        hooks.register("gateway", budget -> {
            order.add("gateway");
            return null;
        });
        hooks.register(tracker);
        assertThat(hooks.registered()).containsExactly("tracker webui", "gateway", "manager agent-1");

        simulateJvmShutdown(hooks);

        assertThat(order).containsExactly("commit", "gateway", "manager shutdown");
        assertThat(tracker.hasUncommittedWork("s1")).isFalse();
        String summary = printed.toString(StandardCharsets.UTF_8);
        System.out.println(summary);
        assertThat(summary).startsWith("memlife shutdown drain: 3 of 3 components done in ")
                .contains("tracker webui: DONE", "SessionDrainReport[webui: clean, commits=1 in 1 sessions",
                        "gateway: DONE", "manager agent-1: DONE", "DrainReport[");
        assertThat(hooks.state()).isEqualTo(ShutdownHooks.State.RUNNING);
    }

    /**
     * The hook's own waits: bounded at 250 ms past the deadline, not 100, because this test starts a
     * thread per component and shuts a real manager down inside the last 10 % of the deadline; on a
     * loaded 2-core machine (load average 12-13) the waits overshot by up to ~100 ms, and a 200 ms
     * reserve was once too short for a manager's shutdown. The 100 ms bound
     * of the session drain itself is {@link SessionDrainTest#drainHoldsItsDeadlineOnItsTickerWhenAProviderNeverReturns}.
     */
    @Test
    void aHungComponentCannotHoldTheHookPastItsDeadlineNorStarveTheManagers() throws InterruptedException {
        CountDownLatch never = new CountDownLatch(1);
        RecordingProvider provider = new RecordingProvider("store");
        MemoryManager manager = MemoryManager.builder().name("agent-2").build();
        manager.addProvider(provider);
        Duration deadline = Duration.ofSeconds(5); // the managers' 10 % reserve is then 500 ms
        ManualTicker ticker = new ManualTicker();
        ShutdownHooks hooks = hooks(deadline, ticker);
        CountDownLatch wedged = new CountDownLatch(1);
        hooks.register("wedged gateway", budget -> {
            wedged.countDown();
            try {
                never.await(); // a component that never returns
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return null;
        });
        hooks.register(manager);
        try {
            CompletableFuture<ShutdownReport> draining = CompletableFuture.supplyAsync(() -> hooks.stop(hooks.budget()));
            assertThat(wedged.await(10, TimeUnit.SECONDS)).isTrue();
            await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5)).until(() -> !draining.isDone());
            ticker.advance(Duration.ofMillis(4_500)); // the components' share of the deadline
            ShutdownReport report = draining.join();

            System.out.println(report);
            assertThat(report.elapsed()).as("on the ticker: the components' 90 %, not a moment of the managers' reserve")
                    .isEqualTo(Duration.ofMillis(4_500));
            assertThat(report.components()).extracting(ShutdownReport.Component::status)
                    .containsExactly(ShutdownReport.Status.TIMED_OUT, ShutdownReport.Status.DONE);
            assertThat(provider.events()).as("the manager reserve let it shut down").contains("shutdown");
            assertThat(report.complete()).isFalse();
        } finally {
            never.countDown();
        }
    }

    /**
     * A shared store and its pool close after everything that writes into them, one at a time, the
     * last registered first; a store registered as a component could close under a gateway still
     * flushing (found by {@code HttpServiceSigtermProcessTest}).
     */
    @Test
    void resourcesCloseLastOneAtATimeInReverseRegistrationOrder() {
        ShutdownHooks hooks = hooks(Duration.ofSeconds(5));
        List<String> order = new CopyOnWriteArrayList<>();
        hooks.closeLast("pool", () -> order.add("pool closed"));
        hooks.closeLast("store", () -> {
            order.add("store closing");
            order.add("store closed");
        });
        hooks.register("gateway", budget -> {
            order.add("gateway stopped");
            return null;
        });
        MemoryManager manager = MemoryManager.create();
        manager.addProvider(new RecordingProvider("rec") {
            @Override
            public void shutdown() {
                order.add("manager's provider shut down");
            }
        });
        hooks.register(manager);

        ShutdownReport report = hooks.stop(hooks.budget());

        assertThat(order).containsExactly("gateway stopped", "manager's provider shut down", "store closing",
                "store closed", "pool closed");
        assertThat(report.components()).extracting(ShutdownReport.Component::name)
                .containsExactly("gateway", "manager " + manager.name(), "store", "pool");
        assertThat(report.components()).extracting(ShutdownReport.Component::status)
                .containsOnly(ShutdownReport.Status.DONE);
    }

    @Test
    void aFailingComponentIsReportedAndTheOthersStillDrain() {
        ShutdownHooks hooks = hooks(Duration.ofSeconds(5));
        IllegalStateException boom = new IllegalStateException("gateway stop failed");
        hooks.register("broken", budget -> {
            throw boom;
        });
        AtomicReference<Duration> budgetSeen = new AtomicReference<>();
        hooks.register("fine", budget -> {
            budgetSeen.set(budget);
            return null;
        });

        ShutdownReport report = hooks.stop(hooks.budget());

        assertThat(report.components()).extracting(ShutdownReport.Component::status)
                .containsExactly(ShutdownReport.Status.FAILED, ShutdownReport.Status.DONE);
        assertThat(report.components().get(0).failure()).isSameAs(boom);
        assertThat(budgetSeen.get()).as("less than the reserve and slack")
                .isLessThanOrEqualTo(Duration.ofMillis(4_500 - 200)).isGreaterThan(Duration.ofSeconds(4));
    }

    @Test
    void uninstallRemovesTheHookAndAnUninstalledHookDrainsNothing() throws InterruptedException {
        ShutdownHooks hooks = hooks(Duration.ofSeconds(5));
        registry.add(hooks.hookThread());
        List<String> drained = new ArrayList<>();
        ShutdownHooks.Registration registration = hooks.register("c", budget -> {
            drained.add("c");
            return null;
        });
        hooks.register("d", budget -> {
            drained.add("d");
            return null;
        });
        registration.close();

        assertThat(hooks.uninstall()).isTrue();
        assertThat(registry.added).isEmpty();
        simulateJvmShutdown(hooks);

        assertThat(drained).isEmpty();
        assertThat(printed.size()).isZero();
        assertThat(hooks.stop(hooks.budget()).components()).extracting(ShutdownReport.Component::name).containsExactly("d");
    }

    @Test
    void closeDrainsOnceNowAndRemovesTheHookSoTheJvmDoesNotDrainAgain() throws InterruptedException {
        ShutdownHooks hooks = hooks(Duration.ofSeconds(5));
        registry.add(hooks.hookThread());
        List<String> drained = new ArrayList<>();
        hooks.register("c", budget -> {
            drained.add("c");
            return null;
        });

        try (ShutdownHooks closing = hooks) {
            assertThat(closing.state()).isEqualTo(ShutdownHooks.State.INSTALLED);
        }

        assertThat(drained).as("close() drained the registered component, once").containsExactly("c");
        assertThat(registry.added).as("and removed the JVM hook").isEmpty();
        assertThat(hooks.state()).isEqualTo(ShutdownHooks.State.CLOSED);
        hooks.close();
        simulateJvmShutdown(hooks);
        assertThat(drained).as("neither a second close nor the JVM drains again").containsExactly("c");
    }

    @Test
    void uninstallToleratesAJvmAlreadyShuttingDown() {
        ShutdownHooks hooks = hooks(Duration.ofSeconds(5));
        registry.add(hooks.hookThread());
        registry.shuttingDown = true;

        assertThat(hooks.uninstall()).isFalse();
        assertThat(hooks.state()).isEqualTo(ShutdownHooks.State.CLOSED);
    }

    @Test
    void theHookSurvivesAStderrThatThrows() throws InterruptedException {
        PrintStream broken = new PrintStream(new OutputStream() {
            @Override
            public void write(int b) {
                throw new IllegalStateException("stderr is gone");
            }
        }) {
            @Override
            public void println(String x) {
                throw new IllegalStateException("stderr is gone");
            }
        };
        ShutdownHooks hooks = new ShutdownHooks(Duration.ofSeconds(5), Ticker.system(), registry, () -> broken);
        List<String> drained = Collections.synchronizedList(new ArrayList<>());
        hooks.register("c", budget -> {
            drained.add("c");
            return null;
        });
        AtomicReference<Throwable> uncaught = new AtomicReference<>();
        hooks.hookThread().setUncaughtExceptionHandler((t, e) -> uncaught.set(e));

        simulateJvmShutdown(hooks);

        assertThat(drained).containsExactly("c");
        assertThat(uncaught.get()).isNull();
    }

    /**
     * Regression (reliability issue, defect 9): a provider hanging in {@code shutdown()} made the
     * hook report its manager as TIMED_OUT with no report, although every write was delivered. The
     * manager's shutdown now fits in the budget the hook gives it, and its report survives.
     */
    @Test
    void aProviderHangingInShutdownDoesNotCostTheManagersReport() {
        dev.memlife.testing.HangingProvider hanging =
                new dev.memlife.testing.HangingProvider("wedged", dev.memlife.testing.Hook.SHUTDOWN);
        MemoryManager manager = MemoryManager.builder().name("wedged-store").build(); // provider shutdown: 5 s
        manager.addProvider(hanging);
        manager.syncAll("u", "a", "s");
        manager.syncAll("u", "b", "s");
        ShutdownHooks hooks = hooks(Duration.ofSeconds(1));
        hooks.register(manager);
        try {
            ShutdownReport report = hooks.stop(hooks.budget());

            ShutdownReport.Component component = report.components().get(0);
            assertThat(component.status()).as("%s", report).isEqualTo(ShutdownReport.Status.DONE);
            dev.memlife.DrainReport drain = (dev.memlife.DrainReport) component.report();
            assertThat(drain.delivered()).isEqualTo(2);
            assertThat(drain.providersNotShutDown()).containsExactly("wedged");
            assertThat(report.elapsed()).isLessThan(Duration.ofSeconds(3));
        } finally {
            hanging.release();
        }
    }
}
