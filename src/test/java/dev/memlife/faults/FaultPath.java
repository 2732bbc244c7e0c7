package dev.memlife.faults;

/** The paths of the matrix: how the writes that met the fault end up accounted for. */
enum FaultPath {
    /** Writes only ({@code syncAll} never blocks); the test releases a hang, writes more, then {@code stop}. */
    WRITE(false),
    /** {@code flushPending} with the fault in the queue (bounded), then as {@link #WRITE}. */
    FLUSH(false),
    /** {@code AgentMemory.release()}: flush, shut down. */
    SOFT_RELEASE(false),
    /** {@code AgentMemory.commitThenRelease()}: flush, bounded extraction, shut down. */
    COMMIT_THEN_RELEASE(true),
    /** {@code AgentMemory.close()}: the hard close. */
    HARD_CLOSE(true),
    /** {@code AgentGateway.reset(key)}: hard close on the housekeeping executor, bounded wait. */
    RESET(true),
    /** {@code AgentGateway.sweepIdle()} past the idle TTL: soft eviction (commit-then-release) on housekeeping. */
    EVICTION(true),
    /** {@code AgentGateway.stop(Duration)}: hard-closes every cached agent under one deadline. */
    GATEWAY_STOP(true),
    /** {@code SessionCommitTracker.stop(Duration)} (commits through the agent), then {@code release()}. */
    SESSION_DRAIN(true),
    /** {@code ShutdownHooks.stop(budget)} over the tracker and the manager: the JVM hook's drain without an exit. */
    JVM_HOOK(true);

    private final boolean extracts;

    FaultPath(boolean extracts) {
        this.extracts = extracts;
    }

    /** Whether the path runs end-of-session extraction (once) before the providers shut down. */
    boolean extracts() {
        return extracts;
    }

    /** Whether the path goes through an {@code AgentMemory}. */
    boolean usesAgent() {
        return this != WRITE && this != FLUSH;
    }

    boolean usesGateway() {
        return this == RESET || this == EVICTION || this == GATEWAY_STOP;
    }

    boolean usesTracker() {
        return this == SESSION_DRAIN || this == JVM_HOOK;
    }
}
