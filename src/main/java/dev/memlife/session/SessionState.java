package dev.memlife.session;

import dev.memlife.agent.SessionCommitter;
import java.util.ArrayDeque;

/**
 * One session's commit bookkeeping. Not thread-safe: every field is read and written only under
 * the owning {@link SessionCommitTracker}'s lock.
 *
 * <p>Invariant: the segments are contiguous, oldest first, and cover exactly the generations
 * {@code (committedGeneration, generation]}; so the session is dirty exactly when a segment is left.
 */
final class SessionState {

    /** Consecutive generations whose work lives in one owner. Only that owner can commit them. */
    static final class Segment {
        final long start;
        /** Grows while the owner completes more turns and no commit is in flight. */
        long end;
        final SessionCommitter owner;

        Segment(long start, long end, SessionCommitter owner) {
            this.start = start;
            this.end = end;
            this.owner = owner;
        }

        @Override
        public String toString() {
            return "(" + start + ".." + end + ", " + owner + ")";
        }
    }

    /** Completed turns so far. */
    long generation;
    /** The highest generation whose work has been committed; never above {@link #generation}. */
    long committedGeneration;
    /** Whether a commit of the oldest segment is running now (outside the lock). */
    boolean inFlight;
    /** The session's current owner, if one is registered; kept even while the session is clean. */
    SessionCommitter registeredOwner;
    /** The uncommitted work, oldest first. */
    final ArrayDeque<Segment> segments = new ArrayDeque<>();

    boolean dirty() {
        return generation > committedGeneration;
    }

    /** Whether {@code owner} (identity) is the session's registered owner or owns one of its dirty segments. */
    boolean hasOwner(SessionCommitter owner) {
        if (registeredOwner == owner) {
            return true;
        }
        for (Segment segment : segments) {
            if (segment.owner == owner) {
                return true;
            }
        }
        return false;
    }

    /**
     * Records one completed turn of {@code owner}: extends the last segment if it is the same owner
     * (identity) and no commit is in flight (an in-flight commit has captured its end already);
     * otherwise starts a new segment.
     *
     * @return the new generation
     */
    long markTurn(SessionCommitter owner) {
        generation++;
        Segment last = segments.peekLast();
        if (last != null && last.owner == owner && !inFlight) {
            last.end = generation;
        } else {
            segments.addLast(new Segment(generation, generation, owner));
        }
        return generation;
    }

    /** The session holds nothing worth remembering: no work, no commit, no owner. */
    boolean forgettable() {
        return !dirty() && !inFlight && registeredOwner == null;
    }
}
