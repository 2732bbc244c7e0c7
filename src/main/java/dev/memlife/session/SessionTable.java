package dev.memlife.session;

import dev.memlife.Ticker;
import dev.memlife.agent.SessionCommitter;
import dev.memlife.internal.Deadline;
import dev.memlife.internal.Failures;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The session states of one {@link SessionCommitTracker} and the commit protocol over them:
 * capture the oldest segment's end and mark it in flight under the lock, call its owner outside
 * the lock, then record the outcome under the lock again. Arguments are checked by the tracker:
 * session ids here are never null or blank, owners never null. Thread-safe: one lock guards every
 * state, and no owner is ever called while it is held.
 */
final class SessionTable {

    private final Ticker ticker;
    private final ReentrantLock lock = new ReentrantLock();
    /** Signalled whenever a commit ends (success or failure), so waiters re-check {@code inFlight}. */
    private final Condition commitEnded = lock.newCondition();
    /** Guarded by {@link #lock}. */
    private final Map<String, SessionState> sessions = new HashMap<>();

    SessionTable(Ticker ticker) {
        this.ticker = ticker;
    }

    SessionCommitter registerOwner(String sessionId, SessionCommitter owner) {
        return locked(() -> {
            SessionState s = sessions.computeIfAbsent(sessionId, id -> new SessionState());
            SessionCommitter previous = s.registeredOwner;
            s.registeredOwner = owner;
            return previous;
        });
    }

    boolean unregisterOwner(String sessionId, SessionCommitter owner) {
        return locked(() -> {
            SessionState s = sessions.get(sessionId);
            if (s == null || s.registeredOwner != owner) {
                return false;
            }
            s.registeredOwner = null;
            forgetIfIdle(sessionId, s);
            return true;
        });
    }

    SessionCommitter registeredOwner(String sessionId) {
        return read(sessionId, s -> s.registeredOwner, null);
    }

    long markTurn(String sessionId, SessionCommitter owner) {
        return locked(() -> sessions.computeIfAbsent(sessionId, id -> new SessionState()).markTurn(owner));
    }

    boolean dirty(String sessionId) {
        return read(sessionId, SessionState::dirty, false);
    }

    boolean inFlight(String sessionId) {
        return read(sessionId, s -> s.inFlight, false);
    }

    /** What {@code field} reads of the session's state under the lock; {@code absent} for an unknown session. */
    private <T> T read(String sessionId, Function<SessionState, T> field, T absent) {
        return locked(() -> {
            SessionState s = sessions.get(sessionId);
            return s == null ? absent : field.apply(s);
        });
    }

    /** {@code body}'s answer, computed holding the lock. */
    private <T> T locked(Supplier<T> body) {
        lock.lock();
        try {
            return body.get();
        } finally {
            lock.unlock();
        }
    }

    /** The dirty sessions' ids, sorted. */
    List<String> dirtySessions() {
        return locked(() -> {
            List<String> out = new ArrayList<>();
            sessions.forEach((id, s) -> {
                if (s.dirty()) {
                    out.add(id);
                }
            });
            out.sort(null);
            return out;
        });
    }

    DiscardResult discard(String sessionId) {
        return locked(() -> {
            SessionState s = sessions.get(sessionId);
            if (s == null) {
                return DiscardResult.NO_SESSION;
            }
            if (s.inFlight) {
                return DiscardResult.REFUSED_IN_FLIGHT;
            }
            if (s.dirty()) {
                return DiscardResult.REFUSED_DIRTY;
            }
            sessions.remove(sessionId);
            return DiscardResult.DISCARDED;
        });
    }

    /**
     * See {@link SessionCommitTracker#commit}; {@code waitNanos} is how long to wait for an in-flight
     * commit. The oldest dirty segment is committed through its recorded owner, whoever calls;
     * {@code owner}, when not null, must be one of the session's owners ({@link SessionState#hasOwner}).
     */
    CommitResult commit(String sessionId, SessionCommitter owner, boolean wait, long waitNanos) {
        SessionState state;
        long capturedEnd;
        SessionCommitter recorded;
        lock.lock();
        try {
            SessionState s = sessions.get(sessionId);
            if (wait && s != null && s.inFlight) {
                if (!awaitNotInFlight(sessionId, Deadline.afterNanos(ticker, waitNanos))) {
                    return result(Thread.currentThread().isInterrupted() ? CommitResult.Status.INTERRUPTED
                            : CommitResult.Status.IN_FLIGHT, sessionId, sessions.get(sessionId), null);
                }
                s = sessions.get(sessionId);
            }
            if (s == null || !s.dirty()) {
                return result(CommitResult.Status.NOTHING_TO_COMMIT, sessionId, s, null);
            }
            if (s.inFlight) {
                return result(CommitResult.Status.IN_FLIGHT, sessionId, s, null);
            }
            recorded = s.segments.getFirst().owner;
            if (owner != null && !s.hasOwner(owner)) {
                return result(CommitResult.Status.NOT_OWNER, sessionId, s, null);
            }
            capturedEnd = s.segments.getFirst().end;
            s.inFlight = true;
            state = s;
        } finally {
            lock.unlock();
        }
        return callOwner(sessionId, recorded, state, capturedEnd);
    }

    private CommitResult callOwner(String sessionId, SessionCommitter owner, SessionState state, long capturedEnd) {
        Throwable failure = null;
        CommitResult result;
        try {
            owner.commitSession();
        } catch (Throwable t) {
            failure = t;
        } finally {
            lock.lock();
            try {
                state.inFlight = false;
                if (failure == null) {
                    // The segment could not grow while in flight, so its end is still the captured one.
                    state.segments.removeFirst();
                    state.committedGeneration = Math.max(state.committedGeneration, capturedEnd);
                    forgetIfIdle(sessionId, state);
                }
                commitEnded.signalAll();
                result = new CommitResult(failure == null ? CommitResult.Status.COMMITTED
                        : CommitResult.Status.FAILED, sessionId, state.committedGeneration, state.generation, failure,
                        Optional.of(owner));
            } finally {
                lock.unlock();
            }
        }
        Failures.rethrowIfFatal(failure);
        if (failure instanceof InterruptedException) {
            Thread.currentThread().interrupt();
        }
        return result;
    }

    /**
     * For the drain: waits up to the deadline until no commit of the session is in flight, then
     * names the owner of its oldest dirty segment.
     *
     * @return that owner; empty when the session is clean; null when a commit was still in flight
     *     at the deadline or the wait was interrupted (the interrupt flag is restored)
     */
    Optional<SessionCommitter> awaitOldestDirtyOwner(String sessionId, Deadline deadline) {
        return locked(() -> {
            if (!awaitNotInFlight(sessionId, deadline)) {
                return null;
            }
            SessionState s = sessions.get(sessionId);
            return s == null || !s.dirty() ? Optional.empty() : Optional.of(s.segments.getFirst().owner);
        });
    }

    /**
     * Waits, with the lock held between checks, until the session has no commit in flight or the
     * deadline passes. An interrupt ends the wait with the interrupt flag restored.
     *
     * @return true once no commit is in flight; false on timeout or interrupt
     */
    private boolean awaitNotInFlight(String sessionId, Deadline deadline) {
        SessionState s;
        while ((s = sessions.get(sessionId)) != null && s.inFlight) {
            if (deadline.expired()) {
                return false;
            }
            try {
                commitEnded.awaitNanos(deadline.sliceNanos());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    /** Forgets a state that holds nothing: no work, no commit, no owner. Lock held. */
    private void forgetIfIdle(String sessionId, SessionState s) {
        if (s.forgettable() && sessions.get(sessionId) == s) {
            sessions.remove(sessionId);
        }
    }

    private static CommitResult result(CommitResult.Status outcome, String sessionId, SessionState s,
            Throwable failure) {
        return new CommitResult(outcome, sessionId, s == null ? 0 : s.committedGeneration,
                s == null ? 0 : s.generation, failure, Optional.empty());
    }
}
