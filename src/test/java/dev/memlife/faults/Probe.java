package dev.memlife.faults;

import dev.memlife.Message;
import dev.memlife.Turn;
import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A recording provider that also flags what the lifecycle forbids: any hook that starts after its
 * {@code shutdown()} started, a second {@code shutdown()}, and a write hook entered with the
 * writer's interrupt flag still set (left by a provider before it). Subclasses put their fault in
 * {@link #beforeWrite}, {@link #beforeExtraction} and {@link #beforeShutdown}. Writes are recorded
 * after {@link #beforeWrite} returns, so a write the fault threw on is not recorded. Thread-safe.
 *
 * <p>Writes come through {@code syncTurn} here; {@link BatchProbe} takes them as batches.
 */
class Probe extends RecordingProvider {

    /** Lifecycle violations seen, in order. */
    final ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
    /** Write hooks entered with the thread's interrupt flag set. */
    final ConcurrentLinkedQueue<String> writesEnteredInterrupted = new ConcurrentLinkedQueue<>();
    /** Extraction calls entered with the thread's interrupt flag set. */
    final ConcurrentLinkedQueue<String> extractionsEnteredInterrupted = new ConcurrentLinkedQueue<>();
    /** The thread of every onSessionEnd call, in call order. */
    final ConcurrentLinkedQueue<String> extractionThreads = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean shutdownStarted = new AtomicBoolean();
    private final CountDownLatch shutdownReturned = new CountDownLatch(1);

    Probe(String name) {
        super(name);
    }

    @Override
    public final void syncTurn(Turn turn) {
        enterWrite("syncTurn", List.of(turn));
        beforeWrite(List.of(turn));
        store(turn);
    }

    /** Called by {@link BatchProbe#syncBatch}. */
    final void syncBatchProbed(List<Turn> turns) {
        enterWrite("syncBatch", turns);
        beforeWrite(turns);
        for (Turn t : turns) {
            store(t);
        }
    }

    private void enterWrite(String hook, List<Turn> turns) {
        checkNotShutDown(hook + " " + ids(turns));
        if (Thread.currentThread().isInterrupted()) {
            writesEnteredInterrupted.add(hook + " " + ids(turns));
        }
    }

    private void store(Turn turn) {
        super.syncTurn(turn);
    }

    @Override
    public final void onSessionEnd(List<Message> messages) {
        checkNotShutDown("onSessionEnd");
        extractionThreads.add(Thread.currentThread().getName());
        if (Thread.currentThread().isInterrupted()) {
            extractionsEnteredInterrupted.add("onSessionEnd on " + Thread.currentThread().getName());
        }
        beforeExtraction();
        super.onSessionEnd(messages);
    }

    @Override
    public final void shutdown() {
        if (!shutdownStarted.compareAndSet(false, true)) {
            violations.add("second shutdown() on " + Thread.currentThread().getName());
        }
        try {
            beforeShutdown();
        } finally {
            super.shutdown();
            shutdownReturned.countDown();
        }
    }

    @Override
    public final String prefetch(String query, String sessionId) {
        checkNotShutDown("prefetch");
        return super.prefetch(query, sessionId);
    }

    @Override
    public final void initialize(String sessionId) {
        checkNotShutDown("initialize");
        super.initialize(sessionId);
    }

    private void checkNotShutDown(String what) {
        if (shutdownStarted.get()) {
            violations.add(what + " after shutdown(), on " + Thread.currentThread().getName());
        }
    }

    /** The fault, if any, of a write; runs before the write is recorded. */
    void beforeWrite(List<Turn> turns) {}

    /** The fault, if any, of {@code onSessionEnd}. */
    void beforeExtraction() {}

    /** The fault, if any, of {@code shutdown()}; "shutdown" is recorded after it, whatever it does. */
    void beforeShutdown() {}

    /** Whether {@code shutdown()} has been called (it may still be running). */
    boolean shutdownStarted() {
        return shutdownStarted.get();
    }

    /** Waits until {@code shutdown()} has returned (or thrown). */
    boolean awaitShutdownReturned(Duration timeout) throws InterruptedException {
        return shutdownReturned.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** The write ids recorded so far, in delivery order. */
    List<String> ids() {
        return ids(turns());
    }

    static List<String> ids(List<Turn> turns) {
        List<String> out = new ArrayList<>(turns.size());
        for (Turn t : turns) {
            out.add(t.writeId());
        }
        return out;
    }
}
