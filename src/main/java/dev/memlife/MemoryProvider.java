package dev.memlife;

import java.util.List;
import java.util.Map;

/**
 * A memory store plugged into a {@link MemoryManager}: the service-provider interface of memlife.
 *
 * <p>Only {@link #name()} is abstract; every other hook has a harmless default, so a provider
 * implements just the hooks it cares about. The manager calls every hook of every provider in its
 * own {@code try/catch}: an exception thrown here is logged and counted, and never stops the next
 * provider or the manager's writer thread.
 *
 * <p><b>Threads.</b> The manager calls {@link #syncTurn} and {@link #syncBatch} on its single
 * writer thread, one call at a time, in the order the writes were accepted, so a provider needs no
 * locking of its own for them. {@link #prefetch} runs on a manager-owned prefetch thread and is
 * abandoned after the manager's prefetch timeout. {@link #shutdown()} runs on a manager-owned
 * shutdown thread, bounded by the manager's provider-shutdown timeout. Every other hook runs on the
 * thread that called the matching {@code MemoryManager} method. A provider used by several threads
 * at once through those caller-thread hooks must be thread-safe.
 */
public interface MemoryProvider {

    /**
     * The provider's name: unique within one manager, used in logs, reports and tool routing.
     * Called on any thread; must not block.
     *
     * @return the name; not null and not blank
     */
    String name();

    /**
     * Whether the provider can be used at all (configured, credentials present). A provider that
     * is not available is not registered. Called on the registering thread; should not block.
     *
     * @return true if the provider can be registered; the default is true
     */
    default boolean isAvailable() {
        return true;
    }

    /**
     * Prepares the provider for a session. Called on the caller's thread by
     * {@link MemoryManager#initializeAll(String)}; may block briefly (open a connection).
     *
     * @param sessionId the session about to start, as the caller passed it to the manager
     */
    default void initialize(String sessionId) {}

    /**
     * A block of text for the agent's system prompt, or an empty string. Called on the caller's
     * thread by {@link MemoryManager#buildSystemPrompt()}; should not block.
     *
     * @return the block of text, or an empty string for none; the default is empty
     */
    default String systemPromptBlock() {
        return "";
    }

    /**
     * Recalls memory relevant to {@code query} before a turn, or returns an empty string. Called on
     * a manager-owned prefetch thread; may block, but is abandoned after the prefetch timeout.
     *
     * @param query what to recall memory for, as the caller passed it to
     *     {@link MemoryManager#prefetchAll(String, String)} (typically the user's next message)
     * @param sessionId the session the turn belongs to
     * @return the recalled memory as text for the model, or an empty string; the default is empty
     */
    default String prefetch(String query, String sessionId) {
        return "";
    }

    /**
     * The tools this provider offers the model. Called on the registering thread when the provider
     * is added, and again by {@link MemoryManager#toolSchemas()}; should not block.
     *
     * @return the tools' schemas, or an empty list; the default is empty
     */
    default List<ToolSchema> toolSchemas() {
        return List.of();
    }

    /**
     * Runs one of this provider's tools. Called on the caller's thread by
     * {@link MemoryManager#handleToolCall(String, Map)}; may block.
     *
     * @param tool the name of the tool, one this provider listed in {@link #toolSchemas()}
     * @param args the tool call's arguments, as the model gave them
     * @return the tool's result as text for the model
     * @throws UnsupportedOperationException by default, a provider that offers no tools
     */
    default String handleToolCall(String tool, Map<String, Object> args) {
        throw new UnsupportedOperationException(name() + " offers no tool named '" + tool + "'");
    }

    /**
     * Stores one completed turn. Called on the manager's writer thread, never concurrently with
     * another write hook of this provider; may block (this is where the store's I/O happens), but
     * every millisecond spent here delays the writes queued behind it.
     *
     * @param turn the write to store; {@link Turn#writeId()} identifies it, so a store can be
     *     idempotent
     */
    default void syncTurn(Turn turn) {}

    /**
     * Stores several turns, already in acceptance order. The default calls {@link #syncTurn} once
     * per turn. A store overrides this to write the whole batch at once (one transaction); the
     * manager then hands it every write already queued, up to its batch size, in one call. If an
     * override throws, every turn of the batch is counted as failed for this provider; an override
     * that can retry should do so before throwing.
     *
     * <p>Called on the manager's writer thread, like {@link #syncTurn}; may block.
     *
     * @param turns the writes to store, in acceptance order: an unmodifiable list the provider may keep
     */
    default void syncBatch(List<Turn> turns) {
        for (Turn turn : turns) {
            syncTurn(turn);
        }
    }

    /**
     * A turn begins: the user's message arrived, before the recall ({@link #prefetch}). Called on
     * the caller's thread by {@link MemoryManager#onTurnStart}; should be quick.
     *
     * @param turnNumber the turn's number in the session, from 1
     * @param message what the user said
     */
    default void onTurnStart(int turnNumber, String message) {}

    /**
     * The conversation is about to be compressed, and {@code messages} will be summarised away: a
     * checkpoint to extract what the provider needs from them first. What it returns is added to
     * the compression summary's prompt ({@link MemoryManager#onPreCompress} joins the providers'
     * texts). Called on the caller's thread; may block.
     *
     * @param messages the messages about to be compressed, oldest first (an unmodifiable copy)
     * @return text for the compression summary, or an empty string for none; the default is empty
     */
    default String onPreCompress(List<Message> messages) {
        return "";
    }

    /**
     * The agent's built-in memory tool wrote something: a provider that mirrors that memory stores
     * it too. Called on the caller's thread by {@link MemoryManager#onMemoryWrite}.
     *
     * @param action what the tool did, such as {@code add}, {@code replace} or {@code remove}
     * @param target which memory it wrote to, such as {@code memory} or {@code user}
     * @param content what it wrote
     */
    default void onMemoryWrite(String action, String target, String content) {}

    /**
     * A sub-agent this agent delegated a task to has finished. Called on the caller's thread by
     * {@link MemoryManager#onDelegation}.
     *
     * @param task what the sub-agent was asked
     * @param result what it answered
     * @param childSessionId the sub-agent's session, or an empty string if it had none
     */
    default void onDelegation(String task, String result, String childSessionId) {}

    /**
     * The agent moved to another session: from now on its writes and recalls are for {@code
     * newSessionId}. Called by {@link MemoryManager#onSessionSwitch} on the caller's thread, or by
     * {@link MemoryManager#commitSessionBoundaryAsync} on the writer thread, right after the old
     * session's {@link #onSessionEnd(String, List)}.
     *
     * @param newSessionId the session the agent moved to
     * @param parentSessionId the session it came from, or an empty string
     * @param reset true if the new session starts afresh ({@code /new}); false if it continues the
     *     old one (compression, resume, branch)
     */
    default void onSessionSwitch(String newSessionId, String parentSessionId, boolean reset) {}

    /**
     * End-of-session extraction: the session is over and {@code messages} is its transcript.
     * Called synchronously on the caller's thread by {@link MemoryManager#onSessionEnd(List)}; may
     * block for as long as the extraction takes.
     *
     * @param messages the session's transcript, oldest message first (an unmodifiable copy)
     */
    default void onSessionEnd(List<Message> messages) {}

    /**
     * End-of-session extraction of session {@code sessionId}: what {@link MemoryManager#onSessionEnd}
     * calls. By default it calls {@link #onSessionEnd(List)}, for providers that know their session
     * from {@link #initialize}. A provider that several managers share ({@link
     * MemoryManager#useProvider}) must override this one: it is told which session ended, whatever
     * the other managers initialized or wrote since.
     *
     * @param sessionId the session that ended: the one the manager was last initialized with, else
     *     the session of its last write, else {@code ""}
     * @param messages the session's transcript, oldest message first (an unmodifiable copy)
     */
    default void onSessionEnd(String sessionId, List<Message> messages) {
        onSessionEnd(messages);
    }

    /**
     * Releases the provider's resources (threads, connections). Called at most once per manager, on
     * a manager-owned shutdown thread, after the manager's writer has finished or given up; no write
     * hook is called after it has started. May block, bounded by the manager's provider-shutdown
     * timeout.
     */
    default void shutdown() {}
}
