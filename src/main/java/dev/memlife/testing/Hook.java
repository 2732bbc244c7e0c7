package dev.memlife.testing;

/** The {@link dev.memlife.MemoryProvider} hooks a test provider can fail or hang on. */
public enum Hook {
    /** {@link dev.memlife.MemoryProvider#initialize}. */
    INITIALIZE,
    /** {@link dev.memlife.MemoryProvider#systemPromptBlock}. */
    SYSTEM_PROMPT,
    /** {@link dev.memlife.MemoryProvider#prefetch}. */
    PREFETCH,
    /** {@link dev.memlife.MemoryProvider#handleToolCall}. */
    TOOL_CALL,
    /** {@link dev.memlife.MemoryProvider#syncTurn}, once per write. */
    SYNC_TURN,
    /** {@link dev.memlife.MemoryProvider#onSessionEnd}. */
    ON_SESSION_END,
    /** {@link dev.memlife.MemoryProvider#shutdown}. */
    SHUTDOWN
}
