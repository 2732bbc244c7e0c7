package dev.memlife.gateway;

import static java.util.Objects.requireNonNull;

import dev.memlife.agent.TeardownReport;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * What {@link AgentGateway#reset(String)} did. Immutable and thread-safe (the stages it holds
 * complete on housekeeping threads; they are read-only views, so completing a copy of one changes
 * nothing in the gateway).
 *
 * @param key the key asked for
 * @param status how the hard close ended within the wait
 * @param result the hard close's result, when it finished within the wait ({@link Status#CLOSED})
 * @param close the hard close, which may still be running after {@link Status#TIMED_OUT}; empty if
 *     not cached
 * @param eviction the eviction that followed the close's wait (soft; it finds the close owning the
 *     agent, so it only clears the transcript); empty if not cached
 */
public record ResetResult(String key, Status status, Optional<TeardownReport> result,
        Optional<CompletionStage<TeardownReport>> close, Optional<CompletionStage<TeardownReport>> eviction) {

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

    /**
     * Checks the components: a result goes with {@link Status#CLOSED} and only with it.
     *
     * @param key the key asked for
     * @param status how the hard close ended within the wait
     * @param result the hard close's result, when it finished within the wait ({@link Status#CLOSED})
     * @param close the hard close, which may still be running after {@link Status#TIMED_OUT}; empty if
     *     not cached
     * @param eviction the eviction that followed the close's wait (soft; it finds the close owning the
     *     agent, so it only clears the transcript); empty if not cached
     */
    public ResetResult {
        requireNonNull(key, "key");
        requireNonNull(status, "status");
        requireNonNull(result, "result");
        requireNonNull(close, "close");
        requireNonNull(eviction, "eviction");
        if (result.isPresent() != (status == Status.CLOSED)) {
            throw new IllegalArgumentException("a result goes with CLOSED and only with it: " + status);
        }
    }

    /** {@return the key, the status, and what became of the close and the eviction, as far as known now} */
    @Override
    public String toString() {
        if (status == Status.NOT_CACHED) {
            return "ResetResult[" + key + ": NOT_CACHED]";
        }
        return "ResetResult[" + key + ": " + status + ", close " + result.map(r -> "done: " + r).orElseGet(
                () -> Stages.describe(close)) + ", eviction " + Stages.describe(eviction) + "]";
    }

    static ResetResult notCached(String key) {
        return new ResetResult(key, Status.NOT_CACHED, Optional.empty(), Optional.empty(), Optional.empty());
    }

    static ResetResult of(String key, Status status, TeardownReport result, CompletableFuture<TeardownReport> close,
            CompletableFuture<TeardownReport> eviction) {
        return new ResetResult(key, status, Optional.ofNullable(result), Optional.of(close.minimalCompletionStage()),
                Optional.of(eviction.minimalCompletionStage()));
    }
}
