package dev.memlife;

import java.time.Duration;
import java.util.List;

/**
 * What stopping within a budget did: the one shape of every report memlife returns from {@link
 * Stoppable#stop(Duration)}, from an agent's teardown and from the shutdown hook. Each report adds
 * the detail of its owner (which write went where, which agent was closed, which session was left
 * dirty); these four answers are the same everywhere, so a caller, a log line or a health check
 * can read any of them alike.
 *
 * <p>Reports are snapshots: immutable and safe to share between threads.
 */
public interface StopReport {

    /** {@return whether everything the owner had was finished within the budget} */
    boolean complete();

    /** {@return the budget the stop had} */
    Duration budget();

    /** {@return how long the stop took} */
    Duration elapsed();

    /**
     * What the stop left unfinished: the ids of the writes, agents, sessions, conversations or
     * components that did not finish within the budget, in the owner's own terms (its report says
     * which). Empty when {@link #complete()} is true; a report may also count unfinished work it
     * has no id for (its own figures say so).
     *
     * @return their ids; empty if the stop completed
     */
    List<String> unfinished();
}
