package dev.memlife.gateway;

import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownReport;
import dev.memlife.internal.ThrottledLog;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.BiPredicate;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A gateway's evictions with {@link AgentGateway.Builder#beforeEviction}: on the housekeeping
 * executor, the session's work is committed first; an agent whose session is clean then is released
 * (its extraction just ran: it must not run twice), and one whose session is still dirty is
 * <em>kept</em> open, its providers alive, until a later sweep ({@link #retry}) finds the session
 * committed, or the gateway's stop tears it down. A kept agent's eviction future completes when it
 * is finally torn down. Thread-safe.
 */
final class CommitBeforeEviction {

    private static final Logger LOG = LoggerFactory.getLogger(AgentGateway.class);

    private final String gateway;
    private final BiPredicate<String, AgentMemory> commit;
    private final Executor housekeeping;
    /** Releases a departed entry (without extraction); the gateway's counted soft teardown. */
    private final Function<AgentCache.Entry, CompletableFuture<TeardownReport>> release;
    private final ThrottledLog warnings = new ThrottledLog(LOG);
    /** Guarded by itself. */
    private final Map<AgentCache.Entry, CompletableFuture<TeardownReport>> kept = new IdentityHashMap<>();

    CommitBeforeEviction(String gateway, BiPredicate<String, AgentMemory> commit, Executor housekeeping,
            Function<AgentCache.Entry, CompletableFuture<TeardownReport>> release) {
        this.gateway = gateway;
        this.commit = commit;
        this.housekeeping = housekeeping;
        this.release = release;
    }

    /** Evicts a departed entry: commit, then release or keep. Never waits. */
    CompletableFuture<TeardownReport> evict(AgentCache.Entry entry) {
        CompletableFuture<TeardownReport> teardown = new CompletableFuture<>();
        onHousekeeping(() -> {
            if (committed(entry)) {
                propagate(release.apply(entry), teardown);
            } else {
                synchronized (kept) {
                    kept.put(entry, teardown);
                }
                warnings.warn("kept", "agent gateway '" + gateway + "': session '" + entry.key + "' still has "
                        + "uncommitted work after the commit before its eviction; its agent stays open, providers "
                        + "alive, until a later sweep finds it committed or the gateway stops", null);
            }
        });
        return teardown;
    }

    /** At a sweep: releases the kept agents whose sessions are committed now. */
    void retry() {
        for (AgentCache.Entry entry : entries()) {
            onHousekeeping(() -> {
                if (committed(entry)) {
                    CompletableFuture<TeardownReport> teardown = take(entry);
                    if (teardown != null) {
                        propagate(release.apply(entry), teardown);
                    }
                }
            });
        }
    }

    /** The entries kept now. */
    List<AgentCache.Entry> entries() {
        synchronized (kept) {
            return new ArrayList<>(kept.keySet());
        }
    }

    /** Stops keeping {@code entry}: its eviction future, or null if it was not kept. */
    CompletableFuture<TeardownReport> take(AgentCache.Entry entry) {
        synchronized (kept) {
            return kept.remove(entry);
        }
    }

    private boolean committed(AgentCache.Entry entry) {
        try {
            return commit.test(entry.key, entry.agent);
        } catch (RuntimeException e) {
            LOG.warn("agent gateway '{}': the commit before evicting session '{}' threw; its agent stays open",
                    gateway, entry.key, e);
            return false;
        }
    }

    /** Runs {@code work} on the housekeeping executor; on this thread if the executor refuses it. */
    private void onHousekeeping(Runnable work) {
        try {
            housekeeping.execute(work);
        } catch (RuntimeException | Error refused) {
            work.run();
        }
    }

    /** Completes {@code to} as {@code from} completes. */
    static void propagate(CompletableFuture<TeardownReport> from, CompletableFuture<TeardownReport> to) {
        from.whenComplete((result, failure) -> {
            if (failure != null) {
                to.completeExceptionally(failure);
            } else {
                to.complete(result);
            }
        });
    }
}
