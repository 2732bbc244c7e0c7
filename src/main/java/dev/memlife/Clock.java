package dev.memlife;

/**
 * The monotonic time source memlife measures its timeouts with, like {@link System#nanoTime()}.
 * Inject a manual clock ({@code dev.memlife.testing.ManualClock}) to make a timeout test
 * deterministic. Implementations must be thread-safe.
 */
@FunctionalInterface
public interface Clock {

    /** The current value of the time source, in nanoseconds; only differences are meaningful. */
    long nanoTime();

    /** The system's monotonic clock. */
    static Clock system() {
        return System::nanoTime;
    }
}
