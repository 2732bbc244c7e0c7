package dev.memlife;

import dev.memlife.internal.ThrottledLog;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs every provider's {@link MemoryProvider#prefetch} at once on a small pool, each bounded by
 * one shared deadline, so that a slow or hung provider costs a turn at most the prefetch timeout.
 * A provider that is still running at the deadline is interrupted and skipped. The pool has at
 * most {@link #MAX_THREADS} threads and no queue: when a hung provider holds them all, further
 * prefetches of it are skipped (and logged) instead of piling up threads. Thread-safe.
 */
final class Prefetcher {

    static final int MAX_THREADS = 16;

    private final String managerName;
    private final ThreadPoolExecutor pool;
    private final ThrottledLog warnings;

    Prefetcher(String managerName, ThreadFactory threadFactory, ThrottledLog warnings) {
        this.managerName = managerName;
        this.warnings = warnings;
        this.pool = new ThreadPoolExecutor(0, MAX_THREADS, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
                threadFactory);
    }

    /** The non-blank prefetch blocks, in registration order, joined by blank lines. */
    String prefetch(List<RegisteredProvider> providers, String query, String sessionId, long timeoutNanos) {
        List<Future<String>> futures = new ArrayList<>(providers.size());
        for (RegisteredProvider p : providers) {
            try {
                futures.add(pool.submit(() -> prefetchLeased(p, query, sessionId)));
            } catch (RejectedExecutionException e) {
                futures.add(null);
                warnings.warn(managerName + "/" + p.name + "/prefetch", "memory provider '" + p.name
                        + "': prefetch skipped, all " + MAX_THREADS + " prefetch threads are busy", null);
            } catch (RuntimeException | Error e) { // the thread factory failed
                futures.add(null);
                warnings.warn(managerName + "/" + p.name + "/prefetch", "memory provider '" + p.name
                        + "': prefetch skipped, no prefetch thread could be made (" + e + ")", null);
            }
        }
        long deadline = System.nanoTime() + timeoutNanos;
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < futures.size(); i++) {
            Future<String> f = futures.get(i);
            if (f != null) {
                append(out, await(providers.get(i), f, deadline));
            }
        }
        return out.toString();
    }

    /** Runs under a lease on the provider's gate: never after the provider's shutdown. */
    private static String prefetchLeased(RegisteredProvider p, String query, String sessionId) {
        if (!p.gate.enter()) {
            return "";
        }
        try {
            return p.provider.prefetch(query, sessionId);
        } finally {
            p.gate.exit();
        }
    }

    private String await(RegisteredProvider p, Future<String> f, long deadline) {
        try {
            return f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            warnings.warn(managerName + "/" + p.name + "/prefetch", "memory provider '" + p.name
                    + "': prefetch did not finish within the prefetch timeout and was skipped", null);
        } catch (ExecutionException e) {
            warnings.warn(managerName + "/" + p.name + "/prefetch", "memory provider '" + p.name
                    + "': prefetch failed and was skipped", e.getCause());
        } catch (InterruptedException e) {
            f.cancel(true);
            Thread.currentThread().interrupt();
        }
        return "";
    }

    private static void append(StringBuilder out, String block) {
        if (block != null && !block.isBlank()) {
            if (out.length() > 0) {
                out.append("\n\n");
            }
            out.append(block);
        }
    }

    void shutdown() {
        pool.shutdownNow();
    }
}
