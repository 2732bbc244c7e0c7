package dev.memlife.internal;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * Logs a warning once per burst: the first occurrence of a key is logged at once, repeats within
 * {@link #INTERVAL_NANOS} are counted, and the next log line for the key says how many were
 * suppressed. Thread-safe; a race between two threads at the interval edge may log one extra line,
 * which is harmless. Not part of the API: the package is not exported.
 */
public final class ThrottledLog {

    /** The least time between two log lines for one key: 30 s. */
    public static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(30);

    private final Logger log;
    private final ConcurrentHashMap<String, Burst> bursts = new ConcurrentHashMap<>();

    /** Throttled warnings to {@code log}. */
    public ThrottledLog(Logger log) {
        this.log = log;
    }

    /**
     * Logs {@code message} (with {@code cause}, if not null) at WARN, unless {@code key} was logged
     * less than {@link #INTERVAL_NANOS} ago; then only counts it, for the next line of that key.
     */
    public void warn(String key, String message, Throwable cause) {
        Burst burst = bursts.computeIfAbsent(key, k -> new Burst());
        long now = System.nanoTime();
        long last = burst.lastLoggedNanos.get();
        if (last != Long.MIN_VALUE && now - last < INTERVAL_NANOS) {
            burst.suppressed.incrementAndGet();
            return;
        }
        if (!burst.lastLoggedNanos.compareAndSet(last, now)) {
            burst.suppressed.incrementAndGet();
            return;
        }
        long suppressed = burst.suppressed.getAndSet(0);
        String suffix = suppressed == 0 ? "" : " (" + suppressed + " more like this since the last report)";
        if (cause == null) {
            log.warn("{}{}", message, suffix);
        } else {
            log.warn("{}{}", message, suffix, cause);
        }
    }

    private static final class Burst {
        /** When the key was last logged; MIN_VALUE means never. */
        final AtomicLong lastLoggedNanos = new AtomicLong(Long.MIN_VALUE);
        final AtomicLong suppressed = new AtomicLong();
    }
}
