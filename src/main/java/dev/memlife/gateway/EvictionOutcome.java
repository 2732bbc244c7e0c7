package dev.memlife.gateway;

import dev.memlife.agent.TeardownResult;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * What {@link AgentGateway#evict(String)} did with a key. Immutable and thread-safe (the future it
 * holds completes on a housekeeping thread).
 */
public final class EvictionOutcome {

    /** Whether the key's agent left the cache. */
    public enum Status {
        /** The agent left the cache; its soft teardown runs on a housekeeping thread. */
        EVICTED,
        /** No agent is cached under the key; nothing was done. */
        NOT_CACHED,
        /** The agent is mid-turn (leased); it stays cached and nothing was done. */
        BUSY
    }

    private final String key;
    private final Status status;
    private final CompletableFuture<TeardownResult> teardown;

    EvictionOutcome(String key, Status status, CompletableFuture<TeardownResult> teardown) {
        this.key = key;
        this.status = status;
        this.teardown = teardown;
    }

    /** The key asked for. */
    public String key() {
        return key;
    }

    /** What was done. */
    public Status status() {
        return status;
    }

    /**
     * For {@link Status#EVICTED}: completes once the soft teardown has run (or found another
     * teardown owning the agent) and the agent's transcript has been cleared. Empty otherwise.
     */
    public Optional<CompletableFuture<TeardownResult>> teardown() {
        return Optional.ofNullable(teardown);
    }

    @Override
    public String toString() {
        return "EvictionOutcome[" + key + ": " + status + "]";
    }
}
