package dev.memlife;

import static org.jetbrains.lincheck.datastructures.ManagedStrategyGuaranteeKt.forClasses;

import dev.memlife.internal.ThrottledLog;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.helpers.NOPLogger;

/**
 * Lincheck over the {@link Writer}: callers write and flush from several threads while the writer
 * takes and delivers batches ({@link Writer#stepByHand()}, on one Lincheck thread; built with {@link
 * WriterThread#BY_HAND}, the writer starts no thread of its own) and the drain may come at any point, with a deadline that has already passed,
 * so it claims whatever the writer has not started. Runs in model checking and stress modes.
 *
 * <p><b>The forbidden outcomes</b>, checked in the operations (an assertion there becomes an
 * exception result that Lincheck reports with its interleaving) and once every operation returned
 * ({@link #validate()}):
 * <ul>
 *   <li>a write accepted but neither delivered nor reported: every accepted sequence number is
 *       delivered to the provider, or listed as abandoned (or counted unlinked);
 *   <li>a write delivered after being reported abandoned, or delivered twice;
 *   <li>a report that does not add up per id: what the provider got is exactly the writes the drain
 *       called delivered plus those it called still running;
 *   <li>a flush that returns true before every write accepted ahead of it reached the provider.
 * </ul>
 */
@Timeout(120)
public class WriterLincheckTest {

    static final int CAPACITY = 3;
    static final int SCALE = Math.max(1, Integer.getInteger("memlife.lincheck.scale", 1));

    private final Ledger ledger = new Ledger();
    private final RegisteredProvider[] route = {new RegisteredProvider(new Recorder(ledger), "recorder", true)};
    private final ThrottledLog quiet = new ThrottledLog(NOPLogger.NOP_LOGGER);
    private final Writer writer = new Writer(new WriterContext("lincheck", "w",
            new WriterContext.Settings(CAPACITY, 2, 0L, 0L), WriterThread.BY_HAND, () -> 0L, quiet,
            new ProviderCalls("lincheck"), () -> route, null));

    /** A caller's {@code syncAll}: never waits (timeout 0), so a full queue throws. */
    @Operation
    public void write() {
        try {
            if (writer.enqueue("s", "u", "a", List.of(), route, 0)) {
                ledger.accepted.incrementAndGet();
            }
        } catch (QueueFullException full) {
            // not accepted: a caller would wait and retry
        }
    }

    /** The barrier, without waiting: if it says met, every write accepted before it was delivered. */
    @Operation
    public void flush() {
        long before = ledger.accepted.get();
        if (writer.flush(0) && ledger.delivered.size() < before) {
            throw new AssertionError("flush met with " + ledger.delivered.size() + " of the " + before
                    + " writes accepted before it delivered");
        }
    }

    /** One pass of the writer's loop. */
    @Operation(nonParallelGroup = "writer")
    public void step() {
        writer.stepByHand();
    }

    /** Shutdown's drain, once, with its deadline already passed. */
    @Operation(nonParallelGroup = "drain")
    public void drain() {
        if (ledger.outcome.get() == null) {
            ledger.outcome.set(writer.drain(0));
        }
    }

    /** The operations return nothing: every rule is an assertion, which Lincheck reports as a result. */
    public static final class Spec {
        public void write() {}

        public void flush() {}

        public void step() {}

        public void drain() {}
    }

    @Validate
    public void validate() {
        Writer.Outcome outcome = ledger.outcome.get();
        if (outcome == null) {
            for (int bound = CAPACITY + 1; bound > 0 && writer.stepByHand(); bound--) {
                // the writer empties the queue
            }
        }
        ledger.check(writer.queue().reserved(), outcome);
    }

    @Test
    void modelChecking() {
        new ModelCheckingOptions()
                .iterations(10 * SCALE)
                .invocationsPerIteration(200)
                .threads(3)
                .actorsPerThread(2)
                .actorsBefore(1)
                .actorsAfter(1)
                .sequentialSpecification(Spec.class)
                .addGuarantee(forClasses(Ledger.class.getName(), Recorder.class.getName()).allMethods().ignore())
                .check(WriterLincheckTest.class);
    }

    @Test
    void stress() {
        new StressOptions()
                .iterations(20 * SCALE)
                .invocationsPerIteration(1_000)
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(1)
                .sequentialSpecification(Spec.class)
                .check(WriterLincheckTest.class);
    }

    /** The provider: records what it is handed. */
    static final class Recorder implements MemoryProvider {
        private final Ledger ledger;

        Recorder(Ledger ledger) {
            this.ledger = ledger;
        }

        @Override
        public String name() {
            return "recorder";
        }

        @Override
        public void syncTurn(Turn turn) {
            ledger.delivered.add(turn.seq());
        }
    }

    /** What the operations saw; the model checker ignores it. */
    static final class Ledger {
        final AtomicLong accepted = new AtomicLong();
        final ConcurrentLinkedQueue<Long> delivered = new ConcurrentLinkedQueue<>();
        final AtomicReference<Writer.Outcome> outcome = new AtomicReference<>();

        void check(long reserved, Writer.Outcome outcome) {
            List<Long> got = new ArrayList<>(delivered);
            Set<Long> unique = new HashSet<>(got);
            if (unique.size() != got.size()) {
                throw new AssertionError("a write was delivered twice: " + got);
            }
            if (accepted.get() != reserved) {
                throw new AssertionError(accepted.get() + " writes accepted, " + reserved + " reserved");
            }
            if (outcome == null) {
                if (got.size() != reserved) {
                    throw new AssertionError("no drain, yet only " + got + " of " + reserved + " writes delivered");
                }
                return;
            }
            Set<Long> abandoned = seqs(outcome.abandonedIds());
            Set<Long> running = seqs(outcome.stillRunningIds());
            for (long seq = 1; seq <= reserved; seq++) {
                boolean isDelivered = unique.contains(seq);
                if (isDelivered && abandoned.contains(seq)) {
                    throw new AssertionError("write " + seq + " delivered after it was reported abandoned: " + describe(
                            outcome, got));
                }
                if (!isDelivered && !abandoned.contains(seq) && outcome.unlinked() == 0) {
                    throw new AssertionError("write " + seq + " accepted but neither delivered nor reported: "
                            + describe(outcome, got));
                }
            }
            if (!unique.containsAll(running)) {
                throw new AssertionError("a write reported still running never reached the provider: "
                        + describe(outcome, got));
            }
            if (outcome.delivered() + running.size() != got.size() || outcome.failed() != 0) {
                throw new AssertionError("the report does not match what the provider got: " + describe(outcome, got));
            }
        }

        private static Set<Long> seqs(List<String> ids) {
            Set<Long> out = new HashSet<>();
            for (String id : ids) {
                out.add(Long.parseLong(id.substring(id.lastIndexOf(':') + 1)));
            }
            return out;
        }

        private static String describe(Writer.Outcome outcome, List<Long> got) {
            return "delivered " + outcome.delivered() + ", abandoned " + outcome.abandonedIds() + ", still running "
                    + outcome.stillRunningIds() + ", unlinked " + outcome.unlinked() + "; the provider got " + got;
        }
    }
}
