package dev.memlife.spool;

import java.util.concurrent.RejectedExecutionException;

/**
 * An agent's {@link AgentLog} lost its lease on the {@link SharedLog}: another replica took the
 * agent over (this one froze or lost the database for longer than the lease), so this replica may
 * neither append nor deliver for it any more. Thrown by {@code syncAll} (the write was not taken)
 * and by {@code awaitDurable} (writes accepted since the last group commit were not committed:
 * they were never confirmed and are counted in {@link SharedLogFigures#fencedWrites()}). Drop the
 * agent (evict it from the gateway) and send its session's next request to any replica: acquiring
 * it there waits for, or performs, the takeover, and the writes this replica had committed are
 * delivered there first, in their order.
 */
public final class LeaseLostException extends RejectedExecutionException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message what was refused, for which agent, and since which epoch
     */
    LeaseLostException(String message) {
        super(message);
    }
}
