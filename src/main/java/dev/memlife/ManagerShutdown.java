package dev.memlife;

import dev.memlife.internal.Checks;
import dev.memlife.internal.Deadline;
import dev.memlife.internal.Threads;
import dev.memlife.internal.ThrottledLog;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A manager's stop, once: the drain of its queue within a deadline, its write-ahead log closed,
 * its providers' {@code shutdown()} within what is left, and the {@link DrainReport}. The first
 * call runs it; a later or concurrent call returns its report, bringing its deadline forward if
 * that call's is earlier. See {@link MemoryManager#stop(Duration)} for the contract.
 */
final class ManagerShutdown {

    private static final Logger LOG = LoggerFactory.getLogger(MemoryManager.class);

    /**
     * The stop in progress: its report; its deadline on the ticker, which later calls may bring
     * forward; and the report as it stood before the providers' shutdown, for a provider that
     * calls {@code stop} from its own {@code shutdown()}.
     */
    private record Shutdown(CompletableFuture<DrainReport> report, AtomicLong deadline,
            AtomicReference<DrainReport> beforeProviders) {}

    private final MemoryManager manager;
    private final String name;
    private final Ticker ticker;
    private final Writer writer;
    private final Prefetcher prefetcher;
    private final ProviderRegistry registry;
    private final ProviderCalls calls;
    private final ThrottledLog warnings;
    private final ThreadFactory threadFactory;
    private final boolean logged;
    private final LongSupplier blankTurns;
    private final Duration drainTimeout;
    private final long providerShutdownTimeoutNanos;
    /** Set once by the first stop; later calls return the same report. */
    private final AtomicReference<Shutdown> shutdown = new AtomicReference<>();

    ManagerShutdown(MemoryManager manager, Writer writer, Prefetcher prefetcher, ProviderRegistry registry,
            ProviderCalls calls, ThrottledLog warnings, boolean logged, LongSupplier blankTurns,
            MemoryManager.Builder b) {
        this.manager = manager;
        this.name = manager.name();
        this.ticker = b.ticker();
        this.writer = writer;
        this.prefetcher = prefetcher;
        this.registry = registry;
        this.calls = calls;
        this.warnings = warnings;
        this.threadFactory = b.threadFactory().orElse(null);
        this.logged = logged;
        this.blankTurns = blankTurns;
        this.drainTimeout = b.drainTimeout;
        this.providerShutdownTimeoutNanos = b.providerShutdownTimeout.toNanos();
    }

    /** With the builder's budgets: the drain timeout for the queue, then the provider-shutdown timeout. */
    DrainReport stopWithBuilderBudgets() {
        long reserve = providerShutdownTimeoutNanos;
        return stop(Checks.saturatedAdd(Checks.saturatedNanos(drainTimeout), reserve), reserve);
    }

    /** Within {@code budget}, of which the providers' shutdown keeps a tenth, at most its timeout. */
    DrainReport stop(Duration budget) {
        long nanos = Checks.saturatedNanos(budget);
        return stop(nanos, Math.min(providerShutdownTimeoutNanos, nanos / 10));
    }

    boolean isShutdown() {
        return shutdown.get() != null;
    }

    /** Throws {@link StoppedException} for {@code method} once the stop has begun. */
    void checkRunning(String method) {
        if (shutdown.get() != null) {
            throw new StoppedException("memory manager '" + name + "'", method);
        }
    }

    /** Stops within {@code budget}, of which the queue gets all but {@code reserve}. */
    private DrainReport stop(long budget, long reserve) {
        // From a provider on the writer thread nothing drains while this call waits: no deadline later than now.
        long deadline = Checks.saturatedAdd(ticker.read(), writer.workerThread() == Thread.currentThread() ? 0 : budget);
        Shutdown mine = new Shutdown(new CompletableFuture<>(), new AtomicLong(deadline), new AtomicReference<>());
        Shutdown first = registry.whileNoneRegisters(() -> shutdown.compareAndExchange(null, mine));
        if (first != null) {
            if (first.deadline.getAndAccumulate(deadline, Math::min) > deadline) {
                writer.tightenDrainDeadline(deadline - reserve);
            }
            DrainReport sofar = first.beforeProviders.get();
            if (sofar != null && ProviderShutdown.isInside(manager)) {
                return sofar; // the shutdown this provider is part of cannot finish before it returns
            }
            return first.report.join();
        }
        DrainReport report = drainAndShutDown(mine, reserve, Duration.ofNanos(budget - reserve));
        mine.report.complete(report);
        return report;
    }

    private DrainReport drainAndShutDown(Shutdown shutdown, long reserve, Duration drainBudget) {
        long start = System.nanoTime();
        Writer.Outcome outcome = writer.drain(shutdown.deadline.get() - reserve);
        if (!outcome.abandonedIds().isEmpty() || outcome.stillRunning() > 0) {
            LOG.warn("memory manager '{}': drain deadline passed; {} writes abandoned, {} still running{}", name,
                    outcome.abandonedIds().size(), outcome.stillRunning(),
                    logged ? " (the spool keeps them for the next start)" : "");
        }
        writer.closeLog();
        prefetcher.shutdown();
        List<RegisteredProvider> all = List.of(registry.current());
        List<String> owned = all.stream().filter(p -> p.owned).map(p -> p.name).toList();
        shutdown.beforeProviders.set(report(outcome, all, owned, List.of(), drainBudget, start));
        long left = Math.max(0, shutdown.deadline.get() - ticker.read());
        ProviderShutdown.Result shut = new ProviderShutdown(manager, calls, warnings).run(all,
                Threads.numbered("memlife-shutdown-" + name).orUser(threadFactory),
                Deadline.afterNanos(ticker, Math.min(providerShutdownTimeoutNanos, left)));
        return report(outcome, all, shut.notShutDown(), shut.shutDownLater(), drainBudget, start);
    }

    private DrainReport report(Writer.Outcome outcome, List<RegisteredProvider> all, List<String> notShutDown,
            List<String> shutDownLater, Duration drainBudget, long start) {
        Map<String, Long> failures = new HashMap<>();
        Map<String, Long> interrupts = new HashMap<>();
        for (RegisteredProvider p : all) {
            putIfPositive(failures, p.name, p.failedWrites.get());
            putIfPositive(interrupts, p.name, p.interruptsCleared.get());
        }
        return new DrainReport(outcome.delivered(), outcome.failed(), outcome.failedIds(), outcome.abandonedIds(),
                outcome.stillRunningIds(), outcome.unlinked(), writer.rejectedSoFar(), blankTurns.getAsLong(),
                failures, interrupts, notShutDown, shutDownLater, drainBudget,
                Duration.ofNanos(System.nanoTime() - start));
    }

    private static void putIfPositive(Map<String, Long> map, String key, long n) {
        if (n > 0) {
            map.put(key, n);
        }
    }
}
