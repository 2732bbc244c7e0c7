package dev.memlife.spring;

import dev.memlife.agent.TeardownMode;
import dev.memlife.gateway.AgentGateway;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

/**
 * The starter's settings, under memlife.*.
 *
 * @param enabled whether the starter creates anything at all
 * @param drainTimeout the most the shutdown drain (session commits, then the gateway's stop) may
 *     take when the context closes; it is cut to nine tenths of
 *     spring.lifecycle.timeout-per-shutdown-phase when that is shorter, so Spring never gives up
 *     on the drain
 * @param gateway the agent gateway's settings
 * @param store the shared JDBC store's settings
 * @param tracker the session commit tracker's settings
 * @param spool the agents' spools: set memlife.spool.dir to turn them on
 * @param vectorStore the application's Spring AI vector stores: set
 *     memlife.vector-store.write-behind=true to write them behind
 */
@ConfigurationProperties("memlife")
public record MemlifeProperties(@DefaultValue("true") boolean enabled, @DefaultValue("20s") Duration drainTimeout,
        @DefaultValue Gateway gateway, @DefaultValue Store store, @DefaultValue Tracker tracker,
        @DefaultValue Spool spool, @DefaultValue VectorStore vectorStore) {

    /**
     * The agent gateway ({@link AgentGateway.Builder}).
     *
     * @param name the gateway's name in thread names and logs
     * @param maxAgents the most agents cached; past it the least recently used idle one is evicted
     * @param idleTtl how long an agent may sit idle before the idle sweep evicts it
     * @param stopMode what the shutdown does to the cached conversations: CLOSE ends them (flush,
     *     extract, shut down), RELEASE keeps them resumable for the next replica
     * @param evictionMode how evicted agents are torn down: COMMIT_THEN_RELEASE or RELEASE
     * @param enabled whether to create the agent side (the gateway, the session tracker, the
     *     shared store and its tables, the spools, the lifecycle, health and metrics): true or
     *     false decides; unset, it is created unless the application keeps its conversations in a
     *     Spring AI ChatMemoryRepository or a LangChain4j ChatMemoryStore bean (memlife's
     *     write-behind ones included), and then gets only what it wires itself
     */
    public record Gateway(@DefaultValue("gateway") String name, @DefaultValue("128") int maxAgents,
            @DefaultValue("1h") Duration idleTtl, @DefaultValue("CLOSE") TeardownMode stopMode,
            @DefaultValue("COMMIT_THEN_RELEASE") TeardownMode evictionMode, Boolean enabled) {}

    /**
     * The shared store, a JdbcMemoryProvider on the application's DataSource.
     *
     * @param enabled whether to create the store when the application has one DataSource
     *     and no MemoryProvider bean of its own
     * @param tablePrefix the prefix of the store's table names
     */
    public record Store(@DefaultValue("true") boolean enabled, @DefaultValue("memlife_") String tablePrefix) {}

    /**
     * The session commit tracker (SessionCommitTracker), drained before the gateway.
     *
     * @param name the tracker's name in thread names and logs
     */
    public record Tracker(@DefaultValue("memlife") String name) {}

    /**
     * The agents' spools (a SpoolDirectory): with a directory set, every agent the gateway makes
     * appends what it accepts to a spool of its own there before queuing it, so a crash (kill -9,
     * an OOM kill) loses none of it, and at start-up, before the web server takes a request, what a
     * crash left there is replayed into the application's memory providers.
     *
     * @param dir the spools' directory; unset, no spool
     * @param maxBytes the most one agent's spool holds undelivered before it refuses a write
     * @param segmentBytes the size at which a spool starts a new segment file
     * @param recoveryTimeout how long the start-up replay of each spool a crash left may take
     */
    public record Spool(String dir, @DefaultValue("1GB") DataSize maxBytes, @DefaultValue("64MB") DataSize segmentBytes,
            @DefaultValue("1m") Duration recoveryTimeout) {}

    /**
     * The application's Spring AI vector stores: with write-behind on, every VectorStore bean is
     * wrapped in a WriteBehindVectorStore named after the bean, so its adds (two per request with
     * VectorStoreChatMemoryAdvisor) return at once and are embedded and stored on a writer thread,
     * in batches; the context's shutdown drains them before the stores behind are destroyed.
     * Inject such a bean as VectorStore, not as its own class.
     *
     * @param writeBehind whether to wrap every VectorStore bean
     * @param batchSize the most documents per call to a store behind (one embedding call)
     * @param closeTimeout how long the shutdown drain of each wrapped store may take
     * @param spoolDir a directory for their spools (one per bean, named after it), so a crash loses
     *     no document added; unset, no spool
     * @param durable with a spool, whether every add is also forced to disk before it returns
     */
    public record VectorStore(@DefaultValue("false") boolean writeBehind, @DefaultValue("64") int batchSize,
            @DefaultValue("10s") Duration closeTimeout, String spoolDir, @DefaultValue("false") boolean durable) {}
}
