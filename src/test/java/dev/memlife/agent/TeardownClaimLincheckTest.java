package dev.memlife.agent;

import static org.jetbrains.lincheck.datastructures.ManagedStrategyGuaranteeKt.forClasses;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.memlife.MemoryManager;
import dev.memlife.Message;
import dev.memlife.Turn;
import dev.memlife.agent.TeardownReport.Extraction;
import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import kotlin.Unit;
import kotlin.reflect.KFunction;
import kotlin.reflect.jvm.ReflectJvmMapping;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/**
 * Lincheck over {@link AgentMemory}'s teardown claim: {@code release()}, {@code
 * commitThenRelease()}, {@code close()}, {@code commitSession()} and {@code syncAll} writes race on
 * one agent whose manager has two recording providers. Runs in both of Lincheck's modes: model
 * checking over {@link Claim}, the teardowns and commits (Lincheck controls every thread, including
 * the extraction and provider-shutdown threads memlife starts, and explores their interleavings),
 * and stress over {@link ClaimWithWrites}, the same plus writes, on free-running threads.
 *
 * <p><b>Results</b> are checked against {@link Spec}: the first teardown runs its mode (extraction
 * completed for the modes that extract, flush met), every later one returns "owned by" that first
 * mode, a commit succeeds before any teardown and is refused after it. Two winners, or losers that
 * name different owners, are non-linearizable results. A write returns nothing: it may still be
 * accepted after a losing teardown returned (the winner is still flushing), so its outcome is
 * checked in the validation function instead.
 *
 * <p><b>Provider side</b>, checked in {@link Claim#validate()} from a log of every provider hook,
 * each charged to the operation whose thread (or a thread that operation started) ran it:
 * <ul>
 *   <li>exactly one teardown ran; each provider's {@code shutdown()} ran exactly once, for it;
 *   <li>{@code onSessionEnd} ran once per committed {@code commitSession}, plus once for the winner
 *       if its mode extracts, and for nobody else: a losing teardown or a refused commit touched no
 *       provider; every extraction saw the transcript;
 *   <li>no provider hook (extraction or write) after that provider's {@code shutdown()};
 *   <li>every result names the same owner, the agent's {@code teardownOwner()}, and {@code
 *       awaitTeardown} returns the winner's own result;
 *   <li>every accepted write reached each provider exactly once (so before its shutdown), each
 *       caller's writes in that caller's order; no rejected write reached a provider.
 * </ul>
 * A scenario without a teardown is torn down by the validation function (a {@code release()}),
 * which is checked like any other winner and ends the run's writer thread.
 */
@Timeout(300)
class TeardownClaimLincheckTest {

    /** Multiplies the iterations of both modes for a deeper run: {@code -Dmemlife.lincheck.scale=10}. */
    static final int SCALE = Math.max(1, Integer.getInteger("memlife.lincheck.scale", 1));

    @AfterAll
    static void restoreLogging() {
        ClaimWithWrites.restoreLogging();
    }

    /**
     * About 70 s on an idle 2-core machine (100 invocations an iteration took 115 s, within 5 s of
     * the class's old 120 s bound, and timed out on a busy one); the bound leaves room for a
     * machine busy with something else. {@code -Dmemlife.lincheck.scale} deepens it.
     */
    @Test
    void modelChecking() {
        ModelCheckingOptions options = new ModelCheckingOptions()
                .iterations(4 * SCALE)
                .invocationsPerIteration(60)
                .threads(3)
                .actorsPerThread(2)
                .actorsBefore(0)
                .actorsAfter(1)
                .sequentialSpecification(Spec.class)
                .addGuarantee(forClasses(Ledger.class.getName(), Ledger.class.getCanonicalName()).allMethods().ignore())
                // Logging is not under test: keep logback's locks out of the interleavings.
                .addGuarantee(forClasses(name -> name.startsWith("ch.qos.logback.")).allMethods().ignore())
                // Nor is the prefetch pool, which shutdown only stops (no prefetch runs here).
                .addGuarantee(forClasses("dev.memlife.Prefetcher").allMethods().ignore());
        // The races the claim exists for, explored in every run whatever the random scenarios are.
        parallel(options, List.of("release", "commitThenRelease"), List.of("close"), List.of("commitThenRelease"));
        parallel(options, List.of("commitSession"), List.of("close"), List.of("commitSession", "release"));
        options.check(Boolean.getBoolean("memlife.lincheck.writes") ? ClaimWithWrites.class : Claim.class);
    }

    /** Adds a scenario whose parallel part runs the named operations of {@link Claim}, one list per thread. */
    @SafeVarargs
    private static void parallel(ModelCheckingOptions options, List<String>... threads) {
        options.addCustomScenario(scenario -> {
            scenario.parallel(parallel -> {
                for (List<String> operations : threads) {
                    parallel.thread(thread -> {
                        for (String operation : operations) {
                            thread.actor(operation(operation));
                        }
                        return Unit.INSTANCE;
                    });
                }
                return Unit.INSTANCE;
            });
            return Unit.INSTANCE;
        });
    }

    private static KFunction<?> operation(String name) {
        try {
            return Objects.requireNonNull(ReflectJvmMapping.getKotlinFunction(Claim.class.getMethod(name)), name);
        } catch (NoSuchMethodException e) {
            throw new IllegalArgumentException("no operation " + name, e);
        }
    }

    @Test
    void stressWithWrites() {
        StressOptions options = new StressOptions()
                .iterations(16 * SCALE)
                .invocationsPerIteration(300)
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(1)
                .sequentialSpecification(Spec.class);
        options.check(ClaimWithWrites.class);
    }

    /** The model: the first teardown wins, the rest name it; commits succeed only before it. */
    public static class Spec {
        private TeardownMode owner;

        public String release() {
            return teardown(TeardownMode.RELEASE);
        }

        public String commitThenRelease() {
            return teardown(TeardownMode.COMMIT_THEN_RELEASE);
        }

        public String close() {
            return teardown(TeardownMode.CLOSE);
        }

        public String commitSession() {
            return owner == null ? "committed" : "refused";
        }

        public void write() {}

        private String teardown(TeardownMode mode) {
            if (owner != null) {
                return "owned by " + owner;
            }
            owner = mode;
            return "ran " + mode + ", extraction " + (mode.extracts() ? Extraction.COMPLETED : Extraction.NOT_RUN)
                    + ", flushed";
        }
    }

    /**
     * The scenario for model checking: one agent, two providers, every thread memlife starts made by
     * {@link Ledger#newThread}. No writes by default: the writer thread's spin-then-park loop makes a
     * model-checking run several times slower; {@code -Dmemlife.lincheck.writes=true} model-checks
     * {@link ClaimWithWrites} instead.
     */
    public static class Claim {

        static final List<Message> TRANSCRIPT = List.of(Message.user("hi"), Message.assistant("hello"));

        final Ledger ledger = new Ledger();
        final AgentMemory agent;
        private final Probe first = new Probe("first", ledger);
        private final Probe second = new Probe("second", ledger);

        public Claim() {
            // The ledger itself, not a method reference: the model checker skips the ledger's methods only
            // when they are called from instrumented code, and a lambda's class is not instrumented.
            MemoryManager manager = MemoryManager.builder().name("lincheck").threadFactory(ledger).build();
            manager.addProvider(first);
            manager.addProvider(second);
            agent = AgentMemory.builder(manager).threadFactory(ledger).build();
            for (Message m : TRANSCRIPT) {
                agent.append(m);
            }
        }

        @Operation
        public String release() {
            return teardown(TeardownMode.RELEASE);
        }

        @Operation
        public String commitThenRelease() {
            return teardown(TeardownMode.COMMIT_THEN_RELEASE);
        }

        @Operation
        public String close() {
            return teardown(TeardownMode.CLOSE);
        }

        @Operation
        public String commitSession() {
            Op op = ledger.begin("commitSession", null);
            String result;
            try {
                agent.commitSession();
                result = "committed";
            } catch (IllegalStateException e) {
                result = e.getMessage() != null && e.getMessage().endsWith("refused") ? "refused" : "failed: " + e;
            } catch (Exception e) {
                result = "failed: " + e;
            }
            ledger.end(op, result, null);
            return result;
        }

        private String teardown(TeardownMode mode) {
            Op op = ledger.begin(mode.name(), mode);
            TeardownReport r = switch (mode) {
                case RELEASE -> agent.release();
                case COMMIT_THEN_RELEASE -> agent.commitThenRelease();
                case CLOSE -> agent.teardown(TeardownMode.CLOSE);
            };
            String result;
            if (r.ran()) {
                List<String> notShutDown = r.drainReport().orElseThrow().providersNotShutDown();
                result = "ran " + r.requested() + ", extraction " + r.extraction() + (r.flushed() ? ", flushed" : "")
                        + (notShutDown.isEmpty() ? "" : ", not shut down " + notShutDown);
            } else {
                result = "owned by " + r.owner();
            }
            ledger.end(op, result, r);
            return result;
        }

        /** Every operation has returned: tear down if nobody did, then check the providers' logs. */
        @Validate
        public void validate() {
            if (agent.isOpen()) {
                teardown(TeardownMode.RELEASE);
            }
            ledger.check(agent, TRANSCRIPT, first, second);
        }
    }

    /** The scenario for stress: {@link Claim}'s operations plus writes. */
    public static class ClaimWithWrites extends Claim {

        private static Level levelBefore;
        private static boolean quieted;

        public ClaimWithWrites() {
            quietLateWriteWarnings();
        }

        /** One turn; its content names the write, so delivery and per-caller order can be checked. */
        @Operation
        public void write() {
            Op op = ledger.begin("write", null);
            String id = ledger.nextWriteId();
            boolean accepted = agent.memory().syncAll(id, "reply", "s");
            ledger.end(op, accepted ? "accepted" : "rejected", null);
            ledger.wrote(id, accepted);
        }

        /**
         * A write after the shutdown is rejected and warned about, once per scenario run: thousands
         * of lines. Done here, once Lincheck has attached its agent, so that logback's classes load
         * after it (loaded earlier, Lincheck reports each one it fails to re-transform).
         */
        private static synchronized void quietLateWriteWarnings() {
            if (!quieted) {
                Logger memlife = (Logger) LoggerFactory.getLogger("dev.memlife");
                levelBefore = memlife.getLevel();
                memlife.setLevel(Level.ERROR);
                quieted = true;
            }
        }

        static synchronized void restoreLogging() {
            if (quieted) {
                ((Logger) LoggerFactory.getLogger("dev.memlife")).setLevel(levelBefore);
                quieted = false;
            }
        }
    }

    /** A recording provider that also charges each hook to the operation that caused it. */
    static final class Probe extends RecordingProvider {
        private final Ledger ledger;

        Probe(String name, Ledger ledger) {
            super(name);
            this.ledger = ledger;
        }

        @Override
        public void syncTurn(Turn turn) {
            ledger.touch(name(), "sync:" + turn.userContent());
            super.syncTurn(turn);
        }

        @Override
        public void onSessionEnd(List<Message> messages) {
            ledger.touch(name(), "on_session_end");
            super.onSessionEnd(messages);
        }

        @Override
        public void shutdown() {
            ledger.touch(name(), "shutdown");
            super.shutdown();
        }
    }

    /** One operation of the scenario (or the validation's teardown), and what it returned. */
    static final class Op {
        final int id;
        final String name;
        final TeardownMode mode;
        volatile String result;
        volatile TeardownReport teardown;

        Op(int id, String name, TeardownMode mode) {
            this.id = id;
            this.name = name;
            this.mode = mode;
        }

        boolean ran() {
            return teardown != null && teardown.ran();
        }

        @Override
        public String toString() {
            return name + "#" + id + (result == null ? "" : " -> " + result);
        }
    }

    /** A provider hook, charged to an operation (null: a thread no operation started). */
    static final class Touch {
        final String provider;
        final String event;
        final Op op;

        Touch(String provider, String event, Op op) {
            this.provider = provider;
            this.event = event;
            this.op = op;
        }

        @Override
        public String toString() {
            return provider + ":" + event + " by " + (op == null ? "?" : op.name + "#" + op.id);
        }
    }

    /**
     * The bookkeeping: which operation each thread is running, what every provider hook was charged
     * to, and the checks. Thread-safe on its own; the model checker ignores it. Threads are keyed by
     * id: under model checking Lincheck substitutes identity hash codes, which must not matter here.
     */
    static final class Ledger implements ThreadFactory {
        private final AtomicInteger ids = new AtomicInteger();
        private final Map<Long, Op> running = new ConcurrentHashMap<>();
        private final ConcurrentLinkedQueue<Op> ops = new ConcurrentLinkedQueue<>();
        private final ConcurrentLinkedQueue<Touch> touches = new ConcurrentLinkedQueue<>();
        private final AtomicInteger writeIds = new AtomicInteger();
        /** Accepted write id to its caller; and the rejected ids. */
        private final Map<String, Long> acceptedWrites = new ConcurrentHashMap<>();
        private final ConcurrentLinkedQueue<String> rejectedWrites = new ConcurrentLinkedQueue<>();

        Op begin(String name, TeardownMode mode) {
            Op op = new Op(ids.incrementAndGet(), name, mode);
            ops.add(op);
            running.put(Thread.currentThread().getId(), op);
            return op;
        }

        void end(Op op, String result, TeardownReport teardown) {
            op.result = result;
            op.teardown = teardown;
            running.remove(Thread.currentThread().getId());
        }

        /**
         * The thread factory of the manager and the agent: plain daemon threads (Lincheck's model
         * checker tracks the threads the code under test starts), each charged to the operation of
         * the thread that made it.
         */
        @Override
        public Thread newThread(Runnable work) {
            Thread t = new Thread(work, "memlife-lincheck");
            t.setDaemon(true);
            Op op = running.get(Thread.currentThread().getId());
            if (op != null) {
                running.put(t.getId(), op);
            }
            return t;
        }

        void touch(String provider, String event) {
            touches.add(new Touch(provider, event, running.get(Thread.currentThread().getId())));
        }

        String nextWriteId() {
            return "w" + writeIds.incrementAndGet();
        }

        void wrote(String id, boolean accepted) {
            if (accepted) {
                acceptedWrites.put(id, Thread.currentThread().getId());
            } else {
                rejectedWrites.add(id);
            }
        }

        void check(AgentMemory agent, List<Message> transcript, Probe... providers) {
            List<Op> all = new ArrayList<>(ops);
            List<Touch> log = new ArrayList<>(touches);
            List<Op> winners = new ArrayList<>();
            int committed = 0;
            for (Op op : all) {
                if (op.ran()) {
                    winners.add(op);
                }
                if ("committed".equals(op.result)) {
                    committed++;
                }
            }
            fail(winners.size() != 1, "exactly one teardown must run, " + winners.size() + " did", all, log);
            Op winner = winners.get(0);
            TeardownMode owner = winner.mode;
            for (Op op : all) {
                fail(op.teardown != null && op.teardown.owner() != owner,
                        op + " names owner " + (op.teardown == null ? null : op.teardown.owner()) + " but " + winner
                                + " ran", all, log);
            }
            fail(agent.teardownOwner().orElse(null) != owner || !agent.isTornDown(), "agent reports owner "
                    + agent.teardownOwner() + ", torn down " + agent.isTornDown() + "; winner " + winner, all, log);
            Optional<TeardownReport> awaited = agent.awaitTeardown(Duration.ZERO);
            fail(awaited.isEmpty() || awaited.get() != winner.teardown,
                    "awaitTeardown returned " + awaited + ", not the winner's result " + winner.teardown, all, log);

            int extractions = committed + (owner.extracts() ? 1 : 0);
            for (Probe p : providers) {
                List<Touch> mine = new ArrayList<>();
                for (Touch t : log) {
                    if (t.provider.equals(p.name())) {
                        mine.add(t);
                    }
                }
                int shutdowns = 0;
                int sessionEnds = 0;
                for (int i = 0; i < mine.size(); i++) {
                    Touch t = mine.get(i);
                    if (t.event.equals("shutdown")) {
                        shutdowns++;
                        fail(t.op != winner, t + ": shutdown by an operation other than the winner " + winner, all,
                                log);
                        fail(i != mine.size() - 1, p.name() + " was called after its shutdown(): "
                                + mine.subList(i, mine.size()), all, log);
                    } else if (t.event.equals("on_session_end")) {
                        sessionEnds++;
                        boolean byWinner = t.op == winner && owner.extracts();
                        boolean byCommit = t.op != null && "committed".equals(t.op.result);
                        fail(!byWinner && !byCommit, t + ": extraction by an operation that may not extract", all,
                                log);
                    } else if (!t.event.startsWith("sync:")) {
                        fail(true, "unexpected hook " + t, all, log);
                    }
                }
                fail(shutdowns != 1, p.name() + ".shutdown() ran " + shutdowns + " times", all, log);
                fail(sessionEnds != extractions, p.name() + ".onSessionEnd ran " + sessionEnds + " times, expected "
                        + extractions + " (" + committed + " commits" + (owner.extracts() ? " + " + owner : "") + ")",
                        all, log);
                for (List<Message> seen : p.sessionEnds()) {
                    fail(!seen.equals(transcript), p.name() + " extracted " + seen + ", not the transcript", all, log);
                }
                checkWrites(p, all, log);
            }
        }

        private void checkWrites(Probe p, List<Op> all, List<Touch> log) {
            Map<String, Integer> deliveries = new HashMap<>();
            Map<Long, Integer> lastOfCaller = new HashMap<>();
            for (Turn t : p.turns()) {
                String id = t.userContent();
                deliveries.merge(id, 1, Integer::sum);
                Long caller = acceptedWrites.get(id);
                fail(caller == null, p.name() + " received " + id + ", which was not accepted (rejected: "
                        + rejectedWrites + ")", all, log);
                int n = Integer.parseInt(id.substring(1));
                Integer last = lastOfCaller.put(caller, n);
                fail(last != null && last > n, p.name() + " received one caller's writes out of order: w" + last
                        + " before " + id, all, log);
            }
            for (String id : acceptedWrites.keySet()) {
                int n = deliveries.getOrDefault(id, 0);
                fail(n != 1, p.name() + " received accepted write " + id + " " + n + " times", all, log);
            }
        }

        private static void fail(boolean broken, String what, List<Op> all, List<Touch> log) {
            if (broken) {
                throw new AssertionError(what + "\n  operations: " + all + "\n  provider hooks: " + log);
            }
        }
    }
}
