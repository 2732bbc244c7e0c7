package dev.memlife;

import static java.util.Objects.requireNonNull;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The providers of one {@link MemoryManager}: who is registered, owned or used, in which order,
 * and which tools they offer. Copy-on-write: each write keeps the array it was accepted with, and
 * readers take the volatile copy; registration is serialized, and so is the start of the manager's
 * shutdown against it ({@link #whileNoneRegisters}), so no provider slips in after the shutdown
 * took its list.
 */
final class ProviderRegistry {

    private static final Logger LOG = LoggerFactory.getLogger(MemoryManager.class);

    private final String managerName;
    private final ProviderCalls calls;
    private final ToolRouter tools;
    /** Guards changes to {@link #providers} and to the tools' index. */
    private final Object lock = new Object();
    private volatile RegisteredProvider[] providers = new RegisteredProvider[0];

    ProviderRegistry(String managerName, ProviderCalls calls) {
        this.managerName = managerName;
        this.calls = calls;
        this.tools = new ToolRouter(managerName, calls);
    }

    /** {@return the providers now, in registration order; never modified once handed out} */
    RegisteredProvider[] current() {
        return providers;
    }

    /**
     * Registers {@code provider} if it is available; see {@link MemoryManager#addProvider}.
     *
     * @param owner the manager that owns it, or null if it is only used
     * @param checkRunning throws if the manager is shut down; run under the registration lock
     */
    boolean register(MemoryProvider provider, MemoryManager owner, Consumer<String> checkRunning) {
        requireNonNull(provider, "provider");
        String providerName = requireNonNull(provider.name(), "provider.name()");
        if (providerName.isBlank()) {
            throw new IllegalArgumentException("provider name must not be blank: " + provider);
        }
        boolean owned = owner != null;
        RegisteredProvider registered = new RegisteredProvider(provider, providerName, owned);
        if (!Boolean.TRUE.equals(calls.unregistered(registered, "isAvailable", provider::isAvailable, false))) {
            LOG.info("memory provider '{}' is not available; not registered with manager '{}'", providerName,
                    managerName);
            return false;
        }
        List<ToolSchema> offered = calls.unregistered(registered, "toolSchemas", provider::toolSchemas, List.of());
        synchronized (lock) {
            checkRunning.accept(owned ? "addProvider" : "useProvider");
            for (RegisteredProvider p : providers) {
                if (p.name.equals(providerName)) {
                    throw new IllegalArgumentException("a memory provider named '" + providerName
                            + "' is already registered with manager '" + managerName + "'");
                }
            }
            if (owned) {
                ProviderOwners.claim(provider, providerName, owner);
            }
            tools.register(registered, offered);
            RegisteredProvider[] next = Arrays.copyOf(providers, providers.length + 1);
            next[providers.length] = registered;
            providers = next;
        }
        return true;
    }

    /** Runs {@code action} while no provider can be registered. */
    <T> T whileNoneRegisters(Supplier<T> action) {
        synchronized (lock) {
            return action.get();
        }
    }

    List<String> names() {
        List<String> names = new ArrayList<>();
        for (RegisteredProvider p : providers) {
            names.add(p.name);
        }
        return names;
    }

    Optional<MemoryProvider> get(String name) {
        for (RegisteredProvider p : providers) {
            if (p.name.equals(name)) {
                return Optional.of(p.provider);
            }
        }
        return Optional.empty();
    }

    boolean hasTool(String tool) {
        return tools.has(tool);
    }

    List<ToolSchema> toolSchemas() {
        return tools.schemas(providers);
    }

    String callTool(String tool, Map<String, Object> args) {
        return tools.call(tool, args);
    }
}
