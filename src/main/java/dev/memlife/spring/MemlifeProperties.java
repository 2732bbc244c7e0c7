package dev.memlife.spring;

import dev.memlife.agent.TeardownMode;
import dev.memlife.gateway.AgentGateway;
import java.time.Duration;
import java.util.Locale;
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
 * @param spool the agents' spools: set memlife.spool.dir (local spools) or memlife.spool.shared=postgres
 *     (a log shared by every replica) to turn them on
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
     * The agents' spools: either a directory of local spools (a SpoolDirectory) or a write-ahead
     * log shared by every replica (a SharedLog on the application's PostgreSQL DataSource), not
     * both. With a directory set, every agent the gateway makes appends what it accepts to a spool
     * of its own there before queuing it, so a crash (kill -9, an OOM kill) loses none of it, and at
     * start-up, before the web server takes a request, what a crash left there is replayed into the
     * application's memory providers. With shared=postgres, every agent's writes go to its own log
     * in the database, held by one replica at a time under a lease: what a replica that died left
     * is delivered by another.
     *
     * @param dir the local spools' directory; unset, no local spool
     * @param maxBytes the most one agent's spool holds undelivered before it refuses a write
     * @param segmentBytes the size at which a spool starts a new segment file
     * @param recoveryTimeout how long the start-up replay of each spool a crash left may take
     * @param shared postgres: every agent's spool is its log in a write-ahead log shared by every
     *     replica, on the application's PostgreSQL DataSource (instead of a local spool; not with
     *     memlife.spool.dir); unset, no shared log
     * @param sharedTablePrefix the prefix of the shared log's two tables (shared_log and
     *     shared_log_leases); every replica of a service uses the same
     * @param lease how long a replica's lease on an agent lasts without renewal: a replica that dies
     *     is taken over this long after its last renewal at the earliest; at least 1s
     * @param sweepInterval how often each replica looks for expired leases with writes undelivered
     *     and delivers them (through the gateway)
     * @param replica this replica's name in the shared log's leases; unset, the host name, the
     *     process id and a random suffix
     * @param claimTimeout how long taking an agent waits for another live replica's lease on it;
     *     unset, the lease plus two sweep intervals
     * @param sharedCloseTimeout how long letting an agent go, and closing the shared log, wait for
     *     the database
     * @param sharedMaxPendingBytes the most one agent may have appended to the shared log and not
     *     yet committed; a write beyond it is refused (the database is slow or out of reach)
     */
    public record Spool(String dir, @DefaultValue("1GB") DataSize maxBytes, @DefaultValue("64MB") DataSize segmentBytes,
            @DefaultValue("1m") Duration recoveryTimeout, Shared shared,
            @DefaultValue("memlife_") String sharedTablePrefix, @DefaultValue("5s") Duration lease,
            @DefaultValue("1s") Duration sweepInterval, String replica, Duration claimTimeout,
            @DefaultValue("10s") Duration sharedCloseTimeout, @DefaultValue("64MB") DataSize sharedMaxPendingBytes) {

        /**
         * Refuses a local spool directory and a shared log together: an agent has one spool.
         *
         * @param dir the local spools' directory, or null
         * @param maxBytes the most one agent's local spool holds undelivered
         * @param segmentBytes the size at which a local spool starts a new segment file
         * @param recoveryTimeout how long the start-up replay of each local spool may take
         * @param shared the kind of shared log, or null
         * @param sharedTablePrefix the prefix of the shared log's tables
         * @param lease the shared log's lease
         * @param sweepInterval the shared log's sweep interval
         * @param replica this replica's name in the shared log, or null for the default
         * @param claimTimeout how long taking an agent waits for another replica's lease, or null
         *     for the default
         * @param sharedCloseTimeout how long letting an agent go waits for the database
         * @param sharedMaxPendingBytes the most one agent may have appended and not committed
         * @throws IllegalArgumentException if both memlife.spool.dir and memlife.spool.shared are set
         */
        public Spool {
            if (dir != null && shared != null) {
                throw new IllegalArgumentException("memlife.spool.dir (" + dir + ") and memlife.spool.shared ("
                        + shared.name().toLowerCase(Locale.ROOT) + ") are both set: an agent has one spool, "
                        + "either local spools in a directory or the log shared by the replicas; remove one of them");
            }
        }
    }

    /** The kinds of shared log ({@code memlife.spool.shared}). */
    public enum Shared {
        /** A SharedLog on the application's PostgreSQL DataSource. */
        POSTGRES
    }

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
