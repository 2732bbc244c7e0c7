package dev.memlife.store;

/**
 * A store's figures at one moment ({@link JdbcMemoryProvider#figures()}), whatever number of
 * managers write into it. Counters only grow; {@code connectionsOpen} is a gauge. Immutable and
 * thread-safe.
 *
 * @param batchesStored transactions that stored writes
 * @param turnsStored writes stored
 * @param turnsSkipped writes skipped because their write id was already stored (a replay)
 * @param sessionEndsStored session ends recorded
 * @param failedAttempts attempts that failed, each followed by a retry or by the call's failure
 * @param failedCalls calls that failed after every attempt (the manager counted their writes as
 *     failed)
 * @param connectionsOpen connections the store holds or has borrowed from its pool right now: at
 *     most two (one for writes, one for everything else), whatever the number of agents
 */
public record StoreFigures(long batchesStored, long turnsStored, long turnsSkipped, long sessionEndsStored,
        long failedAttempts, long failedCalls, int connectionsOpen) {}
