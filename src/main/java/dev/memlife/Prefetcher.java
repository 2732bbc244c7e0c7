package dev.memlife;

import dev.memlife.internal.Deadline;
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
 * one shared deadline on the manager's ticker, so that a slow or hung provider costs a turn at
 * most the prefetch timeout. A provider that is still running at the deadline is interrupted and
 * skipped; one that fails is logged and skipped ({@link ProviderCalls}). The pool has at most
 * {@link #MAX_THREADS} threads and no queue: when a hung provider holds them all, further
 * prefetches of it are skipped (and logged) instead of piling up threads. Thread-safe.
 */
final class Prefetcher {

    static final int MAX_THREADS = 16;

    private final String managerName;
    private final ThreadPoolExecutor pool;
    private final Ticker ticker;
    private final ProviderCalls calls;
    private final ThrottledLog warnings;

    Prefetcher(String managerName, ThreadFactory threadFactory, Ticker ticker, ProviderCalls calls,
            ThrottledLog warnings) {
        this.managerName = managerName;
        this.ticker = ticker;
        this.calls = calls;
        this.warnings = warnings;
        this.pool = new ThreadPoolExecutor(0, MAX_THREADS, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
                threadFactory);
    }

    /** The non-blank prefetch blocks, in registration order, joined by blank lines. */
    String prefetch(List<RegisteredProvider> providers, String query, String sessionId, long timeoutNanos) {
        List<Future<String>> futures = new ArrayList<>(providers.size());
        for (RegisteredProvider p : providers) {
            try {
                // Interrupts are left: a prefetch past its timeout is interrupted by this class, not by the provider.
                futures.add(pool.submit(() -> calls.leased(p, "prefetch", ProviderCalls.Interrupts.LEAVE,
                        () -> p.provider.prefetch(query, sessionId), t -> "", () -> "")));
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
        Deadline deadline = Deadline.afterNanos(ticker, timeoutNanos);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < futures.size(); i++) {
            Future<String> f = futures.get(i);
            if (f != null) {
                append(out, await(providers.get(i), f, deadline));
            }
        }
        return out.toString();
    }

    private String await(RegisteredProvider p, Future<String> f, Deadline deadline) {
        try {
            return deadline.get(f);
        } catch (TimeoutException e) {
            f.cancel(true);
            warnings.warn(managerName + "/" + p.name + "/prefetch", "memory provider '" + p.name
                    + "': prefetch did not finish within the prefetch timeout and was skipped", null);
        } catch (ExecutionException e) { // the provider's own failures are caught and logged inside the task
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
