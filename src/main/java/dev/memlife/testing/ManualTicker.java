package dev.memlife.testing;

import static java.util.Objects.requireNonNull;

import dev.memlife.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link Ticker} that moves only when the test says so, for deterministic timeout tests: a
 * manager built with it sees a deadline pass exactly when the test {@link #advance advances} past
 * it (memlife re-reads its ticker at least every 50 ms while it waits). Thread-safe.
 */
public final class ManualTicker implements Ticker {

    private final AtomicLong nanos = new AtomicLong();

    /** A ticker at zero, until the test advances it. */
    public ManualTicker() {}

    @Override
    public long read() {
        return nanos.get();
    }

    /**
     * Moves the ticker forward.
     *
     * @param by how far; zero or more
     * @throws IllegalArgumentException if {@code by} is negative
     */
    public void advance(Duration by) {
        requireNonNull(by, "by");
        if (by.isNegative()) {
            throw new IllegalArgumentException("a ticker cannot go back: " + by);
        }
        nanos.addAndGet(by.toNanos());
    }
}
