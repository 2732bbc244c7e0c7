package dev.memlife.agent;

import static java.util.Objects.requireNonNull;

import dev.memlife.DrainReport;
import dev.memlife.StopReport;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * What one teardown call of an {@link AgentMemory} did: either it won the claim and ran its mode
 * ({@link #ran()}), or another teardown already owned the agent and this call touched nothing
 * ({@link #owner()} says which). Immutable and thread-safe.
 *
 * @param agent the name of the agent's memory manager
 * @param requested the mode this call asked for
 * @param owner the mode of the teardown that owns the agent: {@code requested} if this call ran
 * @param ran true if this call won the claim and tore the agent down; false if another teardown
 *     owned it
 * @param flushed true if this call ran and its flush barrier was met before the shutdown began
 * @param extraction what became of extraction in this call
 * @param drainReport the manager's report, present exactly when this call ran the shutdown
 */
public record TeardownReport(String agent, TeardownMode requested, TeardownMode owner, boolean ran, boolean flushed,
        Extraction extraction, Optional<DrainReport> drainReport) implements StopReport {

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

    /**
     * Checks the components: a drain report goes with a call that ran, and only with one.
     *
     * @param agent the name of the agent's memory manager
     * @param requested the mode this call asked for
     * @param owner the mode of the teardown that owns the agent: {@code requested} if this call ran
     * @param ran true if this call won the claim and tore the agent down; false if another teardown
     *     owned it
     * @param flushed true if this call ran and its flush barrier was met before the shutdown began
     * @param extraction what became of extraction in this call
     * @param drainReport the manager's report, present exactly when this call ran the shutdown
     */
    public TeardownReport {
        requireNonNull(agent, "agent");
        requireNonNull(requested, "requested");
        requireNonNull(owner, "owner");
        requireNonNull(extraction, "extraction");
        requireNonNull(drainReport, "drainReport");
        if (drainReport.isPresent() != ran) {
            throw new IllegalArgumentException("a drain report goes with a call that ran, and only with one");
        }
    }

    static TeardownReport ran(String agent, TeardownMode mode, boolean flushed, Extraction extraction,
            DrainReport drainReport) {
        return new TeardownReport(agent, mode, mode, true, flushed, extraction,
                Optional.of(requireNonNull(drainReport, "drainReport")));
    }

    static TeardownReport ownedByOther(String agent, TeardownMode requested, TeardownMode owner) {
        return new TeardownReport(agent, requested, owner, false, false, Extraction.NOT_RUN, Optional.empty());
    }

    /**
     * {@return true if this call ran its mode, its manager delivered every write in time and
     * extraction, if its mode extracts, returned; false for a call another teardown owned (that
     * teardown's report says how it went)}
     */
    @Override
    public boolean complete() {
        return ran && drainReport.get().complete() && extraction != Extraction.TIMED_OUT
                && extraction != Extraction.FAILED;
    }

    /** {@return the budget of the manager's shutdown; zero if this call did not run} */
    @Override
    public Duration budget() {
        return drainReport.map(DrainReport::budget).orElse(Duration.ZERO);
    }

    /** {@return how long the manager's shutdown took; zero if this call did not run} */
    @Override
    public Duration elapsed() {
        return drainReport.map(DrainReport::elapsed).orElse(Duration.ZERO);
    }

    /** {@return the write ids the manager's shutdown left unfinished; empty if this call did not run} */
    @Override
    public List<String> unfinished() {
        return drainReport.map(DrainReport::unfinished).orElse(List.of());
    }

    /**
     * Providers whose shutdown waits for a hook still running in them, such as an extraction that
     * {@link Extraction#TIMED_OUT timed out}: each is shut down as soon as that hook returns, never
     * under it, so an extraction that finishes late still reaches every provider it had not reached.
     * Empty if this call did not run.
     *
     * @return their names; empty if this call did not run
     */
    public List<String> providersShutDownLater() {
        return drainReport.map(DrainReport::providersShutDownLater).orElse(List.of());
    }


    @Override
    public String toString() {
        if (!ran) {
            return "TeardownReport[" + agent + ": " + requested + " did nothing, owned by " + owner + "]";
        }
        return "TeardownReport[" + agent + ": " + requested + " ran, flushed=" + flushed + ", extraction="
                + extraction + ", " + drainReport.orElseThrow() + "]";
    }
}
