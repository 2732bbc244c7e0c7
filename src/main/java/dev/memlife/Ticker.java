package dev.memlife;

/**
 * The monotonic time source memlife measures its timeouts with, like {@link System#nanoTime()}.
 * Inject a manual ticker ({@code dev.memlife.testing.ManualTicker}) to make a timeout test
 * deterministic. Implementations must be thread-safe.
 */
@FunctionalInterface
public interface Ticker {

    /** {@return the current value of the time source, in nanoseconds; only differences are meaningful} */
    long read();

    /** {@return the system's monotonic ticker, {@link System#nanoTime()}} */
    static Ticker system() {
        return System::nanoTime;
    }
}
