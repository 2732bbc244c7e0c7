package dev.memlife.agent;

import static java.util.Objects.requireNonNull;

import dev.memlife.MemoryManager;
import dev.memlife.Message;
import dev.memlife.OwnerBuilder;
import dev.memlife.Ticker;
import dev.memlife.agent.TeardownListener.Phase;
import dev.memlife.agent.TeardownReport.Extraction;
import dev.memlife.internal.Checks;
import dev.memlife.internal.Deadline;
import dev.memlife.internal.Events;
import dev.memlife.internal.Failures;
import dev.memlife.internal.Threads;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One agent's memory: its {@link MemoryManager}, its session transcript, and the once-only
 * teardown claim.
 *
 * <p><b>The claim.</b> Exactly one teardown ever touches the providers. {@link #release()},
 * {@link #commitThenRelease()} and {@link #close()} each try to claim the agent by one CAS
 * <em>before doing any work</em>; the winner runs its {@link TeardownMode mode} (flush the queued
 * writes, bounded; extract if the mode does; shut the manager down), every loser returns at once
 * with a result naming the owner, and never waits for it ({@link #awaitTeardown} is the explicit
 * way to wait). So a soft release that arrives while a hard close is still flushing or extracting
 * does nothing to the providers. Every mode flushes before the shutdown: a soft release never
 * cancels a write the agent already accepted, whatever the manager's drain timeout.
 *
 * <p>The transcript handed to extraction is a snapshot taken when the claim is won; clearing the
 * transcript afterwards never changes it. {@link #commitSession()} (a {@link SessionCommitter})
 * extracts without tearing down; a teardown claimed meanwhile waits for a running commit before it
 * shuts the providers down, so no provider is shut down under a running extraction.
 *
 * <p>This class is thread-safe: every method may be called from any thread at any time.
 *
 * <p>One idea past 500 lines: the claim and the three modes share one state word and one
 * transcript snapshot, so each mode reads next to the claim it depends on; bounded extraction is
 * {@code BoundedExtraction}, and a third of the lines are the builder and the contract's javadoc.
 */
public final class AgentMemory implements SessionCommitter, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(AgentMemory.class);

    /** The teardown claim's states; they move only forward, by CAS on {@link #lifecycle}. */
    enum State {
        /** No teardown claimed: the agent is in use and may commit. */
        OPEN,
        /** A teardown won the claim and is working; every other teardown returns at once. */
        TEARING_DOWN,
        /** The claimed teardown is over; its result completes {@link #teardown}. */
        TORN_DOWN
    }

    /** A state and the mode that claimed it (null while open); compared by identity in the CAS. */
    private record Lifecycle(State state, TeardownMode owner) {}

    private static final Lifecycle OPEN = new Lifecycle(State.OPEN, null);

    private final MemoryManager manager;
    private final Duration flushTimeout;
    private final long extractionTimeoutNanos;
    private final Ticker ticker;
    private final Threads extractionThreads;
    private final TeardownListener listener;

    /** Guarded by itself. */
    private final List<Message> transcript = new ArrayList<>();
    private final AtomicReference<Lifecycle> lifecycle = new AtomicReference<>(OPEN);
    /** Completed once, by the winning teardown, after {@link #lifecycle} reached TORN_DOWN. */
    private final CompletableFuture<TeardownReport> teardown = new CompletableFuture<>();
    /** Held by a running {@link #commitSession()}; a teardown takes it before extraction and shutdown. */
    private final ReentrantLock commitLock = new ReentrantLock();

    /**
     * An agent over {@code manager} with every default of {@link Builder}.
     *
     * @param manager the agent's manager, which the agent then owns
     * @return the agent
     * @throws NullPointerException if {@code manager} is null
     */
    public static AgentMemory create(MemoryManager manager) {
        return new Builder(manager).build();
    }

    private AgentMemory(Builder b) {
        this.manager = b.manager;
        this.flushTimeout = b.flushTimeout;
        this.extractionTimeoutNanos = b.extractionTimeout.toNanos();
        this.ticker = b.ticker();
        this.extractionThreads = Threads.numbered("memlife-extract-" + manager.name()).orUser(b.threadFactory().orElse(null));
        this.listener = b.listener;
    }

    /**
     * A builder for an agent over {@code manager}, which the agent then owns.
     *
     * @param manager the agent's manager
     * @return a builder with every default
     * @throws NullPointerException if {@code manager} is null
     */
    public static Builder builder(MemoryManager manager) {
        return new Builder(manager);
    }

    /** {@return the manager this agent owns}: hand turns to it with {@link MemoryManager#syncAll}. */
    public MemoryManager memory() {
        return manager;
    }

    /** {@return the manager's name} */
    public String name() {
        return manager.name();
    }

    // ---- transcript ----------------------------------------------------------------------------

    /**
     * Appends a message to the session transcript.
     *
     * @param message the message
     * @throws NullPointerException if {@code message} is null
     */
    public void append(Message message) {
        requireNonNull(message, "message");
        synchronized (transcript) {
            transcript.add(message);
        }
    }

    /**
     * Records one completed turn in one call: the user's message and the assistant's reply go into
     * the session transcript (which end-of-session extraction reads) and the turn into the
     * manager's write queue ({@link MemoryManager#syncAll(String, String, String)}), so neither can
     * be forgotten. Returns at once, as {@code syncAll} does.
     *
     * @param userText what the user said
     * @param assistantText what the agent answered
     * @param sessionId the session the turn belongs to
     * @return true if the write was accepted; false if it was not (a blank user turn, or the
     *     manager is stopping: counted, and the caller should answer that memory is unavailable).
     *     The transcript has the turn either way; a stopping agent's transcript is never extracted
     *     again
     * @throws NullPointerException naming the first null argument
     * @throws dev.memlife.QueueFullException as {@code syncAll}: nothing was queued
     */
    public boolean recordTurn(String userText, String assistantText, String sessionId) {
        requireNonNull(userText, "userText");
        requireNonNull(assistantText, "assistantText");
        requireNonNull(sessionId, "sessionId");
        synchronized (transcript) {
            transcript.add(Message.user(userText));
            transcript.add(Message.assistant(assistantText));
        }
        return manager.syncAll(userText, assistantText, sessionId);
    }

    /** {@return a snapshot of the session transcript}; later changes to the transcript do not show in it. */
    public List<Message> transcript() {
        synchronized (transcript) {
            return List.copyOf(transcript);
        }
    }

    /** Empties the session transcript; snapshots already taken (by extraction, too) keep theirs. */
    public void clearTranscript() {
        synchronized (transcript) {
            transcript.clear();
        }
    }

    // ---- teardown ------------------------------------------------------------------------------

    /**
     * {@link #teardown teardown}({@link TeardownMode#RELEASE}): flush, then shut down; no extraction.
     *
     * @return the result: what this call did, or, if another teardown owns the agent, which one
     */
    public TeardownReport release() {
        return teardown(TeardownMode.RELEASE);
    }

    /**
     * {@link #teardown teardown}({@link TeardownMode#COMMIT_THEN_RELEASE}): flush, extract, then shut
     * down.
     *
     * @return the result: what this call did, or, if another teardown owns the agent, which one
     */
    public TeardownReport commitThenRelease() {
        return teardown(TeardownMode.COMMIT_THEN_RELEASE);
    }

    /**
     * {@link #teardown teardown}({@link TeardownMode#CLOSE}): the hard close at a session boundary,
     * bounded by the flush and extraction timeouts and the manager's shutdown budgets. For
     * try-with-resources; call {@code teardown(TeardownMode.CLOSE)} for its {@link TeardownReport}, or
     * {@link #release()} where the conversation should stay resumable. Idempotent: a later call
     * (or one racing another teardown) does nothing.
     */
    @Override
    public void close() {
        teardown(TeardownMode.CLOSE);
    }

    /**
     * Claims the teardown for {@code mode} and, if this call wins, runs it on this thread: flush
     * (waits at most the flush timeout), wait for a running {@link #commitSession} (at most the
     * flush plus extraction timeouts), extract if the mode does (at most the extraction timeout),
     * then the manager's bounded {@link MemoryManager#stop() shutdown}. If another teardown
     * owns the agent, returns at once and touches nothing. An interrupt cuts the waits short (the
     * manager then abandons and reports what it could not drain) and stays set.
     *
     * @param mode the teardown to run
     * @return the result: what this call did, or, if another teardown owns the agent, which one
     */
    public TeardownReport teardown(TeardownMode mode) {
        requireNonNull(mode, "mode");
        if (!claim(mode)) {
            return ownedByOther(mode);
        }
        return runClaimed(mode, transcript());
    }

    /**
     * Claims the teardown for {@code mode} on this thread, now, and runs the work on {@code
     * executor}; never waits. If another teardown owns the agent, the future is already complete
     * with a result saying so. If the executor refuses the work, it runs on this thread instead, so
     * a claim is never left without its work.
     *
     * @param mode the teardown to run
     * @param executor runs the teardown's work
     * @return the teardown's result, completed exceptionally only if the manager's shutdown threw
     */
    public CompletableFuture<TeardownReport> teardownAsync(TeardownMode mode, Executor executor) {
        requireNonNull(mode, "mode");
        requireNonNull(executor, "executor");
        if (!claim(mode)) {
            return CompletableFuture.completedFuture(ownedByOther(mode));
        }
        List<Message> snapshot = transcript();
        CompletableFuture<TeardownReport> result = new CompletableFuture<>();
        Runnable work = () -> {
            try {
                result.complete(runClaimed(mode, snapshot));
            } catch (Throwable t) {
                result.completeExceptionally(t);
            }
        };
        try {
            executor.execute(work);
        } catch (RuntimeException | Error refused) { // e.g. rejected, or no thread could be started
            LOG.warn("agent '{}': executor refused the {} teardown ({}); running it on this thread", name(), mode,
                    refused.toString());
            work.run();
        }
        return result;
    }

    /**
     * Waits until the teardown that owns this agent (whichever mode claimed it, now or later) has
     * finished, for at most {@code timeout}.
     *
     * @param timeout how long to wait at most
     * @return the owner's result; empty on timeout, or on interrupt (the interrupt flag is restored)
     * @throws IllegalStateException if the owning teardown failed with an exception
     */
    public Optional<TeardownReport> awaitTeardown(Duration timeout) {
        requireNonNull(timeout, "timeout");
        try {
            return Optional.of(Deadline.after(ticker, timeout).get(teardown));
        } catch (TimeoutException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        } catch (ExecutionException e) {
            throw new IllegalStateException("teardown of agent '" + name() + "' failed", e.getCause());
        }
    }

    /**
     * The teardown that owns this agent, whichever mode claims it, now or later, as a stage that
     * completes when it has finished: with its result, or exceptionally if it failed. Never
     * waits; to wait, see {@link #awaitTeardown}. Completing a copy of it changes nothing here.
     *
     * @return a read-only stage of the owning teardown's result
     */
    public CompletionStage<TeardownReport> whenTornDown() {
        return teardown.minimalCompletionStage();
    }

    /** {@return true while no teardown has been claimed} */
    public boolean isOpen() {
        return lifecycle.get().state() == State.OPEN;
    }

    /** {@return true once the claimed teardown has finished} */
    public boolean isTornDown() {
        return lifecycle.get().state() == State.TORN_DOWN;
    }

    /** {@return the mode of the teardown that claimed this agent, or empty if none did} */
    public Optional<TeardownMode> teardownOwner() {
        return Optional.ofNullable(lifecycle.get().owner());
    }

    // ---- commit without teardown -----------------------------------------------------------------

    /**
     * Commits the session's memory without tearing anything down: flushes the queued writes (at
     * most the flush timeout; a flush that times out is logged and the commit goes on) and runs
     * end-of-session extraction over a snapshot of the transcript (at most the extraction timeout).
     * Waits for another running commit first; an interrupt while waiting throws.
     *
     * @throws IllegalStateException if a teardown has been claimed, or extraction could not run
     * @throws TimeoutException if extraction did not finish within the extraction timeout (it goes
     *     on detached; the session should stay uncommitted)
     * @throws InterruptedException if interrupted while waiting for another commit
     */
    @Override
    public void commitSession() throws Exception {
        checkOpen("commitSession");
        commitLock.lockInterruptibly();
        try {
            checkOpen("commitSession");
            List<Message> snapshot = transcript();
            flush("commitSession");
            Extraction extraction = extract(snapshot);
            switch (extraction) {
                case COMPLETED:
                    return;
                case TIMED_OUT:
                    throw new TimeoutException("extraction of agent '" + name() + "' did not finish within "
                            + TimeUnit.NANOSECONDS.toMillis(extractionTimeoutNanos) + " ms");
                case FAILED:
                    throw new IllegalStateException("extraction of agent '" + name() + "' could not run");
                default:
                    throw new IllegalStateException("unexpected extraction outcome " + extraction);
            }
        } finally {
            commitLock.unlock();
        }
    }

    // ---- machinery -------------------------------------------------------------------------------

    private boolean claim(TeardownMode mode) {
        return lifecycle.compareAndSet(OPEN, new Lifecycle(State.TEARING_DOWN, mode));
    }

    private TeardownReport ownedByOther(TeardownMode requested) {
        TeardownMode owner = lifecycle.get().owner();
        LOG.debug("agent '{}': {} did nothing; the {} teardown owns the agent", name(), requested, owner);
        return TeardownReport.ownedByOther(name(), requested, owner);
    }

    /**
     * The winner's work. Whatever happens, the claim ends TORN_DOWN and {@link #teardown} completes.
     * Recorded as one {@link Events.Teardown}.
     */
    private TeardownReport runClaimed(TeardownMode mode, List<Message> snapshot) {
        Events.Teardown event = new Events.Teardown();
        event.begin();
        TeardownReport result = null;
        Throwable failure = null;
        try {
            phase(mode, Phase.FLUSH);
            boolean flushed = flush(mode.name());
            boolean locked = awaitRunningCommit();
            try {
                Extraction extraction = Extraction.NOT_RUN;
                if (mode.extracts()) {
                    phase(mode, Phase.EXTRACT);
                    extraction = extract(snapshot);
                }
                phase(mode, Phase.SHUTDOWN);
                result = TeardownReport.ran(name(), mode, flushed, extraction, manager.stop());
            } finally {
                if (locked) {
                    commitLock.unlock();
                }
            }
            phase(mode, Phase.DONE);
            return result;
        } catch (RuntimeException | Error e) {
            failure = e;
            throw e;
        } finally {
            lifecycle.set(new Lifecycle(State.TORN_DOWN, mode));
            if (result != null) {
                teardown.complete(result);
            } else {
                teardown.completeExceptionally(failure != null ? failure : new IllegalStateException("no result"));
            }
            record(event, mode, result, failure);
        }
    }

    private void record(Events.Teardown event, TeardownMode mode, TeardownReport result, Throwable failure) {
        event.end();
        if (!event.shouldCommit()) {
            return;
        }
        event.agent = name();
        event.mode = mode.name();
        if (result != null) {
            event.flushed = result.flushed();
            event.extraction = result.extraction().name();
            result.drainReport().ifPresent(d -> {
                event.delivered = d.delivered();
                event.failed = d.failed();
                event.abandoned = d.abandoned();
                event.stillRunning = d.stillRunning();
                event.providersNotShutDown = d.providersNotShutDown().size();
            });
        }
        event.failure = failure == null ? null : failure.toString();
        event.commit();
    }

    private boolean flush(String what) {
        boolean flushed = manager.flushPending(flushTimeout);
        if (!flushed) {
            LOG.warn("agent '{}': {} could not flush the queued writes within {} ms ({} still pending); the "
                    + "manager's drain takes over", name(), what, flushTimeout.toMillis(), manager.pendingWrites());
        }
        return flushed;
    }

    /** End-of-session extraction over {@code snapshot}, bounded by the extraction timeout on the agent's ticker. */
    private Extraction extract(List<Message> snapshot) {
        return BoundedExtraction.run(manager, snapshot, extractionThreads, Deadline.afterNanos(ticker, extractionTimeoutNanos));
    }

    /** Takes the commit lock, waiting at most flush + extraction timeouts; false if not taken. */
    private boolean awaitRunningCommit() {
        Deadline deadline = Deadline.afterNanos(ticker, Checks.saturatedAdd(flushTimeout.toNanos(), extractionTimeoutNanos));
        try {
            do {
                if (commitLock.tryLock(deadline.sliceNanos(), TimeUnit.NANOSECONDS)) {
                    return true;
                }
            } while (!deadline.expired());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        LOG.warn("agent '{}': a session commit is still running; shutting down without waiting longer", name());
        return false;
    }

    private void phase(TeardownMode mode, Phase phase) {
        try {
            listener.onPhase(this, mode, phase);
        } catch (Throwable t) {
            Failures.rethrowIfFatal(t);
            LOG.warn("agent '{}': teardown listener failed at {} of {}; ignored", name(), phase, mode, t);
        }
    }

    private void checkOpen(String method) {
        Lifecycle now = lifecycle.get();
        switch (now.state()) {
            case OPEN:
                return;
            case TEARING_DOWN:
            case TORN_DOWN:
                throw new IllegalStateException("agent '" + name() + "' is " + now.state() + " (" + now.owner()
                        + "); " + method + " refused");
            default:
                throw new IllegalStateException("unknown state " + now.state());
        }
    }

    @Override
    public String toString() {
        Lifecycle now = lifecycle.get();
        return "AgentMemory[" + name() + ", " + now.state() + (now.owner() == null ? "" : " by " + now.owner()) + "]";
    }

    /**
     * Settings for an {@link AgentMemory}. Setters check their argument; {@link #build()} copies
     * them, so a reused builder never changes an agent it already built. Not thread-safe.
     */
    public static final class Builder extends OwnerBuilder<Builder> {

        /** Default longest wait for the queued writes before extraction and shutdown. */
        public static final Duration DEFAULT_FLUSH_TIMEOUT = Duration.ofSeconds(10);
        /** Default longest wait for end-of-session extraction. */
        public static final Duration DEFAULT_EXTRACTION_TIMEOUT = Duration.ofMinutes(1);

        private final MemoryManager manager;
        private Duration flushTimeout = DEFAULT_FLUSH_TIMEOUT;
        private Duration extractionTimeout = DEFAULT_EXTRACTION_TIMEOUT;
        private TeardownListener listener = TeardownListener.NONE;

        private Builder(MemoryManager manager) {
            this.manager = requireNonNull(manager, "manager");
        }

        /**
         * How long a teardown or commit waits for the queued writes; default 10 s. Zero skips the wait (the manager's drain still runs).
         *
         * @param flushTimeout the longest wait; zero or more
         * @return this builder
         * @throws IllegalArgumentException if {@code flushTimeout} is negative or too large to measure
         */
        public Builder flushTimeout(Duration flushTimeout) {
            this.flushTimeout = Checks.nonNegative(flushTimeout, "flushTimeout");
            return this;
        }

        /**
         * How long extraction may take before it is left running detached; default 1 min.
         *
         * @param extractionTimeout the longest wait; positive
         * @return this builder
         * @throws IllegalArgumentException if {@code extractionTimeout} is not positive or too large to
         *     measure
         */
        public Builder extractionTimeout(Duration extractionTimeout) {
            this.extractionTimeout = Checks.positive(extractionTimeout, "extractionTimeout");
            return this;
        }

        /**
         * Observes the phases of the teardown; default none.
         *
         * @param listener the listener, called on the teardown's thread
         * @return this builder
         */
        public Builder listener(TeardownListener listener) {
            this.listener = requireNonNull(listener, "listener");
            return this;
        }

        /** {@return a new agent with these settings}; it owns the manager from now on. */
        public AgentMemory build() {
            return new AgentMemory(this);
        }
    }
}
