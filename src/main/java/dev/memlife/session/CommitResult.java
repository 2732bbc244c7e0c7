package dev.memlife.session;

import static java.util.Objects.requireNonNull;

import dev.memlife.agent.SessionCommitter;
import java.util.Optional;

/**
 * What one {@link SessionCommitTracker#commit} call did. Immutable and thread-safe.
 *
 * @param status what happened
 * @param sessionId the session, as given (may be null or blank for the no-op result)
 * @param committedGeneration the session's committed generation after the call
 * @param generation the session's generation after the call; above {@code committedGeneration}
 *     means work is still uncommitted
 * @param failure what the owner threw, for {@link Status#FAILED}; null otherwise
 * @param owner the owner this call ran ({@link Status#COMMITTED} or {@link Status#FAILED}): the
 *     one recorded for the oldest dirty segment, which may be an agent that has since been replaced
 */
public record CommitResult(Status status, String sessionId, long committedGeneration, long generation,
        Throwable failure, Optional<SessionCommitter> owner) {

    /** The status of a commit call. */
    public enum Status {
        /** The owner committed the oldest dirty segment; the committed generation moved to its end. */
        COMMITTED,
        /** Nothing to commit: the session is clean, unknown, or its id is null or blank. */
        NOTHING_TO_COMMIT,
        /**
         * The caller named an owner that is neither the session's registered owner nor the owner of
         * any of its dirty segments; no owner was called.
         */
        NOT_OWNER,
        /** Another commit of the session is in flight (and did not finish within the wait, if any). */
        IN_FLIGHT,
        /** The owner threw; the work stays uncommitted and the owner recorded, for a retry. */
        FAILED,
        /** The wait for an in-flight commit was interrupted (the interrupt flag is restored). */
        INTERRUPTED
    }

    /**
     * Checks the components: a failure goes with {@link Status#FAILED} and only with it.
     *
     * @param status what happened
     * @param sessionId the session, as given
     * @param committedGeneration the session's committed generation after the call
     * @param generation the session's generation after the call
     * @param failure what the owner threw, for {@link Status#FAILED}; null otherwise
     * @param owner the owner this call ran, present exactly for {@link Status#COMMITTED} and {@link
     *     Status#FAILED}
     */
    public CommitResult {
        requireNonNull(status, "status");
        requireNonNull(owner, "owner");
        if (owner.isPresent() != (status == Status.COMMITTED || status == Status.FAILED)) {
            throw new IllegalArgumentException("an owner goes with a call that ran one, and only with it: " + status);
        }
        if ((status == Status.FAILED) != (failure != null)) {
            throw new IllegalArgumentException("a failure goes with FAILED and only with it: " + status + ", "
                    + failure);
        }
    }

    /** {@return whether the owner was called and succeeded} */
    public boolean committed() {
        return status == Status.COMMITTED;
    }

    /** {@return whether the session still has uncommitted work after the call} */
    public boolean stillDirty() {
        return generation > committedGeneration;
    }
}
