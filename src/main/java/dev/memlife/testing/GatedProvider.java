package dev.memlife.testing;

import dev.memlife.Turn;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A recording provider that holds the manager's writer thread on a gate until the test opens it:
 * every write the predicate selects (by default every write) waits in {@code syncTurn} until
 * {@link #open()}, then is recorded. Writes queued behind a held write stay pending, which lets a
 * test build "write accepted but not yet delivered" deterministically, without sleeping.
 *
 * <p>A gate left closed gives up after {@link #MAX_HOLD} and throws, so a forgotten gate fails the
 * test instead of hanging it. Thread-safe.
 */
public class GatedProvider extends RecordingProvider {

    /** Longest time a write is held before the provider gives up and throws. */
    public static final Duration MAX_HOLD = Duration.ofSeconds(60);

    private final Predicate<Turn> gated;
    private final CountDownLatch gate = new CountDownLatch(1);
    private final CountDownLatch entered = new CountDownLatch(1);

    /**
     * A provider whose every write waits for the gate.
     *
     * @param name the provider's name
     */
    public GatedProvider(String name) {
        this(name, turn -> true);
    }

    /**
     * A provider whose writes selected by {@code gated} wait for the gate; others pass at once.
     *
     * @param name the provider's name
     * @param gated which writes wait for the gate while it is closed
     */
    public GatedProvider(String name, Predicate<Turn> gated) {
        super(name);
        this.gated = gated;
    }

    @Override
    public void syncTurn(Turn turn) {
        if (gated.test(turn) && gate.getCount() > 0) {
            entered.countDown();
            try {
                if (!gate.await(MAX_HOLD.toNanos(), TimeUnit.NANOSECONDS)) {
                    throw new IllegalStateException("gate of " + this + " was never opened (held " + turn + ")");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while " + this + " held " + turn, e);
            }
        }
        super.syncTurn(turn);
    }

    /** Opens the gate for good: held and future writes pass. */
    public void open() {
        gate.countDown();
    }

    /**
     * Waits until the writer is held at the gate, for at most {@code timeout}.
     *
     * @param timeout how long to wait at most
     * @return true once a write is held (or was held before); false on timeout or interrupt
     */
    public boolean awaitHeld(Duration timeout) {
        try {
            return entered.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
