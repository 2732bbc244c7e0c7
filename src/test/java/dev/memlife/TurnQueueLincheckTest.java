package dev.memlife;

import static org.jetbrains.lincheck.datastructures.ManagedStrategyGuaranteeKt.forClasses;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lincheck over {@link TurnQueue}: callers reserve and append from several threads while one taker
 * polls, and {@link TurnQueue#close()} may come at any point. Runs in both of Lincheck's modes:
 * model checking (it explores interleavings of the queue's shared accesses and prints the one that
 * breaks a rule) and stress (real threads, many runs).
 *
 * <p><b>What the scenario's results say.</b> A producer returns only whether the queue refused it
 * as closed; Lincheck checks that against {@link Spec}, so a reservation that succeeds after a
 * {@code close()} it must follow is reported as a non-linearizable result. The rest is not
 * linearizable by design and is checked as invariants instead: a caller reserves before
 * it links its write, so the taker may see fewer writes than were reserved (and a caller may get
 * {@code FULL} where a sequential queue would have room), and writes leave in link order, which
 * differs from reservation order across callers.
 *
 * <p><b>The invariants</b>, checked where they are exact: in each operation (a failure there
 * becomes an exception result Lincheck reports with the interleaving) and in the {@link Validate}
 * function once every producer has finished appending:
 * <ul>
 *   <li>no write whose reservation succeeded is lost: the taker (during the run, then the final
 *       drain) polls exactly the writes {@code 1..reserved()}, as many as producers were accepted;
 *   <li>no write is polled twice;
 *   <li>each producer's writes are polled in the order that producer appended them;
 *   <li>no reservation succeeds after {@code close()}: every close returns the same count, equal
 *       to the final {@code reserved()}, so no accepted write has a later sequence number;
 *   <li>the capacity holds: {@code reserved - taken <= capacity}, checked by the taker (who owns
 *       {@code taken}) and by every producer right after its reservation ({@code taken} only grows,
 *       so the check cannot fail spuriously).
 * </ul>
 *
 * <p>The bookkeeping lives in {@link Ledger}, which the model checker is told to ignore: it adds no
 * interleavings of its own and cannot hide or cause a failure of the queue.
 */
@Param(name = "max", gen = IntGen.class, conf = "1:2")
@Timeout(120)
public class TurnQueueLincheckTest {

    /** Small, so that FULL and the capacity check are reached with a handful of operations. */
    static final int CAPACITY = 2;
    /** Multiplies the iterations of both modes for a deeper run: {@code -Dmemlife.lincheck.scale=10}. */
    static final int SCALE = Math.max(1, Integer.getInteger("memlife.lincheck.scale", 1));

    private final TurnQueue queue = new TurnQueue(CAPACITY);
    private final Ledger ledger = new Ledger();

    /** A caller: reserve, and if accepted append a fresh turn (as {@code Writer.enqueue} does). */
    @Operation
    public String produce() {
        QueuedTurn turn = new QueuedTurn("lincheck", ledger.producerKey(), "u", "a", List.of(), null);
        long seq = queue.reserve();
        if (seq == TurnQueue.REJECTED) {
            return "rejected";
        }
        if (seq == TurnQueue.FULL) {
            return "open"; // full, not closed: the caller would wait and retry
        }
        long taken = queue.taken(); // read after the reservation; it only grows
        turn.assignSeq(seq);
        ledger.accepted();
        queue.append(turn); // first: a failed check below must not also lose the write
        if (seq - taken > CAPACITY) {
            throw new AssertionError("capacity exceeded: reservation " + seq + " succeeded with only " + taken
                    + " taken (capacity " + CAPACITY + ")");
        }
        return "open";
    }

    /** The one taker: polls at most {@code max} linked writes, publishes and finishes them. */
    @Operation(nonParallelGroup = "taker")
    public void take(@Param(name = "max") int max) {
        long taken = queue.taken(); // the taker's own count: exact until its endTake()
        long reserved = queue.reserved();
        if (reserved - taken > CAPACITY) {
            throw new AssertionError("capacity exceeded: " + reserved + " reserved, " + taken + " taken (capacity "
                    + CAPACITY + ")");
        }
        int n = 0;
        for (Turn t; n < max && (t = queue.poll()) != null; n++) {
            ledger.polled(t);
        }
        queue.endTake();
        queue.markFinished(n);
        if (queue.taken() != taken + n || queue.finished() != queue.taken()) {
            throw new AssertionError("taker counts disagree: taken " + queue.taken() + ", finished "
                    + queue.finished() + ", expected " + (taken + n));
        }
    }

    /** Shutdown's close; idempotent, so the scenario may close more than once. */
    @Operation
    public void close() {
        ledger.closed(queue.close());
    }

    /**
     * The sequential specification the results are checked against: only "refused as closed or
     * not", which is what a caller can rely on. Independent of the queue, so an operation that throws
     * (a broken invariant) never matches it, even in a run without concurrency.
     */
    public static final class Spec {
        private boolean closed;

        public String produce() {
            return closed ? "rejected" : "open";
        }

        public void take(int max) {}

        public void close() {
            closed = true;
        }
    }

    /** Runs once every operation has returned, so every accepted write has been appended. */
    @Validate
    public void validate() {
        long bound = queue.reserved() + 1; // a broken queue may hand the same write out forever
        for (Turn t; bound-- > 0 && (t = queue.poll()) != null; ) { // the drain takes what the run left queued
            ledger.polled(t);
        }
        queue.endTake();
        ledger.check(queue.reserved(), queue.taken());
    }

    @Test
    void modelChecking() {
        ModelCheckingOptions options = new ModelCheckingOptions()
                .iterations(12 * SCALE)
                .invocationsPerIteration(500)
                .threads(3)
                .actorsPerThread(2)
                .actorsBefore(1)
                .actorsAfter(1)
                .sequentialSpecification(Spec.class)
                .addGuarantee(forClasses(Ledger.class.getName(), Ledger.class.getCanonicalName()).allMethods().ignore());
        options.check(TurnQueueLincheckTest.class);
    }

    @Test
    void stress() {
        StressOptions options = new StressOptions()
                .iterations(20 * SCALE)
                .invocationsPerIteration(1_000)
                .threads(3)
                .actorsPerThread(3)
                .actorsBefore(1)
                .actorsAfter(1)
                .sequentialSpecification(Spec.class);
        options.check(TurnQueueLincheckTest.class);
    }

    /**
     * What the operations saw, for {@link #validate()}. Thread-safe on its own; the model checker
     * ignores it (see {@link #modelChecking()}).
     */
    static final class Ledger {

        private final AtomicLong accepted = new AtomicLong();
        /** Polled writes in poll order; only the taker (one thread at a time) adds. */
        private final ConcurrentLinkedQueue<Turn> polled = new ConcurrentLinkedQueue<>();
        private final ConcurrentLinkedQueue<Long> closes = new ConcurrentLinkedQueue<>();

        /** Names the calling producer: each Lincheck thread is one producer. */
        String producerKey() {
            return "producer-" + Thread.currentThread().getId();
        }

        void accepted() {
            accepted.incrementAndGet();
        }

        void polled(Turn t) {
            polled.add(t);
        }

        void closed(long count) {
            closes.add(count);
        }

        void check(long reserved, long taken) {
            List<Turn> all = new ArrayList<>(polled);
            Map<Long, Turn> bySeq = new HashMap<>();
            Map<String, Long> lastSeqOfProducer = new HashMap<>();
            for (int i = 0; i < all.size(); i++) {
                Turn t = all.get(i);
                for (int j = 0; j < i; j++) { // by identity; no identity hash (model checking replaces it)
                    if (all.get(j) == t) {
                        throw new AssertionError("write " + t.seq() + " was polled twice; polled " + seqs(all));
                    }
                }
                if (bySeq.put(t.seq(), t) != null) {
                    throw new AssertionError("two polled writes share sequence number " + t.seq() + "; polled "
                            + seqs(all));
                }
                Long last = lastSeqOfProducer.put(t.sessionId(), t.seq());
                if (last != null && last > t.seq()) {
                    throw new AssertionError(t.sessionId() + "'s writes left out of order: " + last + " before "
                            + t.seq() + "; polled " + seqs(all));
                }
            }
            for (long seq = 1; seq <= reserved; seq++) {
                if (!bySeq.containsKey(seq)) {
                    throw new AssertionError("write " + seq + " was reserved but never polled (lost); reserved "
                            + reserved + ", polled " + seqs(all));
                }
            }
            if (accepted.get() != reserved) {
                throw new AssertionError(accepted.get() + " producers were accepted but the queue counts " + reserved
                        + " reservations: a reservation was lost from the count or counted twice; polled " + seqs(all));
            }
            if (all.size() != reserved || taken != reserved) {
                throw new AssertionError("counts disagree: " + accepted.get() + " producers accepted, " + reserved
                        + " reserved, " + all.size() + " polled, " + taken + " taken; polled " + seqs(all));
            }
            for (long count : closes) {
                if (count != reserved) {
                    throw new AssertionError("close() returned " + count + " but " + reserved + " writes were "
                            + "reserved in the end: a reservation succeeded after close, or close miscounted; "
                            + "closes returned " + closes);
                }
            }
        }

        private static List<Long> seqs(List<Turn> turns) {
            List<Long> out = new ArrayList<>();
            for (Turn t : turns) {
                out.add(t.seq());
            }
            return Collections.unmodifiableList(out);
        }
    }
}
