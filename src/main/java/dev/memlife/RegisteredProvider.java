package dev.memlife;

import java.lang.reflect.Method;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/** A provider as the manager holds it: whether it writes batches, its counts, and its gate. */
final class RegisteredProvider {

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
    /** Writes this provider threw on; updated by the writer thread, read by reports. */
    final AtomicLong failedWrites = new AtomicLong();
    /** Times this provider returned to the writer with the thread's interrupt flag set (then cleared). */
    final AtomicLong interruptsCleared = new AtomicLong();
    /** Keeps this provider's hooks and its shutdown apart. */
    final ProviderGate gate = new ProviderGate();

    RegisteredProvider(MemoryProvider provider, String name, boolean owned) {
        this.provider = provider;
        this.name = name;
        this.owned = owned;
        this.writesBatches = overridesSyncBatch(provider.getClass());
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
