package dev.memlife.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.Message;
import dev.memlife.StoppedException;
import dev.memlife.Turn;
import dev.memlife.WriteStatus;
import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownMode;
import dev.memlife.agent.TeardownReport.Extraction;
import dev.memlife.agent.TeardownReport;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.gateway.AgentLease;
import dev.memlife.gateway.GatewayStopReport;
import dev.memlife.gateway.ResetResult;
import dev.memlife.session.SessionCommitTracker;
import dev.memlife.session.SessionDrainReport;
import dev.memlife.session.ShutdownHooks;
import dev.memlife.session.ShutdownReport;
import dev.memlife.testing.ManualTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The fault matrix: every {@link Fault} of a memory provider (or of the thread factory) crossed
 * with every {@link FaultPath} a write can end by. Each cell registers three providers on one
 * manager — a healthy recorder {@code first}, the {@code faulty} one, a healthy recorder {@code
 * last} — writes a few turns (one of them, {@code T1}, a trigger the fault fires on), runs the path,
 * and checks:
 *
 * <ol>
 *   <li><b>Deadlines.</b> Every call the path makes returns within its budget plus {@link #MARGIN}
 *       ({@code syncAll} within the margin alone), also while the provider hangs; hangs are released
 *       by the test, in {@code finally} at the latest.
 *   <li><b>The writer survives, or is replaced, and later writes land.</b> Where the writer is free
 *       before the path (no hang, a thread exists, the provider did not shut the manager down),
 *       writes made after the fault reach both recorders before the path starts. On {@link
 *       FaultPath#WRITE} and {@link FaultPath#FLUSH} a hang is released first and later writes must
 *       land. Teardown paths with a hang: the still-running write reaches every provider after the
 *       release and the writer exits (the deferred shutdowns ran). Gateway paths that keep the
 *       gateway ({@code /reset}, eviction) also lease a fresh agent for the same key and its write
 *       lands. {@link Fault#FACTORY_FAILS_ONCE}: the first write is rejected, the writer starts on
 *       the next.
 *   <li><b>Exact accounting per write id</b> ({@link Accounting#assertExact}, {@code first} being
 *       first in every route), buckets disjoint, and both healthy recorders end up with exactly the
 *       ids the report calls delivered or failed, plus the still-running ones; no abandoned id ever
 *       reaches a provider; only writes the provider threw on are failed; rejections counted.
 *   <li><b>No hook after {@code shutdown()}</b>: each provider is shut down exactly once, nothing
 *       is called on it afterwards, and "shutdown" is its last event — eventually, since a provider
 *       still running a hook is shut down when the hook returns.
 *   <li>The fault's own promises: interrupts cleared and counted per provider; kept batch lists
 *       unchanged; calls back into the manager answered as documented; extraction on the caller's
 *       thread when no thread can be made.
 * </ol>
 *
 * Combinations that mean nothing are left out in {@link #EXCLUDED}, with the reason.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FaultMatrixTest {

    /** Slack on every budget: a loaded 2-core machine. */
    static final Duration MARGIN = Duration.ofSeconds(2);
    /** Longest wait for something that must happen eventually (a deferred shutdown, a detached write). */
    static final Duration EVENTUALLY = Duration.ofSeconds(20);
    static final String KEY = "k";
    static final String SESSION = "s";
    /**
     * The JVM hook's shared deadline. Long enough that the hook's slack (a tenth of what is left
     * for the managers, at most 200 ms) covers a loaded 2-core machine's scheduling delays after a
     * tracker spent its share on a hung extraction: with 1.5 s, 88 ms of slack was once too little
     * with three JVMs busy on two cores.
     */
    static final Duration HOOK_DEADLINE = Duration.ofMillis(3_000);

    /** Cells left out, by "FAULT x PATH", with the reason. */
    static final Map<String, String> EXCLUDED = Map.of(
            cellName(Fault.SHUTDOWN_FROM_EXTRACTION, FaultPath.WRITE),
            "no extraction on this path: the provider's onSessionEnd never runs, the cell would repeat a healthy run",
            cellName(Fault.SHUTDOWN_FROM_EXTRACTION, FaultPath.FLUSH),
            "no extraction on this path: the provider's onSessionEnd never runs, the cell would repeat a healthy run",
            cellName(Fault.SHUTDOWN_FROM_EXTRACTION, FaultPath.SOFT_RELEASE),
            "release() does not extract: the provider's onSessionEnd never runs, the cell would repeat a healthy run");

    private static ShutdownHooks hooks;
    private static boolean installedHere;
    /** Threads that died of an uncaught throwable while the class ran: "thread name: throwable". */
    static final ConcurrentLinkedQueue<String> DEATHS = new ConcurrentLinkedQueue<>();
    private static Thread.UncaughtExceptionHandler previousHandler;

    static String cellName(Fault f, FaultPath p) {
        return f + " x " + p;
    }

    static Stream<Arguments> cells() {
        return Stream.of(Fault.values()).flatMap(f -> Stream.of(FaultPath.values())
                .filter(p -> !EXCLUDED.containsKey(cellName(f, p)))
                .map(p -> Arguments.of(f, p)));
    }

    /**
     * The JVM hook path uses the public, process-wide hook: installed here if no test left one
     * installed, and closed after the class. Its drain runs by {@code stop(budget)}, never by an exit.
     */
    @BeforeAll
    static void installHook() {
        installedHere = ShutdownHooks.installed().isEmpty();
        hooks = ShutdownHooks.install(HOOK_DEADLINE);
    }

    /**
     * Records every thread that dies of an uncaught throwable, so a cell can assert that none of its
     * threads (named after its manager) died: the writer above all. Awaitility is told not to catch
     * them itself ({@link #eventually()}): it would rethrow a thread's OutOfMemoryError in the test,
     * and JUnit ends the whole run on that.
     */
    @BeforeAll
    static void recordThreadDeaths() {
        previousHandler = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> DEATHS.add(t.getName() + ": " + e));
    }

    @AfterAll
    static void closeHook() {
        Thread.setDefaultUncaughtExceptionHandler(previousHandler);
        if (installedHere) {
            hooks.close();
        }
    }

    @Test
    void theMatrixHasEveryCellButTheExcludedOnes() {
        assertThat(cells().count()).isEqualTo((long) Fault.values().length * FaultPath.values().length
                - EXCLUDED.size());
        Set<String> all = new HashSet<>();
        for (Fault f : Fault.values()) {
            for (FaultPath p : FaultPath.values()) {
                all.add(cellName(f, p));
            }
        }
        assertThat(all).containsAll(EXCLUDED.keySet());
    }

    @ParameterizedTest(name = "{0} x {1}")
    @MethodSource("cells")
    void cell(Fault fault, FaultPath path) throws Exception {
        Scenario s = new Scenario(fault, path);
        try {
            s.run();
        } catch (AssertionError e) {
            AssertionError named = new AssertionError(cellName(fault, path) + ": " + e.getMessage(), e);
            named.setStackTrace(e.getStackTrace());
            throw named;
        } finally {
            s.cleanUp();
        }
    }

    // ---- one cell ----------------------------------------------------------------------------------

    /** The budgets of one cell: tight where a hang makes the test wait for them, generous otherwise. */
    record Budgets(Duration flush, Duration extraction, Duration drain, Duration providerShutdown,
            Duration resetWait, Duration stop, Duration sessionDrain) {

        static Budgets of(Fault fault) {
            boolean tight = fault.holdsWriter() || fault.factoryFault();
            return new Budgets(tight ? ms(300) : ms(5_000), tight ? ms(300) : ms(5_000), ms(400), ms(200),
                    ms(1_000), ms(1_500), tight ? ms(1_000) : ms(5_000));
        }

        /** AgentMemory's longest teardown: flush, extraction, then stop() = drain + provider shutdown. */
        Duration teardown() {
            return flush.plus(extraction).plus(drain).plus(providerShutdown);
        }

        private static Duration ms(long millis) {
            return Duration.ofMillis(millis);
        }
    }

    final class Scenario {
        final Fault fault;
        final FaultPath path;
        final Budgets budgets;
        final AtomicLong accepted = new AtomicLong();
        final AtomicLong rejected = new AtomicLong();
        /** RejectedExecutionExceptions thrown by syncAll. */
        final AtomicLong refusedNoThread = new AtomicLong();
        final FaultBehaviour behaviour;
        final Probe first;
        final Probe faulty;
        final Probe last;
        final List<Probe> probes;
        final FailingThreadFactory threads;
        /** In the name of every thread this cell's manager, agent, gateway and tracker make. */
        final String name;
        final MemoryManager m;
        final String testThread = Thread.currentThread().getName();
        AgentMemory agent;
        ManualTicker ticker;
        AgentGateway gateway;
        SessionCommitTracker tracker;
        final List<ShutdownHooks.Registration> registrations = new ArrayList<>();
        final List<Probe> replacements = new ArrayList<>();
        DrainReport report;
        /** Extraction as the teardown reported it, for the paths that report it. */
        Extraction extraction;

        Scenario(Fault fault, FaultPath path) {
            this.fault = fault;
            this.path = path;
            this.budgets = Budgets.of(fault);
            this.behaviour = new FaultBehaviour(fault, accepted, rejected);
            boolean batches = fault == Fault.KEEPS_BATCH;
            this.first = batches ? new BatchProbe("first") : new Probe("first");
            this.faulty = batches ? new FaultyBatchProvider("faulty", behaviour) : new FaultyProvider("faulty", behaviour);
            this.last = batches ? new BatchProbe("last") : new Probe("last");
            this.probes = List.of(first, faulty, last);
            this.name = "fm-" + fault + "-" + path;
            this.threads = fault.factoryFault() ? new FailingThreadFactory(fault, name) : null;
            MemoryManager.Builder b = MemoryManager.builder().name(name)
                    .drainTimeout(budgets.drain()).providerShutdownTimeout(budgets.providerShutdown());
            if (threads != null) {
                b.threadFactory(threads);
            }
            this.m = b.build();
            behaviour.attach(m);
            for (Probe p : probes) {
                assertThat(m.addProvider(p)).isTrue();
            }
        }

        void run() throws Exception {
            build();
            phaseA();
            if (writerFreeBeforePath()) {
                laterWritesLand("after the fault, before the " + path);
            }
            assertNoThreadDied("before the " + path);
            report = runPath();
            assertNoThreadDied("after the " + path);
            assertThat(report).as("the path's report").isNotNull();
            checkBeforeRelease();
            behaviour.release();
            afterRelease();
            assertNoThreadDied("after the release");
            awaitQuiescence();
            assertNoThreadDied("at the end");
            checkAccounting();
            checkLifecycle();
            checkFaultPromises();
        }

        // ---- set-up -------------------------------------------------------------------------------

        private void build() {
            if (path.usesAgent()) {
                AgentMemory.Builder ab = AgentMemory.builder(m).flushTimeout(budgets.flush())
                        .extractionTimeout(budgets.extraction());
                if (threads != null) {
                    ab.threadFactory(threads);
                }
                agent = ab.build();
                agent.append(Message.user("hello"));
            }
            if (path.usesGateway()) {
                ticker = new ManualTicker();
                AgentGateway.Builder gb = AgentGateway.builder().name(name).ticker(ticker).idleTtl(Duration.ofMinutes(1))
                        .resetTimeout(budgets.resetWait()).stopTimeout(budgets.stop());
                if (threads != null) {
                    gb.threadFactory(threads);
                }
                gateway = gb.build();
                gateway.put(KEY, agent);
            }
            if (path.usesTracker()) {
                tracker = SessionCommitTracker.builder().name(name).build();
                tracker.registerOwner(SESSION, agent);
            }
        }

        /** The writes that meet the fault: n1, the trigger T1, then writes queued behind it. */
        private void phaseA() {
            if (fault == Fault.KEEPS_BATCH) {
                write("n1");
                assertThat(behaviour.awaitFirstBatch(EVENTUALLY)).as("the keeper got its first batch").isTrue();
                write("T1");
                write("n2");
                write("n3");
                write("n4");
                behaviour.releaseFirstBatch(); // the next batch holds all four
                return;
            }
            write("n1");
            write("T1");
            if (fault.holdsWriter()) {
                assertThat(behaviour.awaitHung(EVENTUALLY)).as("the writer is held in T1").isTrue();
            }
            write("n2");
            write("n3");
        }

        /**
         * One turn: {@code syncAll} must return within the margin whatever the provider does. Counts
         * what became of it. {@link RejectedExecutionException} only when no writer thread can be made.
         */
        private void write(String user) {
            long start = System.nanoTime();
            try {
                boolean ok = m.syncAll(user, "a-" + user, SESSION);
                (ok ? accepted : rejected).incrementAndGet();
            } catch (RejectedExecutionException e) {
                rejected.incrementAndGet();
                refusedNoThread.incrementAndGet();
                assertThat(fault.noThreads() || (fault == Fault.FACTORY_FAILS_ONCE && threads.calls() == 1))
                        .as("syncAll(%s) refused: %s", user, e).isTrue();
            }
            assertWithin(start, Duration.ZERO, "syncAll(" + user + ")");
            if (tracker != null) {
                tracker.markTurnCompleted(SESSION, agent);
            }
            if (fault.noThreads()) {
                assertThat(accepted.get()).as("no writer thread, yet a write was accepted").isZero();
            }
        }

        private boolean writerFreeBeforePath() {
            return !fault.holdsWriter() && !fault.noThreads() && !fault.managerShutByProviderWrite();
        }

        /** Writes after the fault reach every healthy provider: the writer lives (or was started now). */
        private void laterWritesLand(String when) {
            if (fault.noThreads()) {
                long before = refusedNoThread.get();
                write("n-late");
                assertThat(refusedNoThread.get()).as("still no writer thread %s", when).isEqualTo(before + 1);
                return;
            }
            if (fault.managerShutByProviderWrite()) {
                // T1 shuts the manager down on the writer, asynchronously; once its call returned the queue is closed.
                eventually().until(() -> !behaviour.callbacks("stop").isEmpty());
                long before = accepted.get();
                write("n-late");
                assertThat(accepted.get()).as("the provider shut the manager down: late writes are rejected")
                        .isEqualTo(before);
                return;
            }
            write("n-late-1");
            write("n-late-2");
            // Flushes in short slices, so a writer that died fails the cell at once, not after 10 s.
            long start = System.nanoTime();
            boolean flushed = false;
            while (!flushed && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10)) {
                assertNoThreadDied("while flushing " + when);
                flushed = m.flushPending(Duration.ofMillis(50));
            }
            assertThat(flushed).as("flush %s", when).isTrue();
            eventually().untilAsserted(() -> {
                assertThat(first.ids()).as("first has every accepted write %s", when).hasSize((int) accepted.get());
                assertThat(last.ids()).as("last has every accepted write %s", when).hasSize((int) accepted.get());
            });
            assertThat(new HashSet<>(last.ids())).isEqualTo(new HashSet<>(first.ids()));
        }

        // ---- the paths ----------------------------------------------------------------------------

        private DrainReport runPath() throws Exception {
            switch (path) {
                case WRITE:
                    return writeThenShutDown();
                case FLUSH:
                    return flushThenShutDown();
                case SOFT_RELEASE:
                    return agentTeardown(TeardownMode.RELEASE);
                case COMMIT_THEN_RELEASE:
                    return agentTeardown(TeardownMode.COMMIT_THEN_RELEASE);
                case HARD_CLOSE:
                    return agentTeardown(TeardownMode.CLOSE);
                case RESET:
                    return reset();
                case EVICTION:
                    return eviction();
                case GATEWAY_STOP:
                    return gatewayStop();
                case SESSION_DRAIN:
                    return sessionDrain();
                case JVM_HOOK:
                    return jvmHook();
                default:
                    throw new AssertionError(path);
            }
        }

        /** The writes were the path (each syncAll timed); release a writer hang, write more, shut down. */
        private DrainReport writeThenShutDown() throws Exception {
            if (fault == Fault.HANG_FOREVER) {
                behaviour.release();
            }
            laterWritesLand("after the writes (hang released)");
            return timed(Duration.ofSeconds(5), "stop(5s)", () -> m.stop(Duration.ofSeconds(5)));
        }

        private DrainReport flushThenShutDown() throws Exception {
            Duration timeout = fault.holdsWriter() ? Duration.ofMillis(300) : Duration.ofSeconds(5);
            boolean flushed = timed(timeout, "flushPending", () -> m.flushPending(timeout));
            if (fault == Fault.HANG_FOREVER) {
                assertThat(flushed).as("flush while the writer hangs").isFalse();
            } else if (!fault.holdsWriter() && !fault.managerShutByProviderWrite()) {
                assertThat(flushed).as("flush with a writer free to write").isTrue();
            }
            if (fault == Fault.HANG_FOREVER) {
                behaviour.release();
            }
            laterWritesLand("after the flush (hang released)");
            return timed(Duration.ofSeconds(5), "stop(5s)", () -> m.stop(Duration.ofSeconds(5)));
        }

        private DrainReport agentTeardown(TeardownMode mode) throws Exception {
            TeardownReport r = timed(budgets.teardown(), mode.toString(), () -> agent.teardown(mode));
            assertThat(r.ran()).as("%s won the claim", mode).isTrue();
            assertThat(r.owner()).isEqualTo(mode);
            for (TeardownMode other : TeardownMode.values()) {
                TeardownReport again = timed(Duration.ZERO, "a second teardown", () -> agent.teardown(other));
                assertThat(again.ran()).as("exactly one teardown reaches the providers").isFalse();
                assertThat(again.owner()).isEqualTo(mode);
            }
            extraction = r.extraction();
            return r.drainReport().orElseThrow();
        }

        private DrainReport reset() throws Exception {
            long start = System.nanoTime();
            ResetResult o = timed(budgets.resetWait(), "reset", () -> gateway.reset(KEY));
            assertThat(o.status()).as("%s", o).isIn(ResetResult.Status.CLOSED, ResetResult.Status.TIMED_OUT);
            TeardownReport r = awaitTeardown(start, TeardownMode.CLOSE);
            assertThat(o.eviction()).isPresent();
            TeardownReport evicted = o.eviction().get().toCompletableFuture().get(EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS);
            assertThat(evicted.ran()).as("the eviction after a reset finds the close owning the agent").isFalse();
            return r.drainReport().orElseThrow();
        }

        private DrainReport eviction() throws Exception {
            ticker.advance(Duration.ofMinutes(2));
            long start = System.nanoTime();
            // Eviction never waits for the teardown, unless no housekeeping thread can be made: then
            // the teardown runs on this thread, within its own budget.
            Duration budget = fault.factoryFault() ? budgets.teardown() : Duration.ZERO;
            List<String> evicted = timed(budget, "sweepIdle", gateway::sweepIdle);
            assertThat(evicted).containsExactly(KEY);
            TeardownReport r = awaitTeardown(start, TeardownMode.COMMIT_THEN_RELEASE);
            return r.drainReport().orElseThrow();
        }

        private DrainReport gatewayStop() throws Exception {
            long start = System.nanoTime();
            GatewayStopReport sr = timed(budgets.stop(), "gateway stop", () -> gateway.stop(budgets.stop()));
            assertThat(sr.failed()).as("%s", sr).isEmpty();
            TeardownReport r = sr.closed().get(KEY);
            if (r == null) {
                assertThat(sr.notFinished()).as("%s", sr).containsExactly(KEY);
                r = awaitTeardown(start, TeardownMode.CLOSE);
            }
            assertThat(r.owner()).isEqualTo(TeardownMode.CLOSE);
            extraction = r.extraction();
            assertThatThrownBy(() -> gateway.acquire(KEY, k -> agent)).isInstanceOf(StoppedException.class);
            return r.drainReport().orElseThrow();
        }

        private DrainReport sessionDrain() throws Exception {
            SessionDrainReport d = timed(budgets.sessionDrain(), "stop",
                    () -> tracker.stop(budgets.sessionDrain()));
            if (!fault.holdsWriter() && !fault.managerShutByProviderWrite()) {
                assertThat(d.complete()).as("the commit went through: %s", d).isTrue();
            } else {
                assertThat(d.leftDirtyIds()).as("%s", d).containsExactly(SESSION);
            }
            Duration releaseBudget = budgets.flush().plus(budgets.drain()).plus(budgets.providerShutdown());
            TeardownReport r = timed(releaseBudget, "release", agent::release);
            assertThat(r.ran()).isTrue();
            return r.drainReport().orElseThrow();
        }

        private DrainReport jvmHook() throws Exception {
            registrations.add(hooks.register(tracker));
            registrations.add(hooks.register(m));
            ShutdownReport sr = timed(hooks.budget(), "stop", () -> hooks.stop(hooks.budget()));
            registrations.forEach(ShutdownHooks.Registration::close);
            registrations.clear();
            DrainReport r = timed(Duration.ofSeconds(5), "stop after the hook",
                    () -> m.stop(Duration.ofSeconds(5)));
            ShutdownReport.Component managerPart = sr.components().stream()
                    .filter(c -> c.name().equals("manager " + m.name())).findFirst().orElseThrow();
            assertThat(managerPart.status()).as("%s", sr).isEqualTo(ShutdownReport.Status.DONE);
            assertThat(managerPart.report()).as("the hook's report is the manager's one report").isSameAs(r);
            ShutdownReport.Component trackerPart = sr.components().stream()
                    .filter(c -> c.name().equals("tracker " + tracker.name())).findFirst().orElseThrow();
            assertThat(trackerPart.status()).as("%s", sr).isEqualTo(ShutdownReport.Status.DONE);
            return r;
        }

        private TeardownReport awaitTeardown(long start, TeardownMode owner) {
            Duration left = budgets.teardown().plus(MARGIN).minusNanos(System.nanoTime() - start);
            Optional<TeardownReport> r = agent.awaitTeardown(left.isNegative() ? Duration.ZERO : left);
            assertThat(r).as("the %s teardown finished within its budget %s + margin", owner, budgets.teardown())
                    .isPresent();
            assertThat(r.get().owner()).isEqualTo(owner);
            assertThat(r.get().ran()).isTrue();
            extraction = r.get().extraction();
            return r.get();
        }

        // ---- checks -------------------------------------------------------------------------------

        /** While a hang is still held: nothing shut down under it; a provider hung in shutdown() named. */
        private void checkBeforeRelease() {
            if (fault == Fault.HANG_FOREVER && path.usesAgent()) {
                String t1 = idOf("T1");
                assertThat(report.stillRunningWriteIds()).as("T1 is inside the faulty provider: %s", report)
                        .contains(t1);
                assertThat(report.providersShutDownLater()).as("the writer still holds every provider: %s", report)
                        .containsExactlyInAnyOrder("first", "faulty", "last");
                for (Probe p : probes) {
                    assertThat(p.shutdownStarted()).as("%s shut down under a running write", p.name()).isFalse();
                }
            }
            if (fault == Fault.HANG_IN_SHUTDOWN) {
                assertThat(report.providersNotShutDown()).as("%s", report).contains("faulty");
                assertThat(faulty.events()).doesNotContain("shutdown");
            }
            if (fault.throwsFromHooks() || fault.holdsWriter()) {
                assertThat(behaviour.callbacks).isEmpty();
            }
        }

        private void afterRelease() throws Exception {
            if (path == FaultPath.RESET || path == FaultPath.EVICTION) {
                replacementWriteLands();
            }
        }

        /** The gateway goes on: a fresh agent for the same key takes a write that lands. */
        private void replacementWriteLands() throws Exception {
            Probe fresh = new Probe("fresh");
            replacements.add(fresh);
            MemoryManager m2 = MemoryManager.builder().name("fm-replacement").build();
            m2.addProvider(fresh);
            AgentMemory replacement = AgentMemory.create(m2);
            try (AgentLease lease = gateway.acquire(KEY, k -> replacement)) {
                assertThat(lease.agent()).isSameAs(replacement);
                assertThat(m2.syncAll("u", "after", SESSION)).isTrue();
                assertThat(m2.flushPending(Duration.ofSeconds(10))).isTrue();
                assertThat(fresh.ids()).hasSize(1);
            }
        }

        /** Waits until every provider's shutdown() returned and every extraction reached it. */
        private void awaitQuiescence() throws InterruptedException {
            for (Probe p : probes) {
                assertThat(p.awaitShutdownReturned(EVENTUALLY)).as("%s was shut down (report %s)", p.name(), report)
                        .isTrue();
            }
            int n = expectedExtractions();
            for (Probe p : List.of(first, last)) {
                eventually().untilAsserted(() -> assertThat(p.count("on_session_end"))
                        .as("extractions reaching %s", p.name()).isEqualTo(n));
            }
        }

        private int expectedExtractions() {
            if (!path.extracts() || fault.managerShutByProviderWrite()) {
                return 0; // a manager shut down by its provider refuses onSessionEnd
            }
            return 1;
        }

        private void checkAccounting() {
            Map<String, WriteStatus> outcomes = Accounting.assertExact(report, accepted.get(), first.ids(), true);
            Set<String> finished = Accounting.idsWith(outcomes, WriteStatus.DELIVERED, WriteStatus.FAILED);
            Set<String> running = new HashSet<>(report.stillRunningWriteIds());
            Set<String> abandoned = new HashSet<>(report.abandonedWriteIds());
            for (Probe p : List.of(first, last)) {
                Set<String> got = new HashSet<>(p.ids());
                assertThat(got).as("%s got every still-running write, eventually", p.name()).containsAll(running);
                got.removeAll(running);
                assertThat(got).as("%s's writes, still-running ones aside, are the delivered and failed ones: %s",
                        p.name(), report).isEqualTo(finished);
            }
            Set<String> faultySaw = new HashSet<>(faulty.ids());
            faultySaw.addAll(behaviour.thrownOn);
            assertThat(Accounting.common(faultySaw, abandoned)).as("abandoned writes that reached the faulty provider")
                    .isEmpty();
            Set<String> finishedOrRunning = new HashSet<>(finished);
            finishedOrRunning.addAll(running);
            assertThat(finishedOrRunning).as("the faulty provider saw only started writes").containsAll(faultySaw);
            assertThat(faultySaw).as("the faulty provider got every finished write").containsAll(finished);

            Set<String> thrownOn = new HashSet<>(behaviour.thrownOn);
            assertThat(report.failedWriteIds()).as("only writes the provider threw on fail").allMatch(thrownOn::contains);
            Set<String> thrownAndFinished = new HashSet<>(thrownOn);
            thrownAndFinished.retainAll(finished);
            assertThat(new HashSet<>(report.failedWriteIds())).as("every finished write it threw on failed")
                    .containsAll(thrownAndFinished);
            assertThat(report.failuresByProvider().keySet()).isSubsetOf(Set.of("faulty"));
            long failuresAtFaulty = report.failuresByProvider().getOrDefault("faulty", 0L);
            assertThat(failuresAtFaulty).as("%s", report).isBetween(report.failed(), report.failed() + report.stillRunning());
            if (!fault.throwsFromHooks()) {
                assertThat(report.failed()).as("nothing threw: %s", report).isZero();
            }

            assertThat(m.rejectedWrites()).as("every rejection counted").isEqualTo(rejected.get());
            assertThat(report.rejected()).isLessThanOrEqualTo(rejected.get());
            if (fault.noThreads()) {
                assertThat(report.rejected()).as("the writes refused for want of a thread").isEqualTo(
                        refusedNoThread.get()).isPositive();
                assertThat(report.submitted()).isEqualTo(report.rejected());
            }
        }

        private void checkLifecycle() {
            for (Probe p : probes) {
                assertThat(p.violations).as("lifecycle of %s", p.name()).isEmpty();
                List<String> events = p.events();
                assertThat(p.count("shutdown")).as("%s shut down once: %s", p.name(), events).isEqualTo(1);
                assertThat(events).as("%s: nothing after shutdown", p.name()).last().isEqualTo("shutdown");
                assertThat(p.writesEnteredInterrupted).as("%s entered a write with the interrupt flag set", p.name())
                        .isEmpty();
                assertThat(p.extractionsEnteredInterrupted).as("%s's extraction started interrupted", p.name())
                        .isEmpty();
            }
            if (!fault.throwsFromHooks()) {
                assertThat(faulty.count("on_session_end")).isEqualTo(expectedExtractions());
            }
            if (fault.noThreads() && path.extracts()) {
                // No thread can be made for extraction: it runs on the thread that tore down or committed.
                for (Probe p : List.of(first, last)) {
                    assertThat(p.extractionThreads).as("extraction threads of %s", p.name()).hasSize(1);
                    String on = p.extractionThreads.peek();
                    if (path.usesTracker()) {
                        assertThat(on).as("a commit of the session drain").startsWith("memlife-drain-");
                    } else {
                        assertThat(on).as("the thread that tore the agent down").isEqualTo(testThread);
                    }
                }
            }
            if (path.extracts() && (path == FaultPath.COMMIT_THEN_RELEASE || path == FaultPath.HARD_CLOSE
                    || path == FaultPath.RESET || path == FaultPath.EVICTION || path == FaultPath.GATEWAY_STOP)) {
                if (fault == Fault.HANG_FOREVER) {
                    assertThat(extraction).isEqualTo(Extraction.TIMED_OUT);
                } else if (fault.managerShutByProviderWrite()) {
                    assertThat(extraction).isEqualTo(Extraction.FAILED);
                } else if (!fault.holdsWriter()) {
                    assertThat(extraction).isEqualTo(Extraction.COMPLETED);
                }
            }
            for (Probe p : replacements) {
                assertThat(p.violations).isEmpty();
            }
        }

        private void checkFaultPromises() {
            assertThat(behaviour.unexpected).as("calls back into the manager threw").isEmpty();
            if (fault == Fault.SELF_INTERRUPT) {
                // Cleared and counted on the writer and in caller-thread hooks (extraction, before the
                // report); an interrupt left in shutdown() is not counted.
                long expected = behaviour.writeInterrupts.get() + behaviour.extractionInterrupts.get();
                assertThat(report.interruptsByProvider()).as("%s", report).isEqualTo(Map.of("faulty", expected));
                assertThat(behaviour.writeInterrupts.get()).isPositive();
                assertThat(behaviour.extractionInterrupts.get()).isEqualTo(expectedExtractions());
            } else {
                assertThat(report.interruptsByProvider()).as("%s", report).isEmpty();
            }
            if (fault == Fault.KEEPS_BATCH) {
                checkKeptBatches();
            }
            if (fault == Fault.CALLBACK_WRITE_AND_FLUSH) {
                checkCallbacks();
            }
            if (fault == Fault.SHUTDOWN_FROM_WRITE) {
                FaultBehaviour.Callback c = behaviour.callbacks("stop").get(0);
                assertThat(c.hook()).isEqualTo("write");
                assertThat(Duration.ofNanos(c.nanos())).as("from the writer it does not wait for the queue")
                        .isLessThan(MARGIN);
                assertThat(c.result()).as("one report for every caller").isSameAs(report);
                assertThat(report.stillRunningWriteIds()).as("the write that called it is still running: %s", report)
                        .contains(idOf("T1"));
            }
            if (fault == Fault.SHUTDOWN_FROM_EXTRACTION) {
                List<FaultBehaviour.Callback> calls = behaviour.callbacks("stop");
                assertThat(calls).as("the provider called stop").isNotEmpty();
                for (FaultBehaviour.Callback c : calls) {
                    assertThat(c.result()).as("one report for every caller").isSameAs(report);
                    assertThat(Duration.ofNanos(c.nanos())).isLessThan(FaultBehaviour.CALLBACK_SHUTDOWN_BUDGET.plus(MARGIN));
                }
            }
            if (fault == Fault.SHUTDOWN_FROM_SHUTDOWN) {
                // From inside its own shutdown() the provider gets, at once, the report as it stood
                // before the providers' shutdown: the same writes in the same buckets, every provider
                // not shut down yet.
                List<FaultBehaviour.Callback> calls = behaviour.callbacks("stop");
                assertThat(calls).as("the provider called stop").hasSize(1);
                FaultBehaviour.Callback c = calls.get(0);
                assertThat(Duration.ofNanos(c.nanos())).as("returns at once").isLessThan(MARGIN);
                assertThat(c.result()).isInstanceOf(DrainReport.class);
                assertSameBuckets((DrainReport) c.result(), report);
                assertThat(((DrainReport) c.result()).providersNotShutDown())
                        .containsExactlyInAnyOrder("first", "faulty", "last");
            }
        }

        /** Two reports of one shutdown account for every write the same way. */
        private void assertSameBuckets(DrainReport a, DrainReport b) {
            assertThat(a.delivered()).as("delivered").isEqualTo(b.delivered());
            assertThat(a.failedWriteIds()).as("failed ids").isEqualTo(b.failedWriteIds());
            assertThat(a.abandonedWriteIds()).as("abandoned ids").isEqualTo(b.abandonedWriteIds());
            assertThat(a.stillRunningWriteIds()).as("still-running ids").isEqualTo(b.stillRunningWriteIds());
            assertThat(a.stillRunning()).as("still running").isEqualTo(b.stillRunning());
            assertThat(a.submitted() - a.rejected()).as("accepted").isEqualTo(b.submitted() - b.rejected());
        }

        private void checkKeptBatches() {
            List<FaultBehaviour.Kept> kept = new ArrayList<>(behaviour.kept);
            assertThat(kept).as("batches kept").isNotEmpty();
            assertThat(kept).as("a batch of several writes was handed over").anyMatch(k -> k.idsWhenHanded().size() > 1);
            for (FaultBehaviour.Kept k : kept) {
                List<String> now = new ArrayList<>();
                try {
                    for (Turn t : k.list()) { // after later writes and the whole teardown
                        now.add(t.writeId());
                    }
                } catch (ConcurrentModificationException e) {
                    throw new AssertionError("a kept batch list is a view of the writer's batch", e);
                }
                assertThat(now).as("a kept batch list changed after it was handed over").isEqualTo(k.idsWhenHanded());
                assertThat(k.list()).hasSize(k.idsWhenHanded().size());
            }
        }

        private void checkCallbacks() {
            List<FaultBehaviour.Callback> fromWriter = new ArrayList<>();
            for (FaultBehaviour.Callback c : behaviour.callbacks) {
                if (c.hook().equals("write")) {
                    fromWriter.add(c);
                }
            }
            assertThat(fromWriter).as("T1 called back").isNotEmpty();
            for (FaultBehaviour.Callback c : fromWriter) {
                if (c.call().equals("flushPending")) {
                    assertThat(c.result()).as("flushPending on the writer thread").isEqualTo(false);
                    assertThat(Duration.ofNanos(c.nanos())).as("flushPending on the writer returns at once")
                            .isLessThan(MARGIN);
                } else {
                    assertThat(c.result()).as("syncAll from the writer thread is accepted").isEqualTo(true);
                }
            }
            for (FaultBehaviour.Callback c : behaviour.callbacks) {
                if (c.hook().equals("shutdown") && c.call().equals("syncAll")) {
                    assertThat(c.result()).as("a write from shutdown() is rejected").isEqualTo(false);
                }
                if (c.call().equals("flushPending")) {
                    assertThat(Duration.ofNanos(c.nanos())).isLessThan(FaultBehaviour.CALLBACK_FLUSH_TIMEOUT.plus(MARGIN));
                }
            }
            if (path.extracts()) {
                assertThat(behaviour.callbacks).as("onSessionEnd called back").anyMatch(c -> c.hook().equals("extraction"));
            }
        }

        /** No thread of this cell died of an uncaught throwable (the writer above all). */
        private void assertNoThreadDied(String when) {
            List<String> mine = new ArrayList<>();
            for (String d : DEATHS) {
                if (d.contains(name)) {
                    mine.add(d);
                }
            }
            assertThat(mine).as("threads of %s that died, %s", name, when).isEmpty();
        }

        private String idOf(String user) {
            for (Turn t : first.turns()) {
                if (t.userContent().equals(user)) {
                    return t.writeId();
                }
            }
            throw new AssertionError("first never got " + user + ": " + first.events());
        }

        // ---- clean-up -----------------------------------------------------------------------------

        void cleanUp() {
            behaviour.release();
            registrations.forEach(ShutdownHooks.Registration::close);
            if (gateway != null && !gateway.isStopped()) {
                gateway.stop(Duration.ofSeconds(5));
            }
            if (!m.isShutdown()) {
                m.stop(Duration.ofSeconds(1));
            }
        }
    }

    /** Awaitility without its default 100 ms delay before the first look (it would cost every cell). */
    static ConditionFactory eventually() {
        return await().atMost(EVENTUALLY).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(2))
                .dontCatchUncaughtExceptions();
    }

    // ---- timing ------------------------------------------------------------------------------------

    /** Runs {@code call} and asserts it returned within {@code budget} plus the margin. */
    static <T> T timed(Duration budget, String what, Callable<T> call) throws Exception {
        long start = System.nanoTime();
        T result = call.call();
        assertWithin(start, budget, what);
        return result;
    }

    static void assertWithin(long startNanos, Duration budget, String what) {
        Duration took = Duration.ofNanos(System.nanoTime() - startNanos);
        assertThat(took).as("%s took %d ms; budget %d ms + margin %d ms", what, took.toMillis(), budget.toMillis(),
                MARGIN.toMillis()).isLessThanOrEqualTo(budget.plus(MARGIN));
    }
}
