package dev.memlife.gateway;

import dev.memlife.agent.TeardownResult;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * What {@link AgentGateway#reset(String)} did. Immutable and thread-safe (the futures it holds
 * complete on housekeeping threads).
 */
public final class ResetOutcome {

    /** How the reset's hard close ended, as far as the caller waited. */
    public enum Status {
        /** The hard close finished within the reset timeout; {@link #result()} says what it did. */
        CLOSED,
        /**
         * The wait ended (timeout, or the caller was interrupted) before the hard close finished; it
         * goes on in the background and still owns the agent's teardown.
         */
        TIMED_OUT,
        /** The hard close threw; the agent's claim is over, but its providers may not be shut down. */
        FAILED,
        /** No agent is cached under the key; nothing was done. */
        NOT_CACHED
    }

    private final String key;
    private final Status status;
    private final TeardownResult result;
    private final CompletableFuture<TeardownResult> close;
    private final CompletableFuture<TeardownResult> eviction;

    ResetOutcome(String key, Status status, TeardownResult result, CompletableFuture<TeardownResult> close,
            CompletableFuture<TeardownResult> eviction) {
        this.key = key;
        this.status = status;
        this.result = result;
        this.close = close;
        this.eviction = eviction;
    }

    static ResetOutcome notCached(String key) {
        return new ResetOutcome(key, Status.NOT_CACHED, null, null, null);
    }

    /** The key asked for. */
    public String key() {
        return key;
    }

    /** How the hard close ended within the wait. */
    public Status status() {
        return status;
    }

    /** The hard close's result, when it finished within the wait ({@link Status#CLOSED}). */
    public Optional<TeardownResult> result() {
        return Optional.ofNullable(result);
    }

    /** The hard close, which may still be running after {@link Status#TIMED_OUT}; empty if not cached. */
    public Optional<CompletableFuture<TeardownResult>> close() {
        return Optional.ofNullable(close);
    }

    /**
     * The eviction that followed the close's wait (soft; it finds the close owning the agent, so it
     * only clears the transcript); empty if not cached.
     */
    public Optional<CompletableFuture<TeardownResult>> eviction() {
        return Optional.ofNullable(eviction);
    }

    @Override
    public String toString() {
        return "ResetOutcome[" + key + ": " + status + (result == null ? "" : ", " + result) + "]";
    }
}
