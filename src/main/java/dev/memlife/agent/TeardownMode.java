package dev.memlife.agent;

/**
 * The three ways an {@link AgentMemory} can be torn down. Every mode flushes the queued writes
 * (bounded) before it shuts the providers down, so no mode cancels a write the agent already
 * accepted; they differ in whether end-of-session extraction runs and in what the caller means.
 */
public enum TeardownMode {

    /** Soft eviction: flush, then shut down; no extraction. The session may go on in another agent. */
    RELEASE(false),

    /** Soft eviction of an agent whose session is probably over: flush, extract, then shut down. */
    COMMIT_THEN_RELEASE(true),

    /** Hard close at a true session boundary ({@code /reset}, {@code /new}, expiry, stop): flush, extract, shut down. */
    CLOSE(true);

    private final boolean extracts;

    TeardownMode(boolean extracts) {
        this.extracts = extracts;
    }

    /** {@return whether this mode runs end-of-session extraction before the providers shut down} */
    public boolean extracts() {
        return extracts;
    }
}
