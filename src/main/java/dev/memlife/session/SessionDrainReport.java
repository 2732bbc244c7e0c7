package dev.memlife.session;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.List;

/**
 * What {@link SessionCommitTracker#drainAll} did: how many commits it ran, which background
 * workers it joined, and every session it left with uncommitted work, with the reason. Immutable
 * and thread-safe.
 */
public final class SessionDrainReport {

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
        public LeftDirty {
            requireNonNull(sessionId, "sessionId");
            requireNonNull(reason, "reason");
        }

        @Override
        public String toString() {
            return sessionId + "=" + reason + (failure == null ? "" : "(" + failure + ")");
        }
    }

    private final String trackerName;
    private final int workersJoined;
    private final int workersStillRunning;
    private final int passes;
    private final long commits;
    private final int sessionsCommitted;
    private final List<LeftDirty> leftDirty;
    private final boolean interrupted;
    private final Duration deadline;
    private final Duration elapsed;

    SessionDrainReport(String trackerName, int workersJoined, int workersStillRunning, int passes, long commits,
            int sessionsCommitted, List<LeftDirty> leftDirty, boolean interrupted, Duration deadline,
            Duration elapsed) {
        this.trackerName = trackerName;
        this.workersJoined = workersJoined;
        this.workersStillRunning = workersStillRunning;
        this.passes = passes;
        this.commits = commits;
        this.sessionsCommitted = sessionsCommitted;
        this.leftDirty = List.copyOf(leftDirty);
        this.interrupted = interrupted;
        this.deadline = deadline;
        this.elapsed = elapsed;
    }

    /** Whether every session was clean when the drain returned. */
    public boolean clean() {
        return leftDirty.isEmpty();
    }

    /** Background commit workers that finished while the drain waited for them. */
    public int workersJoined() {
        return workersJoined;
    }

    /** Background commit workers still running when the drain gave up waiting for them. */
    public int workersStillRunning() {
        return workersStillRunning;
    }

    /** Commit passes the drain ran over the dirty sessions. */
    public int passes() {
        return passes;
    }

    /** Segments the drain itself committed (each one owner call). */
    public long commits() {
        return commits;
    }

    /** Sessions the drain itself committed at least one segment of. */
    public int sessionsCommitted() {
        return sessionsCommitted;
    }

    /** The sessions left with uncommitted work, by session id. */
    public List<LeftDirty> leftDirty() {
        return leftDirty;
    }

    /** The ids of the sessions left with uncommitted work, in order. */
    public List<String> leftDirtyIds() {
        return leftDirty.stream().map(LeftDirty::sessionId).toList();
    }

    /** Whether an interrupt ended the drain early (the interrupt flag was restored). */
    public boolean interrupted() {
        return interrupted;
    }

    /** The deadline the drain had. */
    public Duration deadline() {
        return deadline;
    }

    /** How long the drain took. */
    public Duration elapsed() {
        return elapsed;
    }

    @Override
    public String toString() {
        return "SessionDrainReport[" + trackerName + ": " + (clean() ? "clean" : leftDirty.size() + " left dirty")
                + ", commits=" + commits + " in " + sessionsCommitted + " sessions, passes=" + passes
                + ", workersJoined=" + workersJoined + ", workersStillRunning=" + workersStillRunning
                + ", elapsed=" + elapsed.toMillis() + "ms of " + deadline.toMillis() + "ms"
                + (interrupted ? ", interrupted" : "") + (clean() ? "" : ", leftDirty=" + leftDirty) + "]";
    }
}
