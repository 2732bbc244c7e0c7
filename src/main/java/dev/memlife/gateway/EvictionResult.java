package dev.memlife.gateway;

import static java.util.Objects.requireNonNull;

import dev.memlife.agent.TeardownReport;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * What {@link AgentGateway#evict(String)} did with a key. Immutable and thread-safe (the stage it
 * holds completes on a housekeeping thread; it is a read-only view, so completing a copy of it
 * changes nothing in the gateway).
 *
 * @param key the key asked for
 * @param status what was done
 * @param teardown for {@link Status#EVICTED}: completes once the soft teardown has run (or found
 *     another teardown owning the agent) and the agent's transcript has been cleared; empty otherwise
 */
public record EvictionResult(String key, Status status, Optional<CompletionStage<TeardownReport>> teardown) {

    /** Whether the key's agent left the cache. */
    public enum Status {
        /** The agent left the cache; its soft teardown runs on a housekeeping thread. */
        EVICTED,
        /** No agent is cached under the key; nothing was done. */
        NOT_CACHED,
        /** The agent is mid-turn (leased); it stays cached and nothing was done. */
        BUSY
    }

    /**
     * Checks the components: a teardown goes with {@link Status#EVICTED} and only with it.
     *
     * @param key the key asked for
     * @param status what was done
     * @param teardown for {@link Status#EVICTED}: completes once the soft teardown has run (or found
     *     another teardown owning the agent) and the agent's transcript has been cleared; empty otherwise
     */
    public EvictionResult {
        requireNonNull(key, "key");
        requireNonNull(status, "status");
        requireNonNull(teardown, "teardown");
        if (teardown.isPresent() != (status == Status.EVICTED)) {
            throw new IllegalArgumentException("a teardown goes with EVICTED and only with it: " + status);
        }
    }

    /** {@return the key, the status, and what became of the soft teardown, as far as known now} */
    @Override
    public String toString() {
        return "EvictionResult[" + key + ": " + status
                + (teardown.isPresent() ? ", teardown " + Stages.describe(teardown) : "") + "]";
    }

    static EvictionResult of(String key, Status status, CompletableFuture<TeardownReport> teardown) {
        return new EvictionResult(key, status, Optional.ofNullable(teardown).map(CompletableFuture::minimalCompletionStage));
    }
}
