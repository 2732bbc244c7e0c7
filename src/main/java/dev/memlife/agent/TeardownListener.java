package dev.memlife.agent;

/**
 * Observes the phases of the teardown that won an {@link AgentMemory}'s claim, for logging,
 * metrics or tracing. Called on the thread that runs the teardown, synchronously, before each
 * phase starts and once at the end; an exception it throws is logged and ignored. It must be
 * thread-safe if it is shared by several agents, and should return quickly: the teardown waits
 * for it.
 */
@FunctionalInterface
public interface TeardownListener {

    /** The phases of a teardown, in the order they run. */
    enum Phase {
        /** The flush of the queued writes begins. */
        FLUSH,
        /** End-of-session extraction begins (modes that extract only). */
        EXTRACT,
        /** The manager's shutdown (bounded drain, then each provider's shutdown) begins. */
        SHUTDOWN,
        /** The teardown is over; the result is about to be returned. */
        DONE
    }

    /** A listener that does nothing. */
    TeardownListener NONE = (agent, mode, phase) -> {};

    /**
     * Called before {@code phase} of the teardown {@code mode} of {@code agent} starts.
     *
     * @param agent the agent being torn down
     * @param mode the mode of the teardown that won the claim
     * @param phase the phase about to start ({@link Phase#DONE}: the teardown is over)
     */
    void onPhase(AgentMemory agent, TeardownMode mode, Phase phase);
}
