package dev.memlife.spool;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * What one replica's {@link SharedLog} has done since it opened. A snapshot; immutable.
 *
 * @param heldAgents agents whose lease this replica holds now
 * @param appended writes appended by this replica's agents
 * @param committed of them, writes committed in PostgreSQL (durable)
 * @param pending writes appended and not committed yet: what a crash of this replica now would
 *     lose (none of them was confirmed durable)
 * @param groupCommits transactions that committed writes, marks or renewals: far fewer than the
 *     writes when many wait together
 * @param replayed writes handed to a manager from the log when it claimed its agent
 * @param takeovers claims of a lease another replica held and let expire without releasing it
 *     (it died or froze)
 * @param adoptions agents the sweeper found expired with undelivered writes and handed to the
 *     adopter
 * @param fencedWrites writes refused, or dropped uncommitted, because their agent's lease was
 *     taken by another replica; each was reported to its caller, none was confirmed
 * @param fencedLeases leases this replica found taken by another at its next renewal or commit
 * @param databaseFailures transactions that failed (a lost connection, a restart) and were tried
 *     again on a new connection
 * @param lastTakeoverLag for the last takeover, how long from the lease's expiry until the
 *     writes it left were replayed to the manager; zero before the first
 */
public record SharedLogFigures(int heldAgents, long appended, long committed, long pending, long groupCommits,
        long replayed, long takeovers, long adoptions, long fencedWrites, long fencedLeases, long databaseFailures,
        Duration lastTakeoverLag) {

    /**
     * Checks the components.
     *
     * @param heldAgents agents whose lease this replica holds
     * @param appended writes appended
     * @param committed writes committed
     * @param pending writes not committed yet
     * @param groupCommits transactions committed
     * @param replayed writes replayed
     * @param takeovers leases taken over
     * @param adoptions agents handed to the adopter
     * @param fencedWrites writes refused or dropped because a lease was lost
     * @param fencedLeases leases found lost
     * @param databaseFailures transactions tried again
     * @param lastTakeoverLag the last takeover's lag
     * @throws NullPointerException if {@code lastTakeoverLag} is null
     */
    public SharedLogFigures {
        requireNonNull(lastTakeoverLag, "lastTakeoverLag");
    }
}
