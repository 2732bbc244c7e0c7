package dev.memlife.gateway;

import dev.memlife.agent.TeardownResult;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Agents evicted from the cache whose session still had uncommitted work after the commit before
 * eviction ({@link AgentGateway.Builder#beforeEviction}): they stay open, their providers alive,
 * until a later sweep finds the session committed, or the gateway stops. Each keeps the future of
 * its eviction's teardown, completed when it is finally torn down. Thread-safe.
 */
final class KeptAgents {

    private final Map<AgentCache.Entry, CompletableFuture<TeardownResult>> kept = new IdentityHashMap<>();

    synchronized void keep(AgentCache.Entry entry, CompletableFuture<TeardownResult> teardown) {
        kept.put(entry, teardown);
    }

    /** Removes {@code entry}; its eviction's future, or null if it was not kept (or taken already). */
    synchronized CompletableFuture<TeardownResult> release(AgentCache.Entry entry) {
        return kept.remove(entry);
    }

    /** The entries kept now. */
    synchronized List<AgentCache.Entry> entries() {
        return new ArrayList<>(kept.keySet());
    }

    synchronized int size() {
        return kept.size();
    }
}
