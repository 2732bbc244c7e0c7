package dev.memlife.gateway;

import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownResult;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run of {@link AgentGateway#stop(Duration)}: stop the cache, hard-close every cached agent,
 * wait for them, then stop the housekeeping executor and wait for its remaining work, every step
 * under one shared deadline. Nothing is interrupted or cancelled: work still running at the
 * deadline goes on detached on its daemon thread, and is named in the report, so no teardown claim
 * is ever left without its work.
 */
final class GatewayStop {

    private static final Logger LOG = LoggerFactory.getLogger(AgentGateway.class);

    private final AgentCache cache;
    private final ThreadPoolExecutor housekeeping;
    private final Consumer<AgentCache.Entry> hardClose;
    private final Duration timeout;
    private final long start = System.nanoTime();
    private final long deadline;

    GatewayStop(AgentCache cache, ThreadPoolExecutor housekeeping, Consumer<AgentCache.Entry> hardClose,
            Duration timeout) {
        this.cache = cache;
        this.housekeeping = housekeeping;
        this.hardClose = hardClose;
        this.timeout = timeout;
        long nanos;
        try {
            nanos = timeout.toNanos();
        } catch (ArithmeticException e) {
            nanos = Long.MAX_VALUE / 4;
        }
        this.deadline = start + Math.min(nanos, Long.MAX_VALUE / 4);
    }

    GatewayStopReport run() {
        Map<String, AgentMemory> agents = new LinkedHashMap<>();
        for (AgentCache.Entry e : cache.stop()) {
            hardClose.accept(e);
            agents.put(e.key, e.agent);
        }
        Map<String, TeardownResult> closed = new LinkedHashMap<>();
        List<String> notFinished = new ArrayList<>();
        Map<String, Throwable> failed = new LinkedHashMap<>();
        for (Map.Entry<String, AgentMemory> a : agents.entrySet()) {
            try {
                Optional<TeardownResult> result = a.getValue().awaitTeardown(remaining());
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
            LOG.warn("agent gateway stop: within {} ms, agents not closed: {}, failed: {}, housekeeping tasks left "
                    + "running: {}", timeout.toMillis(), notFinished, failed.keySet(), left);
        }
        return new GatewayStopReport(closed, notFinished, failed, terminated, left, timeout,
                Duration.ofNanos(System.nanoTime() - start));
    }

    private boolean awaitHousekeeping() {
        try {
            return housekeeping.awaitTermination(remaining().toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return housekeeping.isTerminated();
        }
    }

    /** Time left before the deadline; zero once the caller has been interrupted. */
    private Duration remaining() {
        return Thread.currentThread().isInterrupted() ? Duration.ZERO
                : Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    }
}
