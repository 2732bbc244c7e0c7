package dev.memlife;

import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Which manager owns each provider instance, process-wide, so that wrong sharing is refused
 * rather than documented: a manager shuts down the providers it owns, so a provider instance may
 * have one owner at a time. Other managers share it with {@link MemoryManager#useProvider}. An
 * owner's claim ends when it has shut the provider down; a manager that is never shut down keeps
 * its claim (and, like any live manager, its providers). Thread-safe.
 */
final class ProviderOwners {

    /** Provider instance to its owning manager, by identity. Guarded by itself. */
    private static final Map<MemoryProvider, MemoryManager> OWNERS = new IdentityHashMap<>();

    private ProviderOwners() {}

    /**
     * Records {@code manager} as the owner of {@code provider}.
     *
     * @throws IllegalArgumentException naming both managers if another manager owns it
     */
    static void claim(MemoryProvider provider, String providerName, MemoryManager manager) {
        synchronized (OWNERS) {
            MemoryManager owner = OWNERS.putIfAbsent(provider, manager);
            if (owner != null && owner != manager) {
                throw new IllegalArgumentException("memory provider '" + providerName + "' is already owned by manager '"
                        + owner.name() + "', which will shut it down; manager '" + manager.name() + "' can share it "
                        + "with useProvider(...), or take an instance of its own");
            }
        }
    }

    /** Ends {@code manager}'s claim on {@code provider}, if it has one. */
    static void release(MemoryProvider provider, MemoryManager manager) {
        synchronized (OWNERS) {
            OWNERS.remove(provider, manager);
        }
    }
}
