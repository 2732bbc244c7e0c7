package dev.memlife.spring;

import static java.util.Objects.requireNonNull;

import dev.memlife.MemoryManager;
import dev.memlife.MemoryProvider;
import dev.memlife.StoppedException;
import dev.memlife.agent.AgentMemory;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.spool.LeaseHeldException;
import dev.memlife.spool.SharedLog;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The gateway's agents on the shared log ({@code memlife.spool.shared=postgres}).
 *
 * <p>{@link #agent} is the agent factory: a manager on the agent's log ({@link SharedLog#agent}),
 * using the application's memory providers, with what the agent's last holder left replayed before
 * its first turn.
 *
 * <p>An instance is the shared log's adopter: the sweeper hands it each agent whose lease expired
 * with writes undelivered (its replica died), and it acquires the agent through the gateway and
 * lets it go at once ({@code gateway.acquire(agent, factory).close()}), which replays the backlog
 * to the providers. It runs on the shared log's adopter thread, and waits until it is {@linkplain
 * #serve served} a gateway, once every singleton of the context exists (so it never creates a bean
 * from its own thread); once that gateway is stopped it does nothing, and another replica adopts
 * the agent.
 */
final class SharedLogAgents implements Consumer<String> {

    private static final Logger LOG = LoggerFactory.getLogger(SharedLogAgents.class);
    /** How long a manager whose replay failed may take to stop: it holds the lease, and nothing new. */
    private static final Duration STOP_AFTER_FAILED_REPLAY = Duration.ofSeconds(1);

    private final CountDownLatch served = new CountDownLatch(1);
    private volatile AgentGateway gateway;
    private volatile Function<String, AgentMemory> factory;

    /**
     * A manager named {@code key} on its log in {@code log}, using {@code providers}, with what the
     * agent's last holder left undelivered replayed before its first turn.
     *
     * @param log the shared log
     * @param providers the providers the manager uses (they stay their owner's to close)
     * @param key the agent's key
     * @return the agent
     * @throws dev.memlife.spool.LeaseHeldException if another replica holds the agent past the claim
     *     timeout
     * @throws IllegalStateException if the database cannot be reached within the claim timeout, or
     *     the replay failed (the manager is stopped, and the lease released)
     */
    static AgentMemory agent(SharedLog log, List<MemoryProvider> providers, String key) {
        MemoryManager memory = MemoryManager.builder().name(key).spool(log.agent(key)).build();
        try {
            providers.forEach(memory::useProvider);
            if (!providers.isEmpty()) {
                memory.replaySpool(); // what the agent's last holder left undelivered, before any new write
            }
        } catch (RuntimeException e) {
            memory.stop(STOP_AFTER_FAILED_REPLAY); // releases the lease; what was left stays in the log
            throw e;
        }
        return AgentMemory.create(memory);
    }

    /**
     * Lets the adopter take agents: through {@code gateway}, made by {@code factory}. Called once;
     * a null gateway (the application has none, or several) leaves the backlogs to each agent's next
     * acquire.
     *
     * @param gateway the gateway, or null
     * @param factory the agents' factory
     */
    void serve(AgentGateway gateway, Function<String, AgentMemory> factory) {
        this.factory = requireNonNull(factory, "factory");
        this.gateway = gateway;
        served.countDown();
    }

    /** Adopts {@code agent}: acquires it through the gateway and lets it go. */
    @Override
    public void accept(String agent) {
        try {
            served.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // the shared log is closing
            return;
        }
        AgentGateway g = gateway;
        if (g == null) {
            LOG.warn("memlife: agent '{}' has writes a dead replica left undelivered, but the application has no single "
                    + "AgentGateway to adopt it through; they are delivered at the agent's next acquire", agent);
            return;
        }
        if (g.isStopped()) {
            return; // stopping: another replica adopts it
        }
        try {
            g.acquire(agent, factory).close();
            LOG.info("memlife: adopted agent '{}' from the shared log: what its last holder left is replayed to the "
                    + "providers", agent);
        } catch (StoppedException e) {
            LOG.debug("memlife: agent '{}' not adopted: the gateway is stopping", agent);
        } catch (LeaseHeldException e) {
            LOG.debug("memlife: agent '{}' not adopted: another replica took it first ({})", agent, e.getMessage());
        }
    }
}
