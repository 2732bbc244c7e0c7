package dev.memlife.agent;

import static java.util.Objects.requireNonNull;

import dev.memlife.DrainReport;
import java.util.List;
import java.util.Optional;

/**
 * What one teardown call of an {@link AgentMemory} did: either it won the claim and ran its mode
 * ({@link #ran()}), or another teardown already owned the agent and this call touched nothing
 * ({@link #owner()} says which). Immutable and thread-safe.
 */
public final class TeardownResult {

    /** What became of end-of-session extraction in a teardown. */
    public enum Extraction {
        /** Not part of this call: its mode does not extract, or another teardown owned the agent. */
        NOT_RUN,
        /** Every provider's extraction returned (a provider that threw was logged and skipped). */
        COMPLETED,
        /** Extraction did not return within the extraction timeout; it was left running detached. */
        TIMED_OUT,
        /** Extraction could not start, e.g. because the manager had been shut down directly. */
        FAILED
    }

    private final String agent;
    private final TeardownMode requested;
    private final TeardownMode owner;
    private final boolean ran;
    private final boolean flushed;
    private final Extraction extraction;
    private final DrainReport drainReport;

    private TeardownResult(String agent, TeardownMode requested, TeardownMode owner, boolean ran, boolean flushed,
            Extraction extraction, DrainReport drainReport) {
        this.agent = agent;
        this.requested = requested;
        this.owner = owner;
        this.ran = ran;
        this.flushed = flushed;
        this.extraction = extraction;
        this.drainReport = drainReport;
    }

    static TeardownResult ran(String agent, TeardownMode mode, boolean flushed, Extraction extraction,
            DrainReport drainReport) {
        return new TeardownResult(agent, mode, mode, true, flushed, extraction, requireNonNull(drainReport, "drainReport"));
    }

    static TeardownResult ownedByOther(String agent, TeardownMode requested, TeardownMode owner) {
        return new TeardownResult(agent, requested, owner, false, false, Extraction.NOT_RUN, null);
    }

    /** The name of the agent's memory manager. */
    public String agent() {
        return agent;
    }

    /** The mode this call asked for. */
    public TeardownMode requested() {
        return requested;
    }

    /** The mode of the teardown that owns the agent: {@link #requested()} if this call {@link #ran()}. */
    public TeardownMode owner() {
        return owner;
    }

    /** True if this call won the claim and tore the agent down; false if another teardown owned it. */
    public boolean ran() {
        return ran;
    }

    /** True if this call ran and its flush barrier was met before the shutdown began. */
    public boolean flushed() {
        return flushed;
    }

    /** What became of extraction in this call. */
    public Extraction extraction() {
        return extraction;
    }

    /**
     * Providers whose shutdown waits for a hook still running in them, such as an extraction that
     * {@link Extraction#TIMED_OUT timed out}: each is shut down as soon as that hook returns, never
     * under it, so an extraction that finishes late still reaches every provider it had not reached.
     * Empty if this call did not run.
     */
    public List<String> providersShutDownLater() {
        return drainReport == null ? List.of() : drainReport.providersShutDownLater();
    }

    /** The manager's report, present when this call ran the shutdown. */
    public Optional<DrainReport> drainReport() {
        return Optional.ofNullable(drainReport);
    }

    @Override
    public String toString() {
        if (!ran) {
            return "TeardownResult[" + agent + ": " + requested + " did nothing, owned by " + owner + "]";
        }
        return "TeardownResult[" + agent + ": " + requested + " ran, flushed=" + flushed + ", extraction="
                + extraction + ", " + drainReport + "]";
    }
}
