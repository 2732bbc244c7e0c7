package dev.memlife;

import dev.memlife.internal.Deadline;
import dev.memlife.internal.ThrottledLog;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Runs every provider's {@link MemoryProvider#prefetch} at once on a small pool, each bounded by
 * one shared deadline on the manager's ticker, so that a slow or hung provider costs a turn at
 * most the prefetch timeout. A provider that fails is logged and skipped ({@link ProviderCalls}).
 * Thread-safe.
 *
 * <p><b>A stuck provider costs one thread, and only its own recall.</b> Each provider has at most
 * one prefetch running ({@link RegisteredProvider#prefetchInFlight}): a provider whose earlier call
 * has not returned (it outlived its turn's timeout, and the interrupt did not end it) is skipped,
 * and logged, until that call returns; the others are called on every turn as usual. So a provider
 * hung for good holds one pool thread for good, and never another provider's. (This mirrors
 * hermes-agent's {@code agent/memory_manager.py}, {@code _prefetch_provider}, which skips a
 * provider whose prefetch thread is still alive.)
 *
 * <p><b>The next turn's recall, started early</b> ({@link #queue}): the providers' calls start now,
 * on the pool, and the next {@link #prefetch} for the same query and session takes their results,
 * waiting for them no longer than a turn's prefetch would; any other prefetch discards them. One
 * such recall is kept per manager: a newer one discards the older.
 */
final class Prefetcher {

    /** At most this many prefetch threads; each provider has one call running at most. */
    static final int MAX_THREADS = 16;

    private final String managerName;
    private final ThreadPoolExecutor pool;
    private final Ticker ticker;
    private final ProviderCalls calls;
    private final ThrottledLog warnings;
    /** The recall {@link #queue} started for the next turn, if any. */
    private final AtomicReference<Queued> queued = new AtomicReference<>();

    /**
     * A recall started early: for which query and session, each provider's call (null if it was
     * not started), and for a call not started because the provider was still busy with a
     * discarded earlier call, that call.
     */
    private record Queued(String query, String sessionId, List<RegisteredProvider> providers, List<Call> calls,
            List<Call> blockedBy) {

        boolean isFor(String q, String sid, List<RegisteredProvider> ps) {
            return query.equals(q) && sessionId.equals(sid) && providers.equals(ps);
        }

        /** The call of this recall that keeps {@code p} busy: its own, or the discarded one that blocked it. */
        Call blockerOf(RegisteredProvider p) {
            int i = providers.indexOf(p);
            if (i < 0) {
                return null;
            }
            return calls.get(i) != null ? calls.get(i) : blockedBy.get(i);
        }
    }

    Prefetcher(String managerName, ThreadFactory threadFactory, Ticker ticker, ProviderCalls calls,
            ThrottledLog warnings) {
        this.managerName = managerName;
        this.ticker = ticker;
        this.calls = calls;
        this.warnings = warnings;
        this.pool = new ThreadPoolExecutor(0, MAX_THREADS, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
                threadFactory);
    }

    /**
     * The non-blank prefetch blocks, in registration order, joined by blank lines: from the recall
     * {@link #queue queued} for this query and session (and the same providers) if there is one,
     * else from calls started now. A provider still busy with a call of a discarded recall (it was
     * interrupted just now) is waited for, until the deadline, and then called: a wrong guess of
     * {@code queue} does not cost the turn that provider. Only that once: a provider stuck in such a
     * call is skipped from the next turn on, like any stuck provider.
     */
    String prefetch(List<RegisteredProvider> providers, String query, String sessionId, long timeoutNanos) {
        Deadline deadline = Deadline.afterNanos(ticker, timeoutNanos);
        Queued early = queued.getAndSet(null);
        boolean matches = early != null && early.isFor(query, sessionId, providers);
        if (early != null && !matches) {
            discard(early);
        }
        List<Future<String>> futures = new ArrayList<>(providers.size());
        for (int i = 0; i < providers.size(); i++) {
            RegisteredProvider p = providers.get(i);
            Call reused = matches ? early.calls.get(i) : null;
            if (reused != null) {
                futures.add(reused);
                continue;
            }
            Call blocker = early == null ? null : early.blockerOf(p);
            if (blocker != null && p.prefetchInFlight.get() == blocker) {
                blocker.awaitReturn(deadline);
            }
            futures.add(startOne(p, query, sessionId));
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < futures.size(); i++) {
            Future<String> f = futures.get(i);
            if (f != null) {
                append(out, await(providers.get(i), f, deadline));
            }
        }
        return out.toString();
    }

    /**
     * Starts the recall of the next turn now; never waits. A recall already queued for the same
     * query and session goes on; one for another is discarded.
     */
    void queue(List<RegisteredProvider> providers, String query, String sessionId) {
        Queued early = queued.getAndSet(null);
        if (early != null && early.isFor(query, sessionId, providers)) {
            if (!queued.compareAndSet(null, early)) {
                discard(early); // a newer one came in between: the newest wins
            }
            return;
        }
        if (early != null) {
            discard(early);
        }
        List<Call> calls = new ArrayList<>(providers.size());
        List<Call> blockedBy = new ArrayList<>(providers.size());
        for (RegisteredProvider p : providers) {
            Call c = startOne(p, query, sessionId);
            calls.add(c);
            Object holder = p.prefetchInFlight.get();
            blockedBy.add(c == null && holder instanceof Call && ((Call) holder).discarded ? (Call) holder : null);
        }
        Queued next = new Queued(query, sessionId, providers, calls, blockedBy);
        if (!queued.compareAndSet(null, next)) {
            discard(next); // another queue or prefetch call came in between: the newest wins
        }
    }

    private Call startOne(RegisteredProvider p, String query, String sessionId) {
        Call call = new Call(p, () -> calls.leased(p, "prefetch", ProviderCalls.Interrupts.LEAVE,
                () -> p.provider.prefetch(query, sessionId), t -> "", () -> ""));
        if (!p.prefetchInFlight.compareAndSet(null, call)) {
            warnings.warn(managerName + "/" + p.name + "/prefetch-stuck", "memory provider '" + p.name
                    + "': prefetch skipped, its earlier prefetch has not returned yet; it is skipped until it does", null);
            return null;
        }
        try {
            pool.execute(call);
            return call;
        } catch (RejectedExecutionException e) {
            call.returned();
            warnings.warn(managerName + "/" + p.name + "/prefetch", "memory provider '" + p.name
                    + "': prefetch skipped, all " + MAX_THREADS + " prefetch threads are busy", null);
        } catch (RuntimeException | Error e) { // the thread factory failed
            call.returned();
            warnings.warn(managerName + "/" + p.name + "/prefetch", "memory provider '" + p.name
                    + "': prefetch skipped, no prefetch thread could be made (" + e + ")", null);
        }
        return null;
    }

    /**
     * One provider's prefetch call. It holds the provider's {@link
     * RegisteredProvider#prefetchInFlight} slot from before it is started until the provider has
     * returned, or until it is cancelled before it began.
     */
    private static final class Call extends FutureTask<String> {
        private final RegisteredProvider provider;
        private final CountDownLatch returnedLatch = new CountDownLatch(1);
        /** Set when a pool thread picks the call up. */
        private volatile boolean started;
        /** Set when the recall it belongs to was discarded. */
        volatile boolean discarded;

        Call(RegisteredProvider provider, Callable<String> body) {
            super(body);
            this.provider = provider;
        }

        @Override
        public boolean cancel(boolean interrupt) {
            boolean cancelled = super.cancel(interrupt);
            if (cancelled && !started) {
                returned(); // it will never call the provider: FutureTask does not run a cancelled task
            }
            return cancelled;
        }

        @Override
        public void run() {
            started = true;
            try {
                super.run();
            } finally { // also when cancelled before it began, and the provider was never called
                returned();
            }
        }

        @Override
        protected void set(String result) {
            returned(); // before the result is published: the next turn finds the provider free
            super.set(result);
        }

        @Override
        protected void setException(Throwable t) {
            returned();
            super.setException(t);
        }

        /** The provider is free again: the slot opens, and whoever waits for it wakes. */
        void returned() {
            provider.prefetchInFlight.compareAndSet(this, null);
            returnedLatch.countDown();
        }

        /** Waits until the provider returned, or the deadline passes, or the thread is interrupted. */
        void awaitReturn(Deadline deadline) {
            try {
                deadline.await(returnedLatch);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Cancels the calls of a recall nobody will take: they are interrupted; their slots free as each returns. */
    private static void discard(Queued early) {
        for (Call c : early.calls) {
            if (c != null) {
                c.discarded = true;
                c.cancel(true);
            }
        }
    }

    private String await(RegisteredProvider p, Future<String> f, Deadline deadline) {
        try {
            return deadline.get(f);
        } catch (TimeoutException e) {
            f.cancel(true);
            warnings.warn(managerName + "/" + p.name + "/prefetch", "memory provider '" + p.name
                    + "': prefetch did not finish within the prefetch timeout and was skipped; the provider is "
                    + "skipped until that call returns", null);
        } catch (ExecutionException e) { // the provider's own failures are caught and logged inside the task
            warnings.warn(managerName + "/" + p.name + "/prefetch", "memory provider '" + p.name
                    + "': prefetch failed and was skipped", e.getCause());
        } catch (CancellationException e) {
            // a queued recall discarded by a concurrent prefetch: nothing to add
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
        Queued early = queued.getAndSet(null);
        if (early != null) {
            discard(early);
        }
        pool.shutdownNow();
    }
}
