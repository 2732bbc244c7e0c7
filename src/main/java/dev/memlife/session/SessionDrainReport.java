package dev.memlife.session;

import static java.util.Objects.requireNonNull;

import dev.memlife.StopReport;
import java.time.Duration;
import java.util.List;

/**
 * What {@link SessionCommitTracker#stop} did: how many commits it ran, which background
 * workers it joined, and every session it left with uncommitted work, with the reason. Immutable
 * and thread-safe.
 *
 * @param trackerName the tracker's name
 * @param workersJoined background commit workers that finished while the drain waited for them
 * @param workersStillRunning background commit workers still running when the drain gave up
 *     waiting for them
 * @param passes commit passes the drain ran over the dirty sessions
 * @param commits segments the drain itself committed (each one owner call)
 * @param sessionsCommitted sessions the drain itself committed at least one segment of
 * @param leftDirty the sessions left with uncommitted work
 * @param interrupted whether an interrupt ended the drain early (the interrupt flag was restored)
 * @param budget the deadline the drain had
 * @param elapsed how long the drain took
 */
public record SessionDrainReport(String trackerName, int workersJoined, int workersStillRunning, int passes,
        long commits, int sessionsCommitted, List<LeftDirty> leftDirty, boolean interrupted, Duration budget,
        Duration elapsed) implements StopReport {

    /** Why the drain left a session dirty. */
    public enum Reason {
        /** The owner's commit was still running when the deadline passed (a slow or hung provider). */
        TIMED_OUT,
        /** The owner's commit threw; see {@link LeftDirty#failure()}. */
        FAILED,
        /** Another thread's commit of the session was in flight for the rest of the budget. */
        IN_FLIGHT_ELSEWHERE,
        /** The budget ran out before the drain got to the session. */
        NOT_ATTEMPTED
    }

    /**
     * One session the drain left with uncommitted work.
     *
     * @param sessionId the session
     * @param reason why it is still dirty
     * @param failure what the owner threw, for {@link Reason#FAILED}; null otherwise
     */
    public record LeftDirty(String sessionId, Reason reason, Throwable failure) {
        /**
         * Checks the components.
         *
         * @param sessionId the session
         * @param reason why it is still dirty
         * @param failure what the owner threw, for {@link Reason#FAILED}; null otherwise
         */
        public LeftDirty {
            requireNonNull(sessionId, "sessionId");
            requireNonNull(reason, "reason");
        }

        @Override
        public String toString() {
            return sessionId + "=" + reason + (failure == null ? "" : "(" + failure + ")");
        }
    }

    /**
     * Copies the list; nothing may be null.
     *
     * @param trackerName the tracker's name
     * @param workersJoined background commit workers that finished while the drain waited for them
     * @param workersStillRunning background commit workers still running when the drain gave up
     *     waiting for them
     * @param passes commit passes the drain ran over the dirty sessions
     * @param commits segments the drain itself committed (each one owner call)
     * @param sessionsCommitted sessions the drain itself committed at least one segment of
     * @param leftDirty the sessions left with uncommitted work
     * @param interrupted whether an interrupt ended the drain early (the interrupt flag was restored)
     * @param budget the deadline the drain had
     * @param elapsed how long the drain took
     */
    public SessionDrainReport {
        requireNonNull(trackerName, "trackerName");
        leftDirty = List.copyOf(leftDirty);
        requireNonNull(budget, "budget");
        requireNonNull(elapsed, "elapsed");
    }

    /** {@return whether every session was clean when the drain returned} */
    @Override
    public boolean complete() {
        return leftDirty.isEmpty();
    }

    /** {@return the ids of the sessions left with uncommitted work, in order} */
    public List<String> leftDirtyIds() {
        return leftDirty.stream().map(LeftDirty::sessionId).toList();
    }

    /** {@return the {@link #leftDirtyIds() ids of the sessions left dirty}} */
    @Override
    public List<String> unfinished() {
        return leftDirtyIds();
    }

    @Override
    public String toString() {
        return "SessionDrainReport[" + trackerName + ": " + (complete() ? "clean" : leftDirty.size() + " left dirty")
                + ", commits=" + commits + " in " + sessionsCommitted + " sessions, passes=" + passes
                + ", workersJoined=" + workersJoined + ", workersStillRunning=" + workersStillRunning
                + ", elapsed=" + elapsed.toMillis() + "ms of " + budget.toMillis() + "ms"
                + (interrupted ? ", interrupted" : "") + (complete() ? "" : ", leftDirty=" + leftDirty) + "]";
    }
}
