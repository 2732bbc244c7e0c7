package dev.memlife.session;

import static java.util.Objects.requireNonNull;

import dev.memlife.Ticker;
import dev.memlife.internal.Deadline;
import java.time.Duration;

/**
 * The handle {@link SessionCommitTracker#commitInBackground} returns at once: whether a commit
 * worker was started, and a way to wait for it. Thread-safe.
 */
public final class BackgroundCommit {

    /** Whether a background commit was started. */
    public enum Status {
        /** A commit worker was registered and started. */
        STARTED,
        /** The session had nothing to commit; no worker was started. */
        NOTHING_TO_COMMIT,
        /** The tracker is draining: no worker was started; the drain commits the session itself. */
        REFUSED_DRAINING,
        /**
         * The registry already holds its maximum of running workers (they may be wedged in a hung
         * provider): no worker was started; the work stays dirty for a later commit or the drain.
         */
        REFUSED_FULL
    }

    private final Status status;
    private final String sessionId;
    private final Thread worker;
    /** The tracker's ticker, which {@link #awaitDone} measures its timeout on. */
    private final Ticker ticker;

    BackgroundCommit(Status status, String sessionId, Thread worker, Ticker ticker) {
        this.status = requireNonNull(status, "status");
        this.sessionId = sessionId;
        this.worker = worker;
        this.ticker = ticker;
    }

    /** {@return whether a worker was started} */
    public Status status() {
        return status;
    }

    /** {@return the session the commit is for} */
    public String sessionId() {
        return sessionId;
    }

    /**
     * Waits until the worker has finished (committed, failed or given up) and unregistered itself,
     * for at most {@code timeout}, measured on the tracker's ticker. Returns at once when no worker
     * was started.
     *
     * @param timeout the longest wait
     * @return true when no worker is running any more; false on timeout, or on interrupt (the
     *     interrupt flag is restored)
     */
    public boolean awaitDone(Duration timeout) {
        requireNonNull(timeout, "timeout");
        if (worker == null) {
            return true;
        }
        try {
            return Deadline.after(ticker, timeout).join(worker);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The worker thread, if one was started; for tests in this package. */
    Thread worker() {
        return worker;
    }

    @Override
    public String toString() {
        return "BackgroundCommit[" + sessionId + ", " + status + "]";
    }
}
