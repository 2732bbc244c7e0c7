package dev.memlife;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What {@link MemoryManager#shutdownAll()} did with every write the manager was ever handed.
 * Immutable and thread-safe.
 *
 * <p>The counts always add up: {@code submitted() == delivered() + failed() + abandoned() +
 * stillRunning() + rejected()}. A write is <em>delivered</em> when every provider took it without
 * throwing, <em>failed</em> when at least one provider threw on it (see {@link
 * #failuresByProvider()}) or the drain deadline passed while it was between providers, so that
 * some never got it, <em>abandoned</em> when the drain deadline passed before the writer
 * started it (its id is in {@link #abandonedWriteIds()}), <em>still running</em> when a provider was
 * still busy with it at the deadline (the writer finishes it on its own, detached), and
 * <em>rejected</em> when it arrived after shutdown began or found the queue full.
 */
public final class DrainReport {

    private final long delivered;
    private final long failed;
    private final List<String> abandonedWriteIds;
    private final long stillRunning;
    private final long rejected;
    private final Map<String, Long> failuresByProvider;
    private final List<String> providersNotShutDown;
    private final Duration drainTimeout;
    private final Duration elapsed;

    DrainReport(long delivered, long failed, AbandonedWriteIds abandonedWriteIds, long stillRunning,
            long rejected, Map<String, Long> failuresByProvider, List<String> providersNotShutDown,
            Duration drainTimeout, Duration elapsed) {
        this.delivered = delivered;
        this.failed = failed;
        this.abandonedWriteIds = abandonedWriteIds; // immutable; a copy would spell out every id now
        this.stillRunning = stillRunning;
        this.rejected = rejected;
        this.failuresByProvider = Map.copyOf(failuresByProvider);
        this.providersNotShutDown = List.copyOf(providersNotShutDown);
        this.drainTimeout = drainTimeout;
        this.elapsed = elapsed;
    }

    /** Every write the manager was handed, accepted or not (blank turns are not writes). */
    public long submitted() {
        return delivered + failed + abandoned() + stillRunning + rejected;
    }

    /** Writes every provider took without throwing. */
    public long delivered() {
        return delivered;
    }

    /**
     * Writes at least one provider threw on (they reached every other provider), and writes the
     * drain deadline cut off between providers (they reached only the first ones).
     */
    public long failed() {
        return failed;
    }

    /** Writes the drain deadline cut off before the writer started them. */
    public long abandoned() {
        return abandonedWriteIds.size();
    }

    /** The write ids of the {@link #abandoned()} writes, in the order they were accepted. */
    public List<String> abandonedWriteIds() {
        return abandonedWriteIds;
    }

    /** Writes a provider was still busy with at the deadline; the writer finishes them detached. */
    public long stillRunning() {
        return stillRunning;
    }

    /** Writes refused because they came after shutdown began or found the queue full. */
    public long rejected() {
        return rejected;
    }

    /**
     * For each provider that threw on a write hook, how many writes it failed. Read when the drain
     * ended, so it may already include a {@link #stillRunning() still running} write that failed at
     * one provider before the deadline.
     */
    public Map<String, Long> failuresByProvider() {
        return failuresByProvider;
    }

    /** Providers whose {@code shutdown()} had not returned when the shutdown budget ran out. */
    public List<String> providersNotShutDown() {
        return providersNotShutDown;
    }

    /** Whether every accepted write was handed to every provider before the deadline. */
    public boolean drainedCompletely() {
        return abandonedWriteIds.isEmpty() && stillRunning == 0;
    }

    /** The deadline the drain had. */
    public Duration drainTimeout() {
        return drainTimeout;
    }

    /** How long the whole shutdown took: drain plus provider shutdown. */
    public Duration elapsed() {
        return elapsed;
    }

    @Override
    public String toString() {
        return "DrainReport[submitted=" + submitted() + ", delivered=" + delivered + ", failed=" + failed
                + ", abandoned=" + abandoned() + ", stillRunning=" + stillRunning + ", rejected=" + rejected
                + ", elapsed=" + elapsed.toMillis() + "ms of " + drainTimeout.toMillis() + "ms"
                + (failuresByProvider.isEmpty() ? "" : ", failuresByProvider=" + failuresByProvider)
                + (providersNotShutDown.isEmpty() ? "" : ", providersNotShutDown=" + providersNotShutDown)
                + "]";
    }
}
