package dev.memlife.gateway;

import dev.memlife.Ticker;
import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownReport;
import dev.memlife.internal.Deadline;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run of {@link AgentGateway#stop(Duration)}: stop the cache (no new lease from now on), wait
 * for the leases already open to be released (for at most half the budget, so a request that never
 * ends cannot take the teardowns' time), tear every cached agent down in the gateway's stop mode,
 * wait for them, then stop the housekeeping executor and wait for its remaining work, every step
 * under one shared deadline. Nothing is interrupted or cancelled: work still running at the
 * deadline goes on detached on its daemon thread, and is named in the report, so no teardown claim
 * is ever left without its work.
 */
final class GatewayStop {

    private static final Logger LOG = LoggerFactory.getLogger(AgentGateway.class);
    /** Agents named at most in the stop's warning. */
    static final int KEYS_LOGGED = 10;

    private final AgentCache cache;
    private final Supplier<List<AgentCache.Entry>> kept;
    private final ThreadPoolExecutor housekeeping;
    private final Consumer<AgentCache.Entry> teardown;
    private final Duration timeout;
    private final Deadline deadline;

    GatewayStop(AgentCache cache, Supplier<List<AgentCache.Entry>> kept, ThreadPoolExecutor housekeeping,
            Consumer<AgentCache.Entry> teardown, Duration timeout, Ticker ticker) {
        this.cache = cache;
        this.kept = kept;
        this.housekeeping = housekeeping;
        this.teardown = teardown;
        this.timeout = timeout;
        this.deadline = Deadline.after(ticker, timeout);
    }

    GatewayStopReport run() {
        List<AgentCache.Entry> entries = cache.stop();
        List<String> stillLeased = cache.awaitUnleased(entries, deadline.reserving(deadline.budget().dividedBy(2)));
        if (!stillLeased.isEmpty()) {
            LOG.warn("agent gateway stop: leases on {} still open after half the {} ms budget; tearing those agents "
                    + "down anyway (what they accepted is flushed first)", stillLeased, timeout.toMillis());
        }
        entries = new ArrayList<>(entries);
        entries.addAll(kept.get()); // evicted, but kept open while their sessions were dirty
        Map<String, AgentMemory> agents = new LinkedHashMap<>();
        for (AgentCache.Entry e : entries) {
            teardown.accept(e);
            agents.put(agents.containsKey(e.key) ? e.key + " (evicted, kept open)" : e.key, e.agent);
        }
        Map<String, TeardownReport> closed = new LinkedHashMap<>();
        List<String> notFinished = new ArrayList<>();
        Map<String, Throwable> failed = new LinkedHashMap<>();
        for (Map.Entry<String, AgentMemory> a : agents.entrySet()) {
            try {
                Optional<TeardownReport> result = awaitTeardown(a.getValue());
                if (result.isPresent()) {
                    closed.put(a.getKey(), result.get());
                } else {
                    notFinished.add(a.getKey());
                }
            } catch (IllegalStateException e) {
                failed.put(a.getKey(), e.getCause() != null ? e.getCause() : e);
            }
        }
        housekeeping.shutdown();
        boolean terminated = awaitHousekeeping();
        int left = terminated ? 0 : housekeeping.getActiveCount() + housekeeping.getQueue().size();
        if (!notFinished.isEmpty() || !failed.isEmpty() || !terminated) {
            LOG.warn("agent gateway stop: within {} ms, {} agents not closed {}, {} failed {}, housekeeping tasks "
                    + "left running: {}; the stop report names every agent", timeout.toMillis(), notFinished.size(),
                    firstKeys(notFinished), failed.size(), firstKeys(failed.keySet()), left);
        }
        return new GatewayStopReport(stillLeased, closed, notFinished, failed, terminated, left, timeout,
                deadline.elapsed());
    }

    /**
     * Up to {@value #KEYS_LOGGED} of {@code keys}, and how many more there are: a stop that leaves
     * a thousand agents open logs one readable line, and its report names them all.
     */
    static String firstKeys(Collection<String> keys) {
        if (keys.size() <= KEYS_LOGGED) {
            return keys.toString();
        }
        List<String> first = keys.stream().limit(KEYS_LOGGED).toList();
        return "[" + String.join(", ", first) + ", and " + (keys.size() - KEYS_LOGGED) + " more]";
    }

    /** The agent's teardown result, waiting in slices of the deadline so the gateway's ticker governs. */
    private Optional<TeardownReport> awaitTeardown(AgentMemory agent) {
        while (true) {
            Optional<TeardownReport> result = agent.awaitTeardown(Duration.ofNanos(slice()));
            if (result.isPresent() || deadline.expired() || Thread.currentThread().isInterrupted()) {
                return result;
            }
        }
    }

    private boolean awaitHousekeeping() {
        try {
            while (!housekeeping.awaitTermination(slice(), TimeUnit.NANOSECONDS)) {
                if (deadline.expired() || Thread.currentThread().isInterrupted()) {
                    return housekeeping.isTerminated();
                }
            }
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return housekeeping.isTerminated();
        }
    }

    /** The next slice of waiting; zero once the caller has been interrupted. */
    private long slice() {
        return Thread.currentThread().isInterrupted() ? 0 : deadline.sliceNanos();
    }
}
