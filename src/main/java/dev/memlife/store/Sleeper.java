package dev.memlife.store;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * How {@link JdbcMemoryProvider} waits between two attempts of a failed write. Tests inject one that
 * records the waits instead of sleeping. Implementations must be thread-safe.
 */
@FunctionalInterface
public interface Sleeper {

    /**
     * Waits for {@code duration}.
     *
     * @param duration how long to wait; not negative
     * @throws InterruptedException if the waiting thread is interrupted; the store then gives up
     *     the write at once and restores the interrupt flag
     */
    void sleep(Duration duration) throws InterruptedException;

    /** {@return a sleeper that really sleeps, with {@link TimeUnit#sleep}} */
    static Sleeper system() {
        return duration -> TimeUnit.NANOSECONDS.sleep(duration.toNanos());
    }
}
