package dev.memlife;

import dev.memlife.internal.ThrottledLog;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A provider as the manager holds it: whether it writes batches, its counts, and its gate. */
final class RegisteredProvider {

    private static final Logger LOG = LoggerFactory.getLogger(MemoryManager.class);
    /**
     * Each provider instance's throttle; weak keys, so a provider no manager holds any more is
     * forgotten. Guarded by itself.
     */
    private static final Map<MemoryProvider, ThrottledLog> WARNINGS = new WeakHashMap<>();

    // What the provider is, fixed at registration.

    final MemoryProvider provider;
    final String name;
    /**
     * True for a provider the manager owns ({@link MemoryManager#addProvider}): the manager's
     * shutdown shuts it down. False for one it only uses ({@link MemoryManager#useProvider}), whose
     * lifecycle is the application's.
     */
    final boolean owned;
    /** True when the provider overrides {@link MemoryProvider#syncBatch}; then it gets batches. */
    final boolean writesBatches;
    /**
     * The throttle of this provider <em>instance</em>'s warnings, shared by every manager that
     * registers it: during an outage of a store that many agents share, a burst of failures is
     * logged once, not once per manager.
     */
    final ThrottledLog warnings;

    // What happens to it while the manager runs.

    /** Writes this provider threw on; updated by the writer thread, read by reports. */
    final AtomicLong failedWrites = new AtomicLong();
    /** Times this provider returned to the writer with the thread's interrupt flag set (then cleared). */
    final AtomicLong interruptsCleared = new AtomicLong();
    /**
     * A token while a prefetch of this provider runs, null otherwise: a provider has one prefetch
     * running at most, so one stuck in {@code prefetch} holds one thread ({@link Prefetcher}).
     */
    final AtomicReference<Object> prefetchInFlight = new AtomicReference<>();
    /** Keeps this provider's hooks and its shutdown apart. */
    final ProviderGate gate = new ProviderGate();

    RegisteredProvider(MemoryProvider provider, String name, boolean owned) {
        this.provider = provider;
        this.name = name;
        this.owned = owned;
        this.warnings = warningsOf(provider);
        this.writesBatches = overridesSyncBatch(provider.getClass());
    }

    /** The shared throttle of {@code provider}; a private one if its {@code hashCode} or {@code equals} throws. */
    private static ThrottledLog warningsOf(MemoryProvider provider) {
        try {
            synchronized (WARNINGS) {
                return WARNINGS.computeIfAbsent(provider, p -> new ThrottledLog(LOG));
            }
        } catch (RuntimeException e) {
            return new ThrottledLog(LOG);
        }
    }

    private static boolean overridesSyncBatch(Class<?> type) {
        try {
            Method m = type.getMethod("syncBatch", List.class);
            return m.getDeclaringClass() != MemoryProvider.class;
        } catch (NoSuchMethodException e) {
            throw new AssertionError("MemoryProvider.syncBatch(List) is missing", e);
        }
    }
}
