package dev.memlife;

import static java.util.Objects.requireNonNull;

import dev.memlife.internal.Checks;
import dev.memlife.internal.Threads;
import dev.memlife.internal.ThrottledLog;
import dev.memlife.internal.WriteAheadLog;
import dev.memlife.internal.WriteAheadLogs;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fans one agent's memory work out to its {@link MemoryProvider providers}, and makes sure every
 * write handed to it is delivered, or counted and reported.
 *
 * <p>Writes ({@link #syncAll}) go through a bounded queue to one writer thread per manager, which
 * hands them to the providers in FIFO order, one batch at a time; the caller never waits on a
 * provider. Every other hook runs on the caller's thread. Every provider call is isolated: one
 * provider's exception is logged (throttled) and counted and never stops the next provider or the
 * writer. {@link #flushPending} is a barrier for the writes accepted before it; {@link
 * #stop()} drains the queue within a deadline, shuts the providers down and reports what
 * happened to every write.
 *
 * <p><b>Provider failures.</b> Whatever a provider throws from a hook, an {@link Error} included
 * ({@link StackOverflowError} and {@link OutOfMemoryError} too), is that provider's failure of
 * that call: logged, counted, and never passed to the next provider, the writer or the caller. By
 * the time memlife catches it the provider's frames are gone, so the stack is usable again and
 * what the provider allocated is garbage. If the heap is really exhausted, the next provider fails
 * the same way and is counted the same way; no write is ever counted as failed for a provider
 * that did not fail it. No hook of a provider runs after that provider's {@code shutdown()}.
 *
 * <p><b>How it is built.</b> This class is the public contract and little else: each method checks
 * its arguments and that the manager runs, then hands the work to one package-private part: {@link
 * ProviderRegistry} (who is registered, and their tools), {@link ProviderHooks} (the fan-outs on
 * the caller's thread), {@link Writer} (the queue and its writer thread), {@link Prefetcher},
 * {@link LogReplay} (the spool's replay) and {@link ManagerShutdown} (the stop and its report).
 * It runs past 500 lines because the hermes-agent contract it mirrors has some twenty hooks, each
 * with what it promises; its code is a few lines a method.
 *
 * <p>This class is thread-safe: every method may be called from any thread at any time.
 */
public final class MemoryManager implements Stoppable<DrainReport>, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(MemoryManager.class);
    private static final AtomicInteger INSTANCES = new AtomicInteger();

    private final String name;
    private final long enqueueTimeoutNanos;
    private final long prefetchTimeoutNanos;
    private final ThrottledLog warnings = new ThrottledLog(LOG);
    private final ProviderRegistry providers;
    private final ProviderHooks hooks;
    private final Writer writer;
    private final Prefetcher prefetcher;
    private final LogReplay replay;
    private final ManagerShutdown shutdown;
    /** Turns with blank user content: not writes, never queued, but counted. */
    private final AtomicLong blankTurns = new AtomicLong();

    /** {@return a manager with every default of {@link Builder}} */
    public static MemoryManager create() {
        return builder().build();
    }

    private MemoryManager(Builder b) {
        this.name = b.name != null ? b.name : String.valueOf(INSTANCES.incrementAndGet());
        this.enqueueTimeoutNanos = b.enqueueTimeout.toNanos();
        this.prefetchTimeoutNanos = b.prefetchTimeout.toNanos();
        ProviderCalls calls = new ProviderCalls(name);
        this.providers = new ProviderRegistry(name, calls);
        String idPrefix = UUID.randomUUID().toString();
        WriteAheadLog log = b.spool;
        if (log != null) {
            log.attach(name, idPrefix, Threads.named("memlife-spool-" + name).orUser(b.threadFactory().orElse(null)));
        }
        ThreadFactory threads = b.threadFactory().orElse(null);
        this.writer = new Writer(new WriterContext(name, idPrefix, new WriterContext.Settings(b.queueCapacity,
                b.maxBatchSize, Checks.saturatedNanos(b.writerKeepAlive), WriteLoop.LINGER_NANOS),
                Threads.named("memlife-writer-" + name).orUser(threads), b.ticker(), warnings, calls,
                providers::current, log));
        this.prefetcher = new Prefetcher(name, Threads.numbered("memlife-prefetch-" + name).orUser(threads),
                b.ticker(), calls, warnings);
        this.hooks = new ProviderHooks(providers, calls, writer);
        this.replay = new LogReplay(name, log, writer, providers);
        this.shutdown = new ManagerShutdown(this, writer, prefetcher, providers, calls, warnings, log != null,
                blankTurns::get, b);
    }

    /** {@return a builder for a manager with settings other than the defaults} */
    public static Builder builder() {
        return new Builder();
    }

    /** {@return this manager's name, as it appears in thread names, logs and exceptions} */
    public String name() {
        return name;
    }

    // ---- registration ------------------------------------------------------------------------

    /**
     * Registers a provider this manager <em>owns</em>: the manager's shutdown shuts it down. A
     * provider whose {@link MemoryProvider#isAvailable()} is false (or throws) is not registered.
     * Its tools are indexed for {@link #handleToolCall}; a tool name another provider already offers
     * keeps the first provider and is logged. A provider instance has one owner at a time: to share
     * one (a store the application built for many agents), register it with {@link #useProvider}.
     *
     * @param provider the provider; its name must be unique in this manager
     * @return true if the provider was registered, false if it is not available
     * @throws NullPointerException if {@code provider} or its name is null
     * @throws IllegalArgumentException if its name is blank, another provider of this manager has
     *     the same name, or another manager owns this instance (it would shut it down under this one)
     * @throws StoppedException if shutdown has begun
     */
    public boolean addProvider(MemoryProvider provider) {
        return providers.register(provider, this, shutdown::checkRunning);
    }

    /**
     * Registers a provider this manager <em>uses</em> but does not own, such as one store shared by
     * every agent of a service: its hooks run exactly as an owned provider's do, but the manager's
     * shutdown does not shut it down; it only stops calling it. Its lifecycle is the application's:
     * shut it down (or {@code close()} it) once every manager that uses it is shut down.
     *
     * @param provider the shared provider; its name must be unique in this manager
     * @return true if the provider was registered, false if it is not available
     * @throws NullPointerException if {@code provider} or its name is null
     * @throws IllegalArgumentException if its name is blank or another provider of this manager has
     *     the same name
     * @throws StoppedException if shutdown has begun
     */
    public boolean useProvider(MemoryProvider provider) {
        return providers.register(provider, null, shutdown::checkRunning);
    }

    /** {@return the registered providers' names, in registration order} */
    public List<String> providerNames() {
        return providers.names();
    }

    // ---- caller-thread hooks -------------------------------------------------------------------

    /**
     * Calls every provider's {@link MemoryProvider#initialize} on this thread, in registration order.
     *
     * @param sessionId the session the agent starts or resumes
     * @throws StoppedException if shutdown has begun
     */
    public void initializeAll(String sessionId) {
        requireNonNull(sessionId, "sessionId");
        checkRunning("initializeAll");
        hooks.initialize(sessionId);
    }

    /**
     * The providers' system-prompt blocks, in registration order, joined by blank lines; blank
     * blocks and failing providers are left out. Runs on this thread.
     *
     * @return the joined blocks; empty if there are none
     */
    public String buildSystemPrompt() {
        checkRunning("buildSystemPrompt");
        return hooks.systemPrompt();
    }

    /**
     * Recalls memory for a turn: every provider's {@link MemoryProvider#prefetch} runs at once on a
     * prefetch thread, and this call waits at most the prefetch timeout for all of them; a provider
     * still running then is interrupted and left out. A provider whose earlier prefetch has not
     * returned yet (it ignored the interrupt) is skipped, and logged, until it does: a stuck
     * provider holds one prefetch thread and never holds up the others. If {@link
     * #queuePrefetchAll} started this recall for the same query and session, its results are used.
     * An interrupt of the caller ends the wait early, with the interrupt flag restored.
     *
     * @param query what the turn asks, for the providers to recall against
     * @param sessionId the session
     * @return the non-blank blocks in registration order, joined by blank lines
     */
    public String prefetchAll(String query, String sessionId) {
        requireNonNull(query, "query");
        requireNonNull(sessionId, "sessionId");
        checkRunning("prefetchAll");
        return prefetcher.prefetch(List.of(providers.current()), query, sessionId, prefetchTimeoutNanos);
    }

    /**
     * Starts the next turn's recall now, while the user is still typing, and returns at once: the
     * next {@link #prefetchAll} with the same query and session takes its results, waiting for
     * them no longer than the prefetch timeout. Any other {@code prefetchAll}, or a later call of
     * this method, discards it (its calls are interrupted). Mirrors hermes-agent's {@code
     * queue_prefetch_all}.
     *
     * @param query what the next turn is expected to ask
     * @param sessionId the session
     * @throws StoppedException if the manager has been shut down
     */
    public void queuePrefetchAll(String query, String sessionId) {
        requireNonNull(query, "query");
        requireNonNull(sessionId, "sessionId");
        checkRunning("queuePrefetchAll");
        prefetcher.queue(List.of(providers.current()), query, sessionId);
    }

    /**
     * A turn begins: calls every provider's {@link MemoryProvider#onTurnStart} on this thread, in
     * registration order, before the turn's {@link #prefetchAll}. A provider that throws is logged
     * and skipped. Mirrors hermes-agent's {@code on_turn_start}.
     *
     * @param turnNumber the turn's number in the session, from 1
     * @param message what the user said
     * @throws IllegalArgumentException if {@code turnNumber} is less than 1
     * @throws StoppedException if the manager has been shut down
     */
    public void onTurnStart(int turnNumber, String message) {
        Checks.atLeast(turnNumber, 1, "turnNumber");
        requireNonNull(message, "message");
        checkRunning("onTurnStart");
        hooks.onTurnStart(turnNumber, message);
    }

    /**
     * Before the conversation is compressed: every provider's {@link MemoryProvider#onPreCompress}
     * checkpoint, on this thread, in registration order, with an immutable copy of {@code
     * messages}. Their non-blank texts, joined by blank lines, are for the compression summary's
     * prompt. A provider that throws is logged and left out. Mirrors hermes-agent's {@code
     * on_pre_compress}.
     *
     * @param messages the messages about to be compressed away
     * @return the providers' texts for the summary; empty if there are none
     * @throws StoppedException if the manager has been shut down
     */
    public String onPreCompress(List<Message> messages) {
        List<Message> copy = copyMessages(messages);
        checkRunning("onPreCompress");
        return hooks.onPreCompress(copy);
    }

    /**
     * The agent's built-in memory tool wrote something: every provider's {@link
     * MemoryProvider#onMemoryWrite}, on this thread, so the providers can mirror it. A provider
     * that throws is logged and skipped. Mirrors hermes-agent's {@code on_memory_write}.
     *
     * @param action what the tool did, such as {@code add}, {@code replace} or {@code remove}
     * @param target which memory it wrote to
     * @param content what it wrote
     * @throws StoppedException if the manager has been shut down
     */
    public void onMemoryWrite(String action, String target, String content) {
        requireNonNull(action, "action");
        requireNonNull(target, "target");
        requireNonNull(content, "content");
        checkRunning("onMemoryWrite");
        hooks.onMemoryWrite(action, target, content);
    }

    /**
     * A delegated sub-agent finished: every provider's {@link MemoryProvider#onDelegation}, on
     * this thread. A provider that throws is logged and skipped. Mirrors hermes-agent's {@code
     * on_delegation}.
     *
     * @param task what the sub-agent was asked
     * @param result what it answered
     * @param childSessionId the sub-agent's session, or an empty string
     * @throws StoppedException if the manager has been shut down
     */
    public void onDelegation(String task, String result, String childSessionId) {
        requireNonNull(task, "task");
        requireNonNull(result, "result");
        requireNonNull(childSessionId, "childSessionId");
        checkRunning("onDelegation");
        hooks.onDelegation(task, result, childSessionId);
    }

    /**
     * The registered provider named {@code name}, owned or used.
     *
     * @param name the provider's name
     * @return the provider; empty if none of that name is registered
     */
    public Optional<MemoryProvider> getProvider(String name) {
        return providers.get(requireNonNull(name, "name"));
    }

    /**
     * Whether a registered provider offers {@code tool}, so {@link #handleToolCall} routes it.
     *
     * @param tool the tool's name
     * @return true if a provider offers it
     */
    public boolean hasTool(String tool) {
        return providers.hasTool(requireNonNull(tool, "tool"));
    }

    /** {@return every registered tool, first provider first; a duplicate tool name is listed once} */
    public List<ToolSchema> toolSchemas() {
        return providers.toolSchemas();
    }

    /**
     * Routes a tool call to the provider that offers the tool, on this thread. If the provider
     * throws, the failure is logged and returned to the model as a JSON error object; an unknown
     * tool is answered the same way, for the model to see.
     *
     * @param tool the tool's name, as in {@link #toolSchemas()}
     * @param args the arguments the model passed
     * @return the provider's answer; a JSON error object if it threw, or if no provider offers
     *     {@code tool} ({@code {"error":"No memory provider handles tool 'x'"}}, what the model sees
     *     from hermes-agent's {@code handle_tool_call}), never an exception at the agent loop
     */
    public String handleToolCall(String tool, Map<String, Object> args) {
        requireNonNull(tool, "tool");
        requireNonNull(args, "args");
        checkRunning("handleToolCall");
        return providers.callTool(tool, args);
    }

    /**
     * End-of-session extraction: calls every provider's {@link MemoryProvider#onSessionEnd(String,
     * List)} synchronously on this thread, in registration order, with the session that ended (the
     * one {@link #initializeAll} was last called with, else the session of the last write the writer
     * finished, else {@code ""}) and an immutable copy of {@code messages}. Waits for as long as the
     * providers take.
     *
     * @param messages the session's transcript
     * @throws NullPointerException if {@code messages} or one of its elements is null
     * @throws StoppedException if shutdown has begun: the providers can no longer extract
     */
    public void onSessionEnd(List<Message> messages) {
        List<Message> transcript = copyMessages(messages);
        checkRunning("onSessionEnd");
        hooks.onSessionEnd(transcript);
    }

    /**
     * Moves the agent to another session now: every provider's {@link
     * MemoryProvider#onSessionSwitch}, on this thread. Not ordered with the writes still queued
     * (they may reach the providers after the switch); to end the old session first, in order, use
     * {@link #commitSessionBoundaryAsync}. Mirrors hermes-agent's {@code on_session_switch}.
     *
     * @param newSessionId the session the agent moves to; blank does nothing, as upstream
     * @param parentSessionId the session it comes from, or an empty string
     * @param reset true if the new session starts afresh
     * @throws StoppedException if the manager has been shut down
     */
    public void onSessionSwitch(String newSessionId, String parentSessionId, boolean reset) {
        requireNonNull(newSessionId, "newSessionId");
        requireNonNull(parentSessionId, "parentSessionId");
        checkRunning("onSessionSwitch");
        hooks.onSessionSwitch(newSessionId, parentSessionId, reset);
    }

    /**
     * The session boundary of {@code /new}: ends the current session and moves the agent to {@code
     * newSessionId}, in order on the writer, and returns at once. Every write accepted before this
     * call reaches the providers first; then each provider's extraction of the old session ({@link
     * MemoryProvider#onSessionEnd(String, List)}, with the session the manager was initialized or
     * last switched to, else that of its last write); then each provider's {@link
     * MemoryProvider#onSessionSwitch} with {@code reset} true; only then does any write accepted
     * after this call reach a provider. A provider that fails either step is logged and skipped,
     * and the switch runs even where extraction failed. With no provider it does nothing. Mirrors
     * hermes-agent's {@code commit_session_boundary_async}.
     *
     * @param messages the old session's transcript (copied now)
     * @param newSessionId the session the agent moves to
     * @param parentSessionId the session it comes from, or an empty string
     * @return completes once the boundary has run; exceptionally with {@link StoppedException} if
     *     shutdown came before it could (a drain waits for pending boundaries within its deadline)
     * @throws StoppedException if the manager has been shut down
     */
    public CompletionStage<Void> commitSessionBoundaryAsync(List<Message> messages, String newSessionId,
            String parentSessionId) {
        List<Message> transcript = copyMessages(messages);
        requireNonNull(newSessionId, "newSessionId");
        requireNonNull(parentSessionId, "parentSessionId");
        checkRunning("commitSessionBoundaryAsync");
        return hooks.commitSessionBoundary(transcript, newSessionId, parentSessionId);
    }

    // ---- writes ----------------------------------------------------------------------------------

    /**
     * {@link #syncAll(String, String, String, List)} without the turn's messages.
     *
     * @param userContent what the user said
     * @param assistantContent what the agent answered
     * @param sessionId the session the turn belongs to
     * @return as {@link #syncAll(String, String, String, List)}
     */
    public boolean syncAll(String userContent, String assistantContent, String sessionId) {
        return enqueue(userContent, assistantContent, sessionId, List.of());
    }

    /**
     * Queues one completed turn for every registered provider and returns without waiting for any
     * of them. The write gets a unique {@link Turn#writeId()} and goes to the providers registered
     * now. A blank {@code userContent} is not a turn: nothing is queued and false is returned.
     *
     * <p>Waits only when the queue is full, for at most the builder's enqueue timeout.
     *
     * @param userContent what the user said; blank turns are counted, not written
     * @param assistantContent what the agent answered
     * @param sessionId the session the turn belongs to
     * @param messages the turn's messages, copied; may be empty
     * @return true if the write was accepted; false if it was blank (counted as a blank turn, and
     *     logged when the assistant reply was not blank), or rejected because shutdown has begun
     *     (then it is counted in the {@link DrainReport} as rejected, and logged)
     * @throws QueueFullException if the queue stayed full for the whole enqueue timeout (the write is
     *     counted as rejected); from a provider on the writer thread, at once when the queue is full
     * @throws java.util.concurrent.RejectedExecutionException if no writer thread could be started
     *     (the write is counted as rejected). Whatever {@code syncAll} throws, nothing was queued:
     *     retrying cannot store a turn twice.
     */
    public boolean syncAll(String userContent, String assistantContent, String sessionId, List<Message> messages) {
        return enqueue(userContent, assistantContent, sessionId, copyMessages(messages));
    }

    private boolean enqueue(String user, String assistant, String sessionId, List<Message> messages) {
        requireNonNull(user, "userContent");
        requireNonNull(assistant, "assistantContent");
        requireNonNull(sessionId, "sessionId");
        if (user.isBlank()) {
            blankTurns.incrementAndGet();
            if (!assistant.isBlank()) {
                warnings.warn(name + "/blank-user", "memory manager '" + name + "': a turn for session '" + sessionId
                        + "' with blank user content was not written, though it had an assistant reply of "
                        + assistant.length() + " chars; counted in the report's blankTurns", null);
            }
            return false;
        }
        if (replay.dueBefore()) {
            replay.beforeFirstWrite(shutdown::checkRunning);
        }
        if (writer.enqueue(sessionId, user, assistant, messages, providers.current(), enqueueTimeoutNanos)) {
            return true;
        }
        warnings.warn(name + "/late-write", "memory manager '" + name + "' is shut down: a write for session '"
                + sessionId + "' was rejected and counted", null);
        return false;
    }

    /**
     * {@link #syncAll(String, String, String, List)}, then waits until the write is durable in the
     * spool: for a caller who must not answer the user before the turn would survive a crash. The
     * wait is a group commit: callers waiting at the same time share one force of the disk.
     *
     * @param userContent what the user said
     * @param assistantContent what the agent answered
     * @param sessionId the session the turn belongs to
     * @param messages the turn's messages, copied; may be empty
     * @param timeout the longest wait for the disk
     * @return {@link Durability#DURABLE} once the write is on disk; {@link Durability#REJECTED} if
     *     it was not accepted (where {@code syncAll} returns false): a retry is safe; {@link
     *     Durability#NOT_YET_DURABLE} if it was accepted but the timeout passed, or the caller was
     *     interrupted (the flag restored), before it was forced: it stays queued, survives kill -9,
     *     and becomes durable with the next force, so it must not be retried
     * @throws IllegalStateException if the manager has no spool
     * @throws java.io.UncheckedIOException if the spool's disk failed
     * @throws QueueFullException as {@code syncAll}: nothing was queued
     */
    public Durability syncAllDurable(String userContent, String assistantContent, String sessionId,
            List<Message> messages, Duration timeout) {
        requireNonNull(timeout, "timeout");
        replay.checkLog("syncAllDurable");
        if (!syncAll(userContent, assistantContent, sessionId, messages)) {
            return Durability.REJECTED;
        }
        return awaitDurable(timeout) ? Durability.DURABLE : Durability.NOT_YET_DURABLE;
    }

    /**
     * A durability barrier: waits until every write accepted before this call is durable in the
     * spool (forced to disk), sharing the force with every other caller waiting at the same time.
     * A producer that writes many turns and then waits once pays one force for all of them.
     *
     * @param timeout the longest wait
     * @return true once durable; false on timeout or interrupt (the flag restored)
     * @throws IllegalStateException if the manager has no spool
     * @throws java.io.UncheckedIOException if the spool's disk failed: what was appended after its
     *     last good force is not durable (it is still queued for the providers)
     */
    public boolean awaitDurable(Duration timeout) {
        requireNonNull(timeout, "timeout");
        replay.checkLog("awaitDurable");
        return writer.awaitDurable(Checks.saturatedNanos(timeout));
    }

    /**
     * Replays what an earlier run left in the spool: every write not marked delivered, in its
     * original order and with its original write id and time, queued for the providers registered
     * now, before any new write. Runs once; the first {@code syncAll} with a provider registered
     * runs it too, so calling it is only needed to replay at start-up rather than with the first
     * turn. It keeps at most two batches ({@code maxBatchSize} each, or the queue's capacity if
     * less) queued ahead of the writer, so it returns once all but those are delivered, after as
     * long as the providers take; concurrent {@code syncAll} calls wait for it, but for a provider
     * writing back, whose write is queued at once. A torn tail in the spool is reported and cut
     * off, a corrupt record is reported with its offset and skipped, both counted in {@link
     * SpoolFigures}.
     *
     * @return how many writes were replayed; 0 if the replay had already run
     * @throws IllegalStateException if the manager has no spool, or no provider is registered
     *     (the writes would go nowhere), or a provider calls it while the replay runs
     * @throws StoppedException if shutdown has begun
     */
    public long replaySpool() {
        return replay.replay(shutdown::checkRunning);
    }

    /**
     * A barrier: waits until every write accepted before this call has been handed to every
     * provider (delivered, or failed and counted). Writes accepted after the call do not extend the
     * wait. Returns at once when nothing is pending, and without waiting when called from the
     * writer thread itself (a provider), where the barrier cannot be met. Never throws.
     *
     * @param timeout the longest time to wait
     * @return true if the barrier was met; false on timeout, on interrupt (the interrupt flag is
     *     restored), when shutdown abandoned one of the writes, or when called from the writer thread
     */
    public boolean flushPending(Duration timeout) {
        return writer.flush(timeout == null ? 0 : Checks.saturatedNanos(timeout));
    }

    /**
     * The write path's figures now: writes accepted, delivered, failed, abandoned and rejected,
     * the queue depth and its oldest write's age, batches and their sizes, the flushes that waited
     * and the drain, with the time they took. Cheap enough to poll (a metrics scrape; {@code
     * dev.memlife.micrometer.MemlifeMetrics} publishes them); nothing is added to {@code syncAll}
     * to keep them.
     *
     * @return a snapshot of this manager's figures
     */
    public WriteFigures figures() {
        return writer.figures();
    }

    /** {@return writes accepted but not yet handed to every provider: queued, or being written now} */
    public long pendingWrites() {
        return writer.pending();
    }

    // ---- shutdown --------------------------------------------------------------------------------

    /**
     * {@link #stop()}, for try-with-resources and frameworks that close what they own: bounded by
     * the builder's drain timeout plus its provider-shutdown timeout. Idempotent.
     */
    @Override
    public void close() {
        stop();
    }

    /**
     * Stops the manager with the builder's budgets: the queue drains until the drain timeout, then
     * the providers' {@code shutdown()} gets at most the provider-shutdown timeout; otherwise as
     * {@link #stop(Duration)}.
     *
     * @return what happened to every write this manager was handed
     */
    public DrainReport stop() {
        return shutdown.stopWithBuilderBudgets();
    }

    /**
     * Stops the manager within {@code budget}, whatever the providers do: stops accepting writes,
     * lets the queue keep draining in FIFO order, abandons what the writer has not started by the
     * drain deadline, then calls every provider's {@link MemoryProvider#shutdown()} once, in
     * reverse registration order. The drain deadline keeps a tenth of {@code budget} (at most the
     * builder's provider-shutdown timeout) for the providers' shutdown, which then waits what is
     * left, at most that timeout; so the call returns within {@code budget}, with its report, even
     * when a provider hangs in {@code shutdown()}. A provider still running a hook (a write past
     * the deadline, a detached extraction) is shut down when that hook returns, never under it: see
     * {@link DrainReport#providersShutDownLater()}.
     *
     * <p>Idempotent: a later or concurrent call returns the first call's report and calls no
     * provider again. A concurrent call with an earlier deadline brings the shared deadline
     * forward, so it returns within its own budget too. Called from a provider on the writer
     * thread, it does not wait for the queue (the writer cannot drain while it is inside this
     * call): the writes not started are abandoned at once and the one in progress is still
     * running. Called from a provider's own {@code shutdown()}, it returns at once with the report
     * as it stood before the providers' shutdown began (every provider listed as not shut down
     * yet), since the shutdown it is part of cannot finish first. An interrupt while draining ends
     * the drain early (the remaining writes are abandoned) and the interrupt flag is restored.
     * Never throws but for a null argument.
     *
     * @param budget the whole stop's budget: the providers' {@code shutdown()} get at most a tenth
     *     of it (and at most the provider-shutdown timeout), the queue the rest
     * @return what happened to every write this manager was handed
     */
    @Override
    public DrainReport stop(Duration budget) {
        return shutdown.stop(requireNonNull(budget, "budget"));
    }

    /** {@return whether {@link #stop} has been called} */
    public boolean isShutdown() {
        return shutdown.isShutdown();
    }

    /** {@return turns with blank user content handed to {@code syncAll} so far: not writes, never queued} */
    public long blankTurns() {
        return blankTurns.get();
    }

    /** {@return writes rejected so far: after shutdown began, or on a full queue} */
    public long rejectedWrites() {
        return writer.rejectedSoFar();
    }

    /** The writer thread, once one was started; for tests in this package. */
    Thread writerThread() {
        return writer.workerThread();
    }

    // ---- helpers ---------------------------------------------------------------------------------

    private void checkRunning(String method) {
        shutdown.checkRunning(method);
    }

    private static List<Message> copyMessages(List<Message> messages) {
        requireNonNull(messages, "messages");
        for (int i = 0; i < messages.size(); i++) {
            int index = i;
            requireNonNull(messages.get(i), () -> "messages[" + index + "]");
        }
        return List.copyOf(messages);
    }

    @Override
    public String toString() {
        return "MemoryManager[" + name + ", providers=" + providerNames() + ", pending=" + pendingWrites()
                + (isShutdown() ? ", shut down" : "") + "]";
    }

    /**
     * Settings for a {@link MemoryManager}. Setters check their argument; {@link #build()} copies
     * the settings, so a builder can be reused without changing managers it already built. Not
     * thread-safe.
     */
    public static final class Builder extends OwnerBuilder<Builder> {

        /** Default drain deadline of {@link MemoryManager#stop()}. */
        public static final Duration DEFAULT_DRAIN_TIMEOUT = Duration.ofSeconds(5);
        /** Default number of writes the queue holds before {@code syncAll} waits. */
        public static final int DEFAULT_QUEUE_CAPACITY = 10_000;
        /** Default time {@code syncAll} waits for space in a full queue. */
        public static final Duration DEFAULT_ENQUEUE_TIMEOUT = Duration.ofSeconds(1);
        /** Default largest batch handed to a provider that overrides {@code syncBatch}. */
        public static final int DEFAULT_MAX_BATCH_SIZE = 1_024;
        /** Default time {@code prefetchAll} waits for the providers. */
        public static final Duration DEFAULT_PREFETCH_TIMEOUT = Duration.ofSeconds(2);
        /** Default time shutdown waits for the providers' {@code shutdown()}. */
        public static final Duration DEFAULT_PROVIDER_SHUTDOWN_TIMEOUT = Duration.ofSeconds(5);
        /** Default time an idle writer thread waits for a write before it exits. */
        public static final Duration DEFAULT_WRITER_KEEP_ALIVE = Duration.ofSeconds(1);

        String name;
        Duration drainTimeout = DEFAULT_DRAIN_TIMEOUT;
        int queueCapacity = DEFAULT_QUEUE_CAPACITY;
        Duration enqueueTimeout = DEFAULT_ENQUEUE_TIMEOUT;
        int maxBatchSize = DEFAULT_MAX_BATCH_SIZE;
        Duration prefetchTimeout = DEFAULT_PREFETCH_TIMEOUT;
        Duration providerShutdownTimeout = DEFAULT_PROVIDER_SHUTDOWN_TIMEOUT;
        Duration writerKeepAlive = DEFAULT_WRITER_KEEP_ALIVE;
        WriteAheadLog spool;

        private Builder() {}

        /**
         * A durable spool ({@code dev.memlife.spool.Spool}): every write is appended to it, and
         * group-committed to disk, before it is queued, and a manager built on a spool that an
         * earlier run left writes in replays them, in their order and with their ids, before its
         * first new write ({@link MemoryManager#replaySpool()}). Off by default. A spool serves one
         * manager: a builder that builds several managers needs one spool for each.
         *
         * @param spool the spool
         * @return this builder
         * @throws IllegalArgumentException if {@code spool} is not a log memlife made
         */
        public Builder spool(DurableLog spool) {
            this.spool = WriteAheadLogs.of(requireNonNull(spool, "spool"));
            return this;
        }

        /**
         * The manager's name in thread names, logs and errors; default a process-unique number.
         *
         * @param name the name; not blank
         * @return this builder
         */
        public Builder name(String name) {
            this.name = Checks.notBlank(name, "name");
            return this;
        }

        /**
         * The deadline {@link MemoryManager#stop()} gives the whole queue to drain; default
         * 5 s. Zero abandons whatever is still queued at once.
         *
         * @param drainTimeout the queue's drain budget; zero or more
         * @return this builder
         */
        public Builder drainTimeout(Duration drainTimeout) {
            this.drainTimeout = Checks.nonNegative(drainTimeout, "drainTimeout");
            return this;
        }

        /**
         * How many writes may wait in the queue; default {@value #DEFAULT_QUEUE_CAPACITY}.
         *
         * @param queueCapacity the capacity; at least 1
         * @return this builder
         */
        public Builder queueCapacity(int queueCapacity) {
            this.queueCapacity = Checks.atLeast(queueCapacity, 1, "queueCapacity");
            return this;
        }

        /**
         * How long {@code syncAll} waits for space in a full queue before it throws {@link
         * QueueFullException}; default 1 s.
         *
         * @param enqueueTimeout the longest wait for space; zero or more
         * @return this builder
         */
        public Builder enqueueTimeout(Duration enqueueTimeout) {
            this.enqueueTimeout = Checks.nonNegative(enqueueTimeout, "enqueueTimeout");
            return this;
        }

        /**
         * The most writes handed at once to a provider that overrides {@code syncBatch}; default
         * {@value #DEFAULT_MAX_BATCH_SIZE}. A batch only grows this large when writes queue up, as at
         * shutdown. Then bigger is faster for a store that commits each batch: the SQLite store
         * persisted 1.5 to 1.7 times as many writes within a 5 s shutdown budget at 1,024 as at 256,
         * because every commit rewrites each index page it touched. At the drain deadline the batch
         * in progress is reported as still running rather than abandoned.
         *
         * @param maxBatchSize the largest batch; at least 1
         * @return this builder
         */
        public Builder maxBatchSize(int maxBatchSize) {
            this.maxBatchSize = Checks.atLeast(maxBatchSize, 1, "maxBatchSize");
            return this;
        }

        /**
         * How long {@code prefetchAll} waits for the providers; default 2 s.
         *
         * @param prefetchTimeout the longest wait; positive
         * @return this builder
         */
        public Builder prefetchTimeout(Duration prefetchTimeout) {
            this.prefetchTimeout = Checks.positive(prefetchTimeout, "prefetchTimeout");
            return this;
        }

        /**
         * How long shutdown waits for the providers' {@code shutdown()} calls together; default
         * 5 s.
         *
         * @param providerShutdownTimeout the longest wait; zero or more
         * @return this builder
         */
        public Builder providerShutdownTimeout(Duration providerShutdownTimeout) {
            this.providerShutdownTimeout = Checks.nonNegative(providerShutdownTimeout, "providerShutdownTimeout");
            return this;
        }

        /**
         * How long the writer thread waits for a write, idle, before it exits; default 1 s. The next
         * write starts a new writer thread (tens of microseconds), so a manager that is idle, like
         * most of a service's cached agents at any moment, holds no thread. Measured on the real
         * clock, as a thread pool's keep-alive, whatever the {@link #ticker}. Zero: the writer exits
         * as soon as the queue is empty, after a few microseconds of spinning.
         *
         * @param writerKeepAlive the idle time before the writer thread exits; zero or more
         * @return this builder
         */
        public Builder writerKeepAlive(Duration writerKeepAlive) {
            this.writerKeepAlive = Checks.nonNegative(writerKeepAlive, "writerKeepAlive");
            return this;
        }

        /** {@return a new manager with these settings} */
        public MemoryManager build() {
            return new MemoryManager(this);
        }
    }
}
