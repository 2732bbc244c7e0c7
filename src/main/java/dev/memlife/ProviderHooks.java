package dev.memlife;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The hooks a {@link MemoryManager} fans out to its providers on the caller's thread, as
 * hermes-agent's memory manager does: each provider in registration order, one that throws logged
 * and skipped ({@link ProviderCalls#forEach}). Also the session the agent is in, which extraction
 * and the session boundary end. The manager checks its arguments and that it runs before it calls
 * these.
 */
final class ProviderHooks {

    private final ProviderRegistry registry;
    private final ProviderCalls calls;
    private final Writer writer;
    /** The session {@link #initialize} or a switch last set; null before. */
    private volatile String session;

    ProviderHooks(ProviderRegistry registry, ProviderCalls calls, Writer writer) {
        this.registry = registry;
        this.calls = calls;
        this.writer = writer;
    }

    void initialize(String sessionId) {
        session = sessionId;
        calls.forEach(registry.current(), "initialize", p -> p.initialize(sessionId));
    }

    String systemPrompt() {
        StringBuilder out = new StringBuilder();
        for (RegisteredProvider p : registry.current()) {
            appendBlock(out, calls.leased(p, "systemPromptBlock", p.provider::systemPromptBlock, ""));
        }
        return out.toString();
    }

    void onTurnStart(int turnNumber, String message) {
        calls.forEach(registry.current(), "onTurnStart", p -> p.onTurnStart(turnNumber, message));
    }

    String onPreCompress(List<Message> messages) {
        StringBuilder out = new StringBuilder();
        calls.forEach(registry.current(), "onPreCompress", p -> appendBlock(out, p.onPreCompress(messages)));
        return out.toString();
    }

    void onMemoryWrite(String action, String target, String content) {
        calls.forEach(registry.current(), "onMemoryWrite", p -> p.onMemoryWrite(action, target, content));
    }

    void onDelegation(String task, String result, String childSessionId) {
        calls.forEach(registry.current(), "onDelegation", p -> p.onDelegation(task, result, childSessionId));
    }

    void onSessionEnd(List<Message> transcript) {
        String sid = endingSession();
        calls.forEach(registry.current(), "onSessionEnd", p -> p.onSessionEnd(sid, transcript));
    }

    void onSessionSwitch(String newSessionId, String parentSessionId, boolean reset) {
        if (newSessionId.isBlank()) {
            return; // as upstream
        }
        session = newSessionId;
        calls.forEach(registry.current(), "onSessionSwitch",
                p -> p.onSessionSwitch(newSessionId, parentSessionId, reset));
    }

    /** The session boundary of {@code /new}, in order on the writer; see {@link MemoryManager#commitSessionBoundaryAsync}. */
    CompletionStage<Void> commitSessionBoundary(List<Message> transcript, String newSessionId, String parentSessionId) {
        RegisteredProvider[] route = registry.current();
        if (route.length == 0) {
            return CompletableFuture.completedStage(null);
        }
        return writer.boundary(() -> {
            String oldSid = endingSession();
            calls.forEach(route, "onSessionEnd", p -> p.onSessionEnd(oldSid, transcript));
            session = newSessionId;
            calls.forEach(route, "onSessionSwitch", p -> p.onSessionSwitch(newSessionId, parentSessionId, true));
        }).minimalCompletionStage();
    }

    /** The session an extraction ends: the one initialized or switched to last, else that of the last write, else "". */
    private String endingSession() {
        String current = session;
        String written = current != null ? current : writer.lastWrittenSession();
        return written != null ? written : "";
    }

    /** Joins the non-blank blocks with blank lines. */
    private static void appendBlock(StringBuilder out, String block) {
        if (block != null && !block.isBlank()) {
            out.append(out.length() > 0 ? "\n\n" : "").append(block);
        }
    }
}
