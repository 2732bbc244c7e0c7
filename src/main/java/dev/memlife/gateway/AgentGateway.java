package dev.memlife.gateway;

import static java.util.Objects.requireNonNull;

import dev.memlife.OwnerBuilder;
import dev.memlife.Stoppable;
import dev.memlife.StoppedException;
import dev.memlife.Ticker;
import dev.memlife.WriteFigures;
import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownMode;
import dev.memlife.agent.TeardownReport;
import dev.memlife.internal.Checks;
import dev.memlife.internal.Deadline;
import dev.memlife.internal.Events;
import dev.memlife.internal.Threads;
import dev.memlife.internal.ThrottledLog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiPredicate;
import java.util.function.Function;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The host side of agent memory: a cache of agents by session key, and every way an agent leaves
 * it.
 *
 * <ul>
 *   <li><b>Cleanup chokepoint.</b> Every path that ends a session's agent — {@link #reset}
 *       ({@code /reset}, {@code /new}, session expiry) — hard-closes it through one method,
 *       {@link AgentMemory#close() flush, extract, shut down}, on the housekeeping executor.
 *   <li><b>Stop</b> refuses new leases at once, waits (for at most half its budget) for the leases
 *       already open, so the turns in flight are queued and flushed, then tears every agent down in
 *       the {@linkplain Builder#stopMode stop mode}: a hard close by default, or a release that keeps
 *       the conversations resumable for the next process.
 *   <li><b>Eviction</b> (LRU cap, idle TTL, {@link #evict}) is soft ({@link Builder#evictionMode})
 *       and runs on the housekeeping executor, never on the caller's thread; an agent under an
 *       open {@link AgentLease} (mid-turn) is never evicted.
 *   <li>The agent's teardown claim is taken on the caller's thread before the work is handed to
 *       the executor, so when a reset stops waiting, any later eviction of the same agent finds the
 *       close owning it and leaves the providers alone.
 * </ul>
 *
 * <p>This class is thread-safe: every method may be called from any thread at any time.
 *
 * <p>One idea past 500 lines: the cache and every way an agent leaves it share one map, one lock
 * and the one cleanup chokepoint, so they read best together; the LRU and idle bookkeeping live
 * in {@code AgentCache}, the stop's two phases in {@code GatewayStop}, the teardown tallies in
 * {@code TeardownTally}.
 */
public final class AgentGateway implements Stoppable<GatewayStopReport>, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(AgentGateway.class);
    /** Idle housekeeping threads end after this long; the next teardown starts one again. */
    private static final long HOUSEKEEPING_KEEP_ALIVE_SECONDS = 30;

    /** The gateway's lifecycle; moves only forward, by CAS on {@link #state}. */
    enum State {
        /** Serving: agents can be leased, put, evicted and reset. */
        RUNNING,
        /** {@link #stop} won the CAS and is closing every agent. */
        STOPPING,
        /** The stop is over; its report completes {@link #stopReport}. */
        STOPPED
    }

    private final String name;
    private final TeardownMode evictionMode;
    private final TeardownMode stopMode;
    private final Duration idleTtl;
    private final long sweepIntervalNanos;
    private final Duration resetTimeout;
    private final Duration stopTimeout;
    private final int maxAgents;
    private final Ticker ticker;
    private final AgentCache cache;
    private final ThreadPoolExecutor housekeeping;
    private final TeardownTally teardowns = new TeardownTally();
    private final ThrottledLog warnings = new ThrottledLog(LOG);
    /** Commits a session's work before its agent is evicted; null: evict at once. */
    private final CommitBeforeEviction beforeEviction;
    /** Sessions the idle sweep leaves to another path (their expiry). */
    private final Predicate<String> idleSweepSkips;
    private final Function<? super String, ? extends AgentMemory> agentFactory;
    private final AtomicReference<State> state = new AtomicReference<>(State.RUNNING);
    private final CompletableFuture<GatewayStopReport> stopReport = new CompletableFuture<>();
    /** When the idle sweep last ran, by the gateway's ticker; CAS so only one caller sweeps at a time. */
    private final AtomicLong lastSweepNanos;

    private AgentGateway(Builder b) {
        this.name = b.name;
        this.evictionMode = b.evictionMode;
        this.idleSweepSkips = b.idleSweepSkips;
        this.agentFactory = b.agentFactory;
        this.stopMode = b.stopMode;
        this.idleTtl = b.idleTtl;
        this.sweepIntervalNanos = b.sweepInterval.toNanos();
        this.resetTimeout = b.resetTimeout;
        this.stopTimeout = b.stopTimeout;
        this.maxAgents = b.maxAgents;
        this.ticker = b.ticker();
        this.cache = new AgentCache("agent gateway '" + b.name + "'", b.maxAgents, Checks.saturatedNanos(b.idleTtl), b.ticker());
        this.housekeeping = newHousekeeping(b.name, b.housekeepingThreads, b.threadFactory().orElse(null));
        this.beforeEviction = b.beforeEviction == null ? null : new CommitBeforeEviction(b.name, b.beforeEviction,
                housekeeping, e -> softTeardown(e, TeardownMode.RELEASE, Runnable::run));
        this.lastSweepNanos = new AtomicLong(b.ticker().read());
    }

    /** {@return a new gateway with every default of {@link Builder}} */
    public static AgentGateway create() {
        return builder().build();
    }

    /** {@return a builder for a gateway with settings other than the defaults} */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return this gateway's name, as it appears in thread names and logs} */
    public String name() {
        return name;
    }

    // ---- the cache -----------------------------------------------------------------------------

    /**
     * Leases the agent for {@code key}, creating it with {@code factory} (outside any lock) if none
     * is cached or the cached one has been torn down. Close the lease when the turn is over. May
     * run the idle sweep first (at most once per sweep interval); never waits for a teardown.
     *
     * @param key the session key
     * @param factory makes the agent for a key that has none cached; called on this thread
     * @return the lease on the agent, to close when the turn is over
     * @throws StoppedException if the gateway is stopped
     * @throws NullPointerException if an argument is null or the factory returns null
     */
    public AgentLease acquire(String key, Function<? super String, ? extends AgentMemory> factory) {
        return lease(key, factory);
    }

    /**
     * Leases the agent for {@code key}, creating it with the gateway's {@linkplain
     * Builder#agentFactory agent factory} if none is cached; otherwise as {@link #acquire(String,
     * Function)}.
     *
     * @param key the session key
     * @return the lease on the agent, to close when the turn is over
     * @throws IllegalStateException if the gateway was built without an agent factory
     * @throws StoppedException if the gateway is stopped
     * @throws NullPointerException if {@code key} is null or the factory returns null
     */
    public AgentLease acquire(String key) {
        requireNonNull(key, "key");
        if (agentFactory == null) {
            throw new IllegalStateException("gateway '" + name + "' has no agent factory: build it with "
                    + "AgentGateway.builder().agentFactory(...), or pass one to acquire(key, factory)");
        }
        return lease(key, agentFactory);
    }

    private AgentLease lease(String key, Function<? super String, ? extends AgentMemory> factory) {
        requireNonNull(key, "key");
        requireNonNull(factory, "factory");
        maybeSweep();
        List<AgentCache.Entry> left = new ArrayList<>();
        AgentCache.Entry entry = cache.leaseExisting(key, left);
        evictAll(left, "torn down elsewhere");
        if (entry == null) {
            AgentMemory fresh = requireNonNull(factory.apply(key), "factory returned null for key " + key);
            left.clear();
            entry = cache.insertLeased(key, fresh, left);
            evictAll(left, "capacity " + maxAgents);
            warnIfOverCapacity();
            if (entry == null || entry.agent != fresh) {
                fresh.teardownAsync(TeardownMode.RELEASE, housekeeping); // never handed out: nothing to extract
            }
            if (entry == null) {
                throw new StoppedException("agent gateway '" + name + "'", "lease of key " + key);
            }
        }
        return new AgentLease(cache, entry);
    }

    /**
     * Caches {@code agent} under {@code key}; an agent it replaces is soft-evicted. May push the
     * least recently used idle agents out, and run the idle sweep first.
     *
     * @param key the session key
     * @param agent the agent to cache; not yet claimed by a teardown
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the agent has already been claimed by a teardown
     * @throws StoppedException if the gateway is stopped
     */
    public void put(String key, AgentMemory agent) {
        requireNonNull(key, "key");
        requireNonNull(agent, "agent");
        if (!agent.isOpen()) {
            throw new IllegalArgumentException("agent " + agent + " is already being torn down; not cached under " + key);
        }
        maybeSweep();
        List<AgentCache.Entry> left = new ArrayList<>();
        if (!cache.putAgent(key, agent, left)) {
            throw new StoppedException("agent gateway '" + name + "'", "put of key " + key);
        }
        evictAll(left, "replaced or capacity " + maxAgents);
        warnIfOverCapacity();
    }

    /**
     * Logs (throttled) when the cache stays over its cap because every agent it could evict is
     * mid-turn; the next insert checks again. hermes-agent's gateway logs this on every insert.
     */
    private void warnIfOverCapacity() {
        int over = cache.overCapacity();
        if (over > 0) {
            warnings.warn("over-capacity", "agent gateway '" + name + "': agent cache over its cap (" + (maxAgents + over)
                    + " > " + maxAgents + "); " + over + " excess agents are mid-turn and will be evicted once idle, "
                    + "at a later insert or sweep", null);
        }
    }

    /**
     * The agent cached for {@code key}, without leasing it.
     *
     * @param key the session key
     * @return the cached agent, or empty if none is cached for the key
     */
    public Optional<AgentMemory> peek(String key) {
        return Optional.ofNullable(cache.peek(requireNonNull(key, "key")));
    }

    /** {@return how many agents are cached} */
    public int size() {
        return cache.size();
    }

    /**
     * Evicts the agent for {@code key} unless it is mid-turn: it leaves the cache now, and its soft
     * teardown runs on the housekeeping executor. An unknown key does nothing. Never waits.
     *
     * @param key the session key
     * @return whether the agent was evicted, was busy (mid-turn) or was not cached; with the
     *     eviction's teardown if it was evicted
     */
    public EvictionResult evict(String key) {
        requireNonNull(key, "key");
        List<AgentCache.Entry> left = new ArrayList<>(1);
        AgentCache.Removal removal = cache.removeIfIdle(key, left);
        switch (removal) {
            case REMOVED:
                return EvictionResult.of(key, EvictionResult.Status.EVICTED, evictRemoved(left.get(0), "explicit"));
            case BUSY:
                return EvictionResult.of(key, EvictionResult.Status.BUSY, null);
            case NOT_CACHED:
                return EvictionResult.of(key, EvictionResult.Status.NOT_CACHED, null);
            default:
                throw new IllegalStateException("unknown removal " + removal);
        }
    }

    /**
     * Evicts every agent that is not mid-turn and has been idle for the idle TTL, by the gateway's
     * ticker. The teardowns run on the housekeeping executor; this call never waits for them.
     *
     * @return the keys evicted
     */
    public List<String> sweepIdle() {
        lastSweepNanos.set(ticker.read());
        if (beforeEviction != null) {
            beforeEviction.retry();
        }
        List<AgentCache.Entry> idle = cache.removeIdle(idleSweepSkips);
        evictAll(idle, "idle for " + idleTtl);
        List<String> keys = new ArrayList<>(idle.size());
        for (AgentCache.Entry e : idle) {
            keys.add(e.key);
        }
        return keys;
    }

    // ---- session boundaries --------------------------------------------------------------------

    /**
     * The {@code /reset} (and {@code /new}, and session expiry) cleanup: takes the agent for
     * {@code key} out of the cache, even mid-turn (a turn's later writes are rejected and counted),
     * hard-closes it through the cleanup chokepoint on the housekeeping executor, and waits at most
     * the reset timeout for it. On timeout it logs and returns: the close goes on in the background
     * and still owns the agent, so the eviction that follows (and any other) leaves the providers
     * to it. An interrupt ends the wait early with the flag restored. An unknown key does nothing.
     * A reset of a cached agent is recorded as one {@code dev.memlife.Reset} flight-recorder event.
     *
     * @param key the session key
     * @return whether the close finished, timed out (it goes on) or failed, or that nothing was
     *     cached for the key; with the close's result when it finished
     */
    public ResetResult reset(String key) {
        requireNonNull(key, "key");
        AgentCache.Entry entry = cache.remove(key);
        if (entry == null) {
            return ResetResult.notCached(key);
        }
        Events.Reset event = new Events.Reset();
        event.begin();
        CompletableFuture<TeardownReport> close = hardClose(entry, "reset");
        TeardownReport result = null;
        ResetResult.Status status;
        try {
            result = Deadline.after(ticker, resetTimeout).get(close);
            status = ResetResult.Status.CLOSED;
        } catch (TimeoutException e) {
            status = ResetResult.Status.TIMED_OUT;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            status = ResetResult.Status.TIMED_OUT;
        } catch (ExecutionException e) {
            LOG.warn("reset of '{}': the hard close of {} failed", key, entry.agent, e.getCause());
            status = ResetResult.Status.FAILED;
        }
        if (status == ResetResult.Status.TIMED_OUT) {
            LOG.warn("reset of '{}': cleanup of {} did not finish within {} ms; it goes on in the background and "
                    + "still owns the agent's teardown", key, entry.agent, resetTimeout.toMillis());
        }
        event.end();
        if (event.shouldCommit()) {
            event.gateway = name;
            event.key = key;
            event.agent = entry.agent.name();
            event.status = status.name();
            event.commit();
        }
        return ResetResult.of(key, status, result, close, evictRemoved(entry, "after reset"));
    }

    /**
     * {@link #stop()}, for try-with-resources and frameworks that close what they own: bounded by
     * the builder's stop timeout. Idempotent.
     */
    @Override
    public void close() {
        stop();
    }

    /**
     * {@link #stop(Duration)} with the builder's stop timeout.
     *
     * @return the report of the stop (the first stop's, if the gateway was already stopped)
     */
    public GatewayStopReport stop() {
        return stop(stopTimeout);
    }

    /**
     * Stops the gateway: no agent can be leased or cached any more; every cached agent, busy or
     * not, is hard-closed through the cleanup chokepoint, and this call waits for all of them, then
     * for the housekeeping executor's remaining work (resets and evictions still running), under
     * one shared deadline {@code budget} from now. Whatever has not finished by then goes on
     * detached (daemon threads) and is named in the report. An interrupt ends the waits early, with
     * the flag restored.
     *
     * <p>Idempotent: a later or concurrent call waits for the first stop and returns its report.
     *
     * @param budget the shared deadline of the whole stop, from now
     * @return the report: the agents closed, and whatever had not finished by the deadline
     */
    @Override
    public GatewayStopReport stop(Duration budget) {
        requireNonNull(budget, "budget");
        if (!state.compareAndSet(State.RUNNING, State.STOPPING)) {
            return stopReport.join();
        }
        try {
            GatewayStopReport report = new GatewayStop(cache, this::keptAgents, housekeeping, this::teardownAtStop,
                    budget, ticker).run();
            state.set(State.STOPPED);
            stopReport.complete(report);
            LOG.info("agent gateway stopped: {}", report);
            return report;
        } catch (RuntimeException | Error e) {
            state.set(State.STOPPED);
            stopReport.completeExceptionally(e);
            throw e;
        }
    }

    /** {@return whether {@link #stop} has been called} */
    public boolean isStopped() {
        return state.get() != State.RUNNING;
    }

    // ---- machinery -----------------------------------------------------------------------------

    /**
     * The cleanup chokepoint: the one method every session-ending path tears an agent down with.
     * Claims the agent's {@link TeardownMode#CLOSE hard close} on this thread and runs it on the
     * housekeeping executor: flush, extract, shut down.
     */
    private CompletableFuture<TeardownReport> hardClose(AgentCache.Entry entry, String why) {
        return teardown(entry, TeardownMode.CLOSE, why);
    }

    /** The stop's teardown of one agent, cached or kept; a kept agent's eviction ends with it. */
    private void teardownAtStop(AgentCache.Entry entry) {
        CompletableFuture<TeardownReport> teardown = teardown(entry, stopMode, "gateway stop");
        CompletableFuture<TeardownReport> eviction = beforeEviction == null ? null : beforeEviction.take(entry);
        if (eviction != null) {
            CommitBeforeEviction.propagate(teardown, eviction);
        }
    }

    private List<AgentCache.Entry> keptAgents() {
        return beforeEviction == null ? List.of() : beforeEviction.entries();
    }

    /** Claims the agent's teardown in {@code mode} on this thread and runs it on the housekeeping executor. */
    private CompletableFuture<TeardownReport> teardown(AgentCache.Entry entry, TeardownMode mode, String why) {
        LOG.debug("tearing agent {} of '{}' down, {} ({})", entry.agent, entry.key, mode, why);
        return counted(entry, mode, entry.agent.teardownAsync(mode, housekeeping));
    }

    /**
     * Soft-tears-down an entry that already left the cache, off this thread, then clears its
     * transcript; with {@link Builder#beforeEviction}, after committing the session's work ({@link
     * CommitBeforeEviction}).
     */
    private CompletableFuture<TeardownReport> evictRemoved(AgentCache.Entry entry, String why) {
        LOG.debug("evicting agent {} of '{}' ({})", entry.agent, entry.key, why);
        if (beforeEviction == null || !entry.agent.isOpen()) {
            return softTeardown(entry, housekeeping);
        }
        return beforeEviction.evict(entry);
    }

    private CompletableFuture<TeardownReport> softTeardown(AgentCache.Entry entry, Executor executor) {
        return softTeardown(entry, evictionMode, executor);
    }

    private CompletableFuture<TeardownReport> softTeardown(AgentCache.Entry entry, TeardownMode mode,
            Executor executor) {
        return counted(entry, mode, entry.agent.teardownAsync(mode, executor))
                .whenComplete((result, failure) -> entry.agent.clearTranscript());
    }

    /**
     * Counts a teardown of a departed entry once it has finished, if it ran; and retires the entry
     * from the figures once its agent's owning teardown, this one or another, has finished.
     */
    private CompletableFuture<TeardownReport> counted(AgentCache.Entry entry, TeardownMode mode,
            CompletableFuture<TeardownReport> teardown) {
        teardown.whenComplete((result, failure) -> teardowns.count(mode, result, failure));
        entry.agent.whenTornDown().whenComplete((result, failure) -> cache.retire(entry,
                entry.agent.memory().figures()));
        return teardown;
    }

    /**
     * The gateway's figures now: agents cached, leased and being torn down, the write figures of
     * all its agents together, and the teardowns it ran by mode and outcome. Reads every agent's
     * figures, one short lock each: cheap enough for a metrics scrape, not for every request.
     *
     * @return a snapshot of this gateway's figures
     */
    public GatewayFigures figures() {
        AgentCache.Census census = cache.census();
        WriteFigures writes = census.retired();
        for (AgentMemory agent : census.live()) {
            writes = writes.plus(agent.memory().figures());
        }
        return new GatewayFigures(census.cached(), census.leased(), census.departing(), writes, teardowns.snapshot());
    }

    private void evictAll(List<AgentCache.Entry> entries, String why) {
        for (AgentCache.Entry e : entries) {
            evictRemoved(e, why);
        }
    }

    private static ThreadPoolExecutor newHousekeeping(String name, int threads, ThreadFactory custom) {
        // A factory that returns null must throw (Threads does): with a null thread the executor would queue a
        // task no worker ever runs, and a teardown handed to it would never happen (nor fall back to the caller).
        ThreadFactory factory = Threads.numbered("memlife-housekeeping-" + name).orUser(custom);
        ThreadPoolExecutor executor = new ThreadPoolExecutor(threads, threads, HOUSEKEEPING_KEEP_ALIVE_SECONDS,
                TimeUnit.SECONDS, new LinkedBlockingQueue<>(), factory);
        executor.allowCoreThreadTimeOut(true); // an idle gateway holds no threads
        return executor;
    }

    private void maybeSweep() {
        long last = lastSweepNanos.get();
        long now = ticker.read();
        if (now - last >= sweepIntervalNanos && lastSweepNanos.compareAndSet(last, now)) {
            sweepIdle();
        }
    }

    /**
     * Settings for an {@link AgentGateway}. Setters check their argument; {@link #build()} copies
     * them, so a reused builder never changes a gateway it already built. Not thread-safe.
     */
    public static final class Builder extends OwnerBuilder<Builder> {

        /** Default most agents cached; past it the least recently used idle agent is evicted. */
        public static final int DEFAULT_MAX_AGENTS = 128;
        /** Default idle time after which the sweep evicts an agent: 1 h. */
        public static final Duration DEFAULT_IDLE_TTL = Duration.ofHours(1);
        /** Default least time between two idle sweeps run by {@code acquire} and {@code put}. */
        public static final Duration DEFAULT_SWEEP_INTERVAL = Duration.ofMinutes(1);
        /** Default longest wait of {@code reset} for the hard close. */
        public static final Duration DEFAULT_RESET_TIMEOUT = Duration.ofSeconds(30);
        /** Default shared deadline of {@code stop}. */
        public static final Duration DEFAULT_STOP_TIMEOUT = Duration.ofSeconds(30);
        /** Default number of housekeeping threads. */
        public static final int DEFAULT_HOUSEKEEPING_THREADS = 4;

        private String name = "gateway";
        private int maxAgents = DEFAULT_MAX_AGENTS;
        private Duration idleTtl = DEFAULT_IDLE_TTL;
        private Duration sweepInterval = DEFAULT_SWEEP_INTERVAL;
        private Duration resetTimeout = DEFAULT_RESET_TIMEOUT;
        private Duration stopTimeout = DEFAULT_STOP_TIMEOUT;
        private int housekeepingThreads = DEFAULT_HOUSEKEEPING_THREADS;
        private TeardownMode evictionMode = TeardownMode.COMMIT_THEN_RELEASE;
        private TeardownMode stopMode = TeardownMode.CLOSE;
        private BiPredicate<String, AgentMemory> beforeEviction;
        private Predicate<String> idleSweepSkips = key -> false;
        private Function<? super String, ? extends AgentMemory> agentFactory;

        private Builder() {}

        /**
         * The gateway's name in thread names and logs; default {@code gateway}.
         *
         * @param name the name; not blank
         * @return this builder
         */
        public Builder name(String name) {
            this.name = Checks.notBlank(name, "name");
            return this;
        }

        /**
         * The most agents cached; default {@value #DEFAULT_MAX_AGENTS}. Busy agents may exceed it.
         *
         * @param maxAgents the cap; at least 1
         * @return this builder
         */
        public Builder maxAgents(int maxAgents) {
            this.maxAgents = Checks.atLeast(maxAgents, 1, "maxAgents");
            return this;
        }

        /**
         * How long an agent may sit idle before the sweep evicts it; default 1 h.
         *
         * @param idleTtl the idle time; positive
         * @return this builder
         */
        public Builder idleTtl(Duration idleTtl) {
            this.idleTtl = Checks.positive(idleTtl, "idleTtl");
            return this;
        }

        /**
         * The least time between two idle sweeps that {@code acquire} and {@code put} run on the
         * caller's way; default 1 min. {@link
         * AgentGateway#sweepIdle()} can be called at any time regardless.
         *
         * @param sweepInterval the least time between two sweeps; positive
         * @return this builder
         */
        public Builder sweepInterval(Duration sweepInterval) {
            this.sweepInterval = Checks.positive(sweepInterval, "sweepInterval");
            return this;
        }

        /**
         * How long {@code reset} waits for the hard close; default 30 s.
         *
         * @param resetTimeout the longest wait; positive
         * @return this builder
         */
        public Builder resetTimeout(Duration resetTimeout) {
            this.resetTimeout = Checks.positive(resetTimeout, "resetTimeout");
            return this;
        }

        /**
         * The shared deadline of {@link AgentGateway#stop()}; default 30 s.
         *
         * @param stopTimeout the deadline; positive
         * @return this builder
         */
        public Builder stopTimeout(Duration stopTimeout) {
            this.stopTimeout = Checks.positive(stopTimeout, "stopTimeout");
            return this;
        }

        /**
         * How many housekeeping threads run teardowns; default {@value #DEFAULT_HOUSEKEEPING_THREADS}.
         *
         * @param housekeepingThreads the number of threads; at least 1
         * @return this builder
         */
        public Builder housekeepingThreads(int housekeepingThreads) {
            this.housekeepingThreads = Checks.atLeast(housekeepingThreads, 1, "housekeepingThreads");
            return this;
        }

        /**
         * How evicted agents are torn down: {@link TeardownMode#COMMIT_THEN_RELEASE} (the default:
         * extraction runs before the providers shut down) or {@link TeardownMode#RELEASE} (no
         * extraction, for hosts that rebuild an evicted agent and extract at the session's end).
         *
         * @param evictionMode the soft teardown mode of evictions
         * @return this builder
         * @throws IllegalArgumentException for {@link TeardownMode#CLOSE}: eviction is soft
         */
        public Builder evictionMode(TeardownMode evictionMode) {
            requireNonNull(evictionMode, "evictionMode");
            if (evictionMode == TeardownMode.CLOSE) {
                throw new IllegalArgumentException("evictionMode must be RELEASE or COMMIT_THEN_RELEASE, was CLOSE");
            }
            this.evictionMode = evictionMode;
            return this;
        }

        /**
         * What {@link AgentGateway#stop} does to the agents it still caches. {@link TeardownMode#CLOSE}
         * (the default) ends every conversation: flush, end-of-session extraction, shut down, as if
         * each session had ended. {@link TeardownMode#RELEASE} keeps them resumable: flush and shut
         * down, no extraction and no session end, so the next process (a rolling deploy's new
         * replica) picks each conversation up where it was. {@link TeardownMode#COMMIT_THEN_RELEASE}
         * extracts without marking the sessions ended.
         *
         * @param stopMode the teardown mode of a stop
         * @return this builder
         */
        public Builder stopMode(TeardownMode stopMode) {
            this.stopMode = requireNonNull(stopMode, "stopMode");
            return this;
        }

        /**
         * Commits a session's work before its agent is evicted (LRU cap, idle sweep, {@link
         * AgentGateway#evict}), on the housekeeping executor: {@code commit} is given the session key
         * and the agent, and answers whether the session is clean now. If it is not (a commit
         * failed, or is still in flight elsewhere), the agent is kept open, its providers alive, and
         * evicted at a later sweep once the session is committed, or at the gateway's stop. Default:
         * none, evict at once. With a {@code SessionCommitTracker}, pass {@code
         * tracker.commitBeforeEviction(timeout)}, as hermes-webui commits before it evicts.
         *
         * @param commit commits the session's work and answers whether it is clean
         * @return this builder
         */
        public Builder beforeEviction(BiPredicate<String, AgentMemory> commit) {
            this.beforeEviction = requireNonNull(commit, "commit");
            return this;
        }

        /**
         * Sessions the idle sweep leaves alone, because another path will finalize them with their
         * live transcript (their expiry, as hermes-agent's gateway leaves a finalizable, unexpired
         * session to its expiry watcher). Asked at each sweep, outside the gateway's locks; default:
         * none.
         *
         * @param skip true for a session key the sweep must not evict
         * @return this builder
         */
        public Builder idleSweepSkips(Predicate<String> skip) {
            this.idleSweepSkips = requireNonNull(skip, "skip");
            return this;
        }

        /**
         * How {@link #acquire(String)} makes the agent for a session key that has none cached (for
         * example a manager per session that uses the application's one store); none by default,
         * when every caller passes its own to {@link #acquire(String, Function)}. Called on the
         * acquiring thread, outside the gateway's locks.
         *
         * @param factory makes the agent for a key; must not return null
         * @return this builder
         */
        public Builder agentFactory(Function<? super String, ? extends AgentMemory> factory) {
            this.agentFactory = requireNonNull(factory, "factory");
            return this;
        }

        /** {@return a new gateway with these settings}; its housekeeping threads start when first needed. */
        public AgentGateway build() {
            return new AgentGateway(this);
        }
    }
}
