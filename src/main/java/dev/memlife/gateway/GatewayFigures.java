package dev.memlife.gateway;

import static java.util.Objects.requireNonNull;

import dev.memlife.WriteFigures;
import dev.memlife.agent.TeardownMode;
import java.util.Map;

/**
 * A gateway's figures at one moment ({@link AgentGateway#figures()}): its agents, the write
 * figures of all of them together, and the teardowns it ran. Immutable and thread-safe.
 *
 * <p>{@code writes} adds up the {@link WriteFigures} of every agent the gateway caches now, of
 * every agent that left the cache and whose teardown is still running, and the final figures of
 * every agent whose teardown has finished. Each agent is counted once, in one of the three, so the
 * counters never go back as agents come and go.
 *
 * @param agentsCached agents in the cache
 * @param agentsLeased cached agents under at least one open lease (mid-turn)
 * @param agentsTearingDown agents that left the cache and whose teardown has not finished
 * @param writes the write figures of every agent the gateway ever cached, added up
 * @param teardowns the teardowns the gateway ran, by mode; a mode it never ran is absent
 */
public record GatewayFigures(int agentsCached, int agentsLeased, int agentsTearingDown, WriteFigures writes,
        Map<TeardownMode, TeardownCounts> teardowns) {

    /**
     * How the teardowns of one mode ended.
     *
     * @param completed every write flushed and delivered, extraction (if the mode extracts)
     *     returned, every provider shut down
     * @param incomplete finished with something left: a write failed, abandoned or still running,
     *     the flush or the extraction timed out, or a provider's shutdown did not finish
     * @param failed the teardown itself threw
     */
    public record TeardownCounts(long completed, long incomplete, long failed) {

        /** {@return every teardown of this mode} */
        public long total() {
            return completed + incomplete + failed;
        }
    }

    /**
     * Checks the components and copies the map.
     *
     * @param agentsCached agents in the cache
     * @param agentsLeased cached agents under an open lease
     * @param agentsTearingDown agents being torn down
     * @param writes the write figures, added up
     * @param teardowns the teardowns by mode
     */
    public GatewayFigures {
        requireNonNull(writes, "writes");
        teardowns = Map.copyOf(requireNonNull(teardowns, "teardowns"));
    }
}
