package dev.memlife.gateway;

import dev.memlife.agent.AgentMemory;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A cached agent marked busy for one turn: while any lease on it is open, neither the LRU cap nor
 * the idle sweep evicts it. Close it when the turn is over (try-with-resources); closing again does
 * nothing. Thread-safe.
 */
public final class AgentLease implements AutoCloseable {

    private final AgentCache cache;
    private final AgentCache.Entry entry;
    /** Makes {@link #close()} idempotent: only the first call returns the lease. */
    private final AtomicBoolean closed = new AtomicBoolean();

    AgentLease(AgentCache cache, AgentCache.Entry entry) {
        this.cache = cache;
        this.entry = entry;
    }

    /** {@return the session key the agent is cached under} */
    public String key() {
        return entry.key;
    }

    /** {@return the leased agent} */
    public AgentMemory agent() {
        return entry.agent;
    }

    /** Ends the lease: the agent is idle again (unless other leases are open) and its idle time restarts. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            cache.unlease(entry);
        }
    }

    @Override
    public String toString() {
        return "AgentLease[" + entry.key + (closed.get() ? ", closed" : "") + "]";
    }
}
