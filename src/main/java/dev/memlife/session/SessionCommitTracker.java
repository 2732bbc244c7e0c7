package dev.memlife.session;

import static java.util.Objects.requireNonNull;

import dev.memlife.OwnerBuilder;
import dev.memlife.Stoppable;
import dev.memlife.Ticker;
import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.SessionCommitter;
import dev.memlife.internal.Checks;
import dev.memlife.internal.Deadline;
import dev.memlife.internal.Threads;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Knows, per session, which completed turns are not yet committed (end-of-session extraction) and
 * which owner holds them, commits them at session boundaries — inline, or fire-and-forget in the
 * background — and drains everything still uncommitted at shutdown, within a deadline.
 *
 * <h2>Generations</h2>
 * Each session counts its completed turns: its <em>generation</em>. {@link #markTurnCompleted}
 * bumps it and records the work in a <em>segment</em> {@code (start, end, owner)} of consecutive
 * generations held by one owner (an agent). {@link #commit} commits the oldest dirty segment through
 * its owner and, on success, advances the <em>committed generation</em> to that segment's end as
 * captured when the commit began — never further, so a turn completed while a commit is in flight
 * stays dirty. A failed commit leaves the work and its owner recorded for a retry. Owners are
 * compared by identity ({@code ==}), and only a segment's owner can commit it: a replacement owner
 * cannot claim an older owner's work. No owner is ever called under the tracker's lock.
 *
 * <p>A session is forgotten when it has no registered owner and nothing to commit; {@link
 * #discard} forgets one explicitly. A null or blank session id is a safe no-op everywhere (each
 * method says what it returns then).
 *
 * <p>This class is thread-safe: one lock guards all session state, and every method may be called
 * from any thread at any time, including from inside an owner's commit.
 */
public final class SessionCommitTracker implements Stoppable<SessionDrainReport>, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(SessionCommitTracker.class);
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final String name;
    private final int drainParallelism;
    private final Duration backgroundWaitTimeout;
    private final Duration closeTimeout;
    private final ThreadFactory threadFactory;
    private final BackgroundCommits background;

    private final Ticker ticker;
    private final SessionTable table;

    /** {@return a tracker with every default of {@link Builder}} */
    public static SessionCommitTracker create() {
        return new Builder().build();
    }

    private SessionCommitTracker(Builder b) {
        this.name = b.name != null ? b.name : "sessions-" + INSTANCES.incrementAndGet();
        this.drainParallelism = b.drainParallelism;
        this.backgroundWaitTimeout = b.backgroundWaitTimeout;
        this.closeTimeout = b.closeTimeout;
        this.threadFactory = b.threadFactory().orElse(null);
        this.background = new BackgroundCommits(b.maxBackgroundCommits);
        this.ticker = b.ticker();
        this.table = new SessionTable(b.ticker());
    }

    /** {@return a builder for a tracker with settings other than the defaults} */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return this tracker's name, as it appears in thread names and reports} */
    public String name() {
        return name;
    }

    // ---- owners and turns ------------------------------------------------------------------------

    /**
     * Makes {@code owner} the session's registered owner, replacing any other; a session with a
     * registered owner is remembered even while clean. Work already recorded stays with the owner
     * that did it.
     *
     * @param sessionId the session
     * @param owner the new registered owner
     * @return the owner registered before, or null (also for a null or blank id, which is a no-op)
     */
    public SessionCommitter registerOwner(String sessionId, SessionCommitter owner) {
        requireNonNull(owner, "owner");
        return isBlank(sessionId) ? null : table.registerOwner(sessionId, owner);
    }

    /**
     * Removes {@code owner} as the session's registered owner, if it is the registered one
     * (identity). Its uncommitted work stays recorded and committable through it.
     *
     * @param sessionId the session
     * @param owner the owner to remove
     * @return true if it was the registered owner; false otherwise, and for a null or blank id
     */
    public boolean unregisterOwner(String sessionId, SessionCommitter owner) {
        requireNonNull(owner, "owner");
        return !isBlank(sessionId) && table.unregisterOwner(sessionId, owner);
    }

    /**
     * The session's registered owner, if any.
     *
     * @param sessionId the session
     * @return the registered owner; empty if there is none, and for a null or blank id
     */
    public Optional<SessionCommitter> registeredOwner(String sessionId) {
        return isBlank(sessionId) ? Optional.empty() : Optional.ofNullable(table.registeredOwner(sessionId));
    }

    /**
     * Records that {@code owner} completed one more turn of the session: bumps the generation and
     * extends the owner's last segment, or starts a new one when the last segment is another
     * owner's or a commit is in flight. Never waits except for the tracker's lock.
     *
     * @param sessionId the session
     * @param owner the owner (an agent) that completed the turn and will commit it
     * @return the session's new generation; 0 for a null or blank id (nothing is recorded)
     */
    public long markTurnCompleted(String sessionId, SessionCommitter owner) {
        requireNonNull(owner, "owner");
        return isBlank(sessionId) ? 0 : table.markTurn(sessionId, owner);
    }

    /**
     * Whether the session has completed turns not yet committed (also while a commit runs).
     *
     * @param sessionId the session
     * @return true if it has; false for a clean, unknown, null or blank session
     */
    public boolean hasUncommittedWork(String sessionId) {
        return !isBlank(sessionId) && table.dirty(sessionId);
    }

    /** {@return the ids of every session with uncommitted work, sorted} */
    public List<String> dirtySessions() {
        return table.dirtySessions();
    }

    /**
     * Forgets a clean, idle session and its registered owner. Refuses a session with uncommitted
     * work or a commit in flight: that work would be lost.
     *
     * @param sessionId the session
     * @return what happened; {@link DiscardResult#NO_SESSION} for an unknown, null or blank id
     */
    public DiscardResult discard(String sessionId) {
        return isBlank(sessionId) ? DiscardResult.NO_SESSION : table.discard(sessionId);
    }

    // ---- commits ---------------------------------------------------------------------------------

    /**
     * Commits the session's oldest dirty segment — one segment per call — through the owner recorded
     * for it, on this thread, outside the tracker's lock. {@code owner} is the caller's agent, which
     * must be one of the session's owners (identity): its registered owner, or the owner of one of
     * its dirty segments. When an older segment belongs to an owner since replaced, that segment is
     * committed first, through that owner, and the caller's own work stays dirty for the next
     * commit, as hermes-webui's {@code commit_session_memory(sid, agent)} does: newer work never
     * clears an older owner's ({@link CommitResult#owner()} names the owner that ran).
     *
     * <p>When another commit of the session is in flight: without {@code wait} this returns {@link
     * CommitResult.Status#IN_FLIGHT} at once; with {@code wait} it first waits up to {@code timeout}
     * for that commit to end, then commits whatever is still dirty. The owner call itself is not
     * bounded: it takes as long as the owner takes. An interrupt while waiting returns {@link
     * CommitResult.Status#INTERRUPTED} with the interrupt flag restored.
     *
     * @param sessionId the session
     * @param owner one of the session's owners: its registered owner or a dirty segment's
     * @param wait whether to wait for a commit of the session already in flight
     * @param timeout how long to wait for it at most
     * @return what happened, and through which owner; {@link CommitResult.Status#NOTHING_TO_COMMIT}
     *     for a clean, unknown, null or blank session; {@link CommitResult.Status#NOT_OWNER} if
     *     {@code owner} is none of the session's owners
     * @throws VirtualMachineError if the owner threw one (after the in-flight mark was cleared)
     */
    public CommitResult commit(String sessionId, SessionCommitter owner, boolean wait, Duration timeout) {
        requireNonNull(owner, "owner");
        requireNonNull(timeout, "timeout");
        if (isBlank(sessionId)) {
            return new CommitResult(CommitResult.Status.NOTHING_TO_COMMIT, sessionId, 0, 0, null, Optional.empty());
        }
        return table.commit(sessionId, owner, wait, Checks.saturatedNanos(timeout));
    }

    /**
     * Commits the session's oldest dirty segment through the owner <em>recorded</em> for it — one
     * segment per call — on this thread, outside the tracker's lock: whoever calls, and even if
     * that owner has since been replaced as the session's registered owner (an agent evicted or
     * swapped out), as hermes-webui's {@code commit_session_memory} does. The result names the
     * owner that ran ({@link CommitResult#owner()}). Waits, and reports, like {@link
     * #commit(String, SessionCommitter, boolean, Duration)}.
     *
     * @param sessionId the session
     * @param wait whether to wait for a commit of the session already in flight
     * @param timeout how long to wait for it at most
     * @return what happened, and through which owner
     * @throws VirtualMachineError if the owner threw one (after the in-flight mark was cleared)
     */
    public CommitResult commit(String sessionId, boolean wait, Duration timeout) {
        requireNonNull(timeout, "timeout");
        if (isBlank(sessionId)) {
            return new CommitResult(CommitResult.Status.NOTHING_TO_COMMIT, sessionId, 0, 0, null, Optional.empty());
        }
        return table.commit(sessionId, null, wait, Checks.saturatedNanos(timeout));
    }

    /**
     * What a gateway commits before it evicts an agent ({@code AgentGateway.Builder.beforeEviction}):
     * given the session key (the session id) and the agent, it commits every dirty segment of the
     * session through its recorded owner, within {@code timeout} in all, and answers whether the
     * session is clean. A session still dirty keeps its agent, and so its providers, alive. As
     * hermes-webui commits a session before it evicts its agent.
     *
     * @param timeout the longest the commits of one eviction may wait for a commit in flight
     * @return the commit, for the gateway's builder
     */
    public BiPredicate<String, AgentMemory> commitBeforeEviction(Duration timeout) {
        Checks.nonNegative(timeout, "timeout");
        return (sessionId, agent) -> {
            Deadline deadline = Deadline.after(ticker, timeout);
            CommitResult r;
            do {
                r = commit(sessionId, true, Duration.ofNanos(Math.max(0, deadline.remainingNanos())));
            } while (r.committed() && r.stillDirty() && !deadline.expired());
            return !hasUncommittedWork(sessionId);
        };
    }

    private static boolean isBlank(String sessionId) {
        return sessionId == null || sessionId.isBlank();
    }

    // ---- background commits ----------------------------------------------------------------------

    /**
     * Commits the session fire-and-forget ("+ New Chat"): registers a commit worker and starts it,
     * and returns at once without waiting for any owner. The worker commits every dirty segment,
     * oldest first, each through the owner recorded for it ({@link #commit(String, boolean,
     * Duration)}, waiting at most the builder's background wait timeout for a commit already in
     * flight), logs a failure, and unregisters itself when it ends.
     *
     * <p>No worker is started when the session is clean, when draining has begun (the drain commits
     * the session itself), or when the registry is full; the returned status says which.
     *
     * @param sessionId the session
     * @return whether a worker started (with its thread), or why not
     */
    public BackgroundCommit commitInBackground(String sessionId) {
        if (!hasUncommittedWork(sessionId)) {
            return new BackgroundCommit(BackgroundCommit.Status.NOTHING_TO_COMMIT, sessionId, null, ticker);
        }
        Thread worker = threads("memlife-commit-" + sessionId).newThread(() -> runBackgroundCommit(sessionId));
        switch (background.register(worker)) {
            case ACCEPTED:
                break;
            case DRAINING:
                return new BackgroundCommit(BackgroundCommit.Status.REFUSED_DRAINING, sessionId, null, ticker);
            case FULL:
                return new BackgroundCommit(BackgroundCommit.Status.REFUSED_FULL, sessionId, null, ticker);
            default:
                throw new IllegalStateException("unknown registration outcome for " + worker);
        }
        try {
            worker.start();
        } catch (Throwable t) {
            background.unregister(worker);
            throw t;
        }
        return new BackgroundCommit(BackgroundCommit.Status.STARTED, sessionId, worker, ticker);
    }

    private void runBackgroundCommit(String sessionId) {
        try {
            CommitResult r;
            do {
                r = commit(sessionId, true, backgroundWaitTimeout);
            } while (r.committed() && r.stillDirty());
            if (r.status() == CommitResult.Status.FAILED) {
                LOG.warn("background commit of session '{}' (tracker '{}') failed in owner {}; the work stays "
                        + "uncommitted for a retry or the shutdown drain", sessionId, name, r.owner().orElse(null),
                        r.failure());
            } else if (r.status() == CommitResult.Status.IN_FLIGHT) {
                LOG.warn("background commit of session '{}' (tracker '{}') gave up after waiting {} ms for the commit"
                        + " in flight; the work stays uncommitted", sessionId, name, backgroundWaitTimeout.toMillis());
            }
        } finally {
            background.unregister(Thread.currentThread());
        }
    }

    /**
     * Registers a fire-and-forget commit worker the caller made itself, so the drain joins it. The
     * caller must start the worker only when this returns true, and the worker must {@link
     * #unregisterBackgroundCommit unregister} itself when it ends (in a {@code finally}).
     *
     * @param worker the worker thread, not yet started
     * @return true if registered; false once draining has begun (the drain then commits the session
     *     itself) or when the registry already holds {@link Builder#maxBackgroundCommits} workers
     */
    public boolean registerBackgroundCommit(Thread worker) {
        return background.register(worker) == BackgroundCommits.Registration.ACCEPTED;
    }

    /**
     * Removes a worker from the registry; removing one that is not registered does nothing.
     *
     * @param worker the worker thread
     */
    public void unregisterBackgroundCommit(Thread worker) {
        background.unregister(worker);
    }

    /** {@return the registered background commit workers, in registration order} */
    public List<Thread> backgroundCommits() {
        return background.snapshot();
    }

    /** {@return whether {@link #stop} has begun}; background commits are refused from then on. */
    public boolean isDraining() {
        return background.draining();
    }

    // ---- shutdown drain --------------------------------------------------------------------------

    /**
     * {@link #stop(Duration) stop} with the builder's {@linkplain Builder#closeTimeout close
     * timeout}, for try-with-resources and frameworks that close what they own: commits what is
     * still uncommitted and refuses later background commits. May be called again.
     */
    @Override
    public void close() {
        stop(closeTimeout);
    }

    /**
     * Commits everything still uncommitted, within one budget. Marks the tracker draining (later
     * background commits are refused for good), waits for the registered background workers, and
     * commits the dirty sessions — up to the builder's drain parallelism at once, each session's
     * segments in order through their owners — pass after pass until every session is clean, the
     * deadline has passed, or a pass commits nothing. The first pass already runs while the drain
     * waits for the workers, so one wedged worker cannot starve every other session; a session whose
     * worker is still committing is simply waited for, never committed twice.
     *
     * <p>Returns by the deadline even when an owner never returns: every owner call runs on a daemon
     * drain worker, and a worker still busy at the deadline is left running detached (its commit,
     * if it ever finishes, is still recorded). An interrupt ends the drain early, with the interrupt
     * flag restored. May be called again, e.g. by a shutdown hook after an explicit drain.
     *
     * @param budget the whole drain's budget; zero or negative gives up at once on whatever is dirty
     * @return the sessions left dirty and why, with counts and the time taken
     */
    @Override
    public SessionDrainReport stop(Duration budget) {
        requireNonNull(budget, "budget");
        return new SessionDrain(this, table, Deadline.after(ticker, budget), drainParallelism).run(background.startDraining());
    }

    /**
     * The tracker's threads: daemon threads named {@code defaultName}, or the builder's factory's,
     * switched to daemon (so a hung owner never pins the JVM).
     */
    Threads threads(String defaultName) {
        return Threads.named(defaultName).orUserAsDaemon(threadFactory);
    }

    @Override
    public String toString() {
        return "SessionCommitTracker[" + name + ", dirty=" + dirtySessions().size() + ", background="
                + background.snapshot().size() + (isDraining() ? ", draining" : "") + "]";
    }

    /**
     * Settings for a {@link SessionCommitTracker}. Setters check their argument; {@link #build()}
     * copies the settings. Not thread-safe.
     */
    public static final class Builder extends OwnerBuilder<Builder> {

        /**
         * Default number of sessions {@link SessionCommitTracker#stop} commits at once: commits wait
         * on providers (an extraction is mostly a remote call), so more run at once than there are cores.
         */
        public static final int DEFAULT_DRAIN_PARALLELISM = 16;
        /** Default most background commit workers registered at once. */
        public static final int DEFAULT_MAX_BACKGROUND_COMMITS = 256;
        /** Default time a background commit waits for a commit already in flight. */
        public static final Duration DEFAULT_BACKGROUND_WAIT_TIMEOUT = Duration.ofSeconds(30);
        /** Default budget of {@link SessionCommitTracker#close()}'s drain. */
        public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(30);

        private String name;
        private int drainParallelism = DEFAULT_DRAIN_PARALLELISM;
        private int maxBackgroundCommits = DEFAULT_MAX_BACKGROUND_COMMITS;
        private Duration backgroundWaitTimeout = DEFAULT_BACKGROUND_WAIT_TIMEOUT;
        private Duration closeTimeout = DEFAULT_CLOSE_TIMEOUT;

        private Builder() {}

        /**
         * The tracker's name in reports and logs; default {@code sessions-<n>}.
         *
         * @param name the name; not blank
         * @return this builder
         */
        public Builder name(String name) {
            this.name = Checks.notBlank(name, "name");
            return this;
        }

        /**
         * How many sessions the drain commits at once; default {@value #DEFAULT_DRAIN_PARALLELISM}.
         *
         * @param drainParallelism the number of sessions; at least 1
         * @return this builder
         */
        public Builder drainParallelism(int drainParallelism) {
            this.drainParallelism = Checks.atLeast(drainParallelism, 1, "drainParallelism");
            return this;
        }

        /**
         * The most background commit workers registered at once; beyond it {@code commitInBackground}
         * refuses (the work stays dirty). Default {@value #DEFAULT_MAX_BACKGROUND_COMMITS}.
         *
         * @param maxBackgroundCommits the number of workers; at least 1
         * @return this builder
         */
        public Builder maxBackgroundCommits(int maxBackgroundCommits) {
            this.maxBackgroundCommits = Checks.atLeast(maxBackgroundCommits, 1, "maxBackgroundCommits");
            return this;
        }

        /**
         * How long a background commit waits for a commit of the same session already in flight;
         * default 30 s.
         *
         * @param backgroundWaitTimeout the longest wait; zero or more
         * @return this builder
         */
        public Builder backgroundWaitTimeout(Duration backgroundWaitTimeout) {
            this.backgroundWaitTimeout = Checks.nonNegative(backgroundWaitTimeout, "backgroundWaitTimeout");
            return this;
        }

        /**
         * The budget of {@link SessionCommitTracker#close()}'s drain; default 30 s.
         *
         * @param closeTimeout the drain's budget; zero or more
         * @return this builder
         */
        public Builder closeTimeout(Duration closeTimeout) {
            this.closeTimeout = Checks.nonNegative(closeTimeout, "closeTimeout");
            return this;
        }

        /** {@return a new tracker with these settings} */
        public SessionCommitTracker build() {
            return new SessionCommitTracker(this);
        }
    }
}
