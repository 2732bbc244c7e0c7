package dev.memlife;

import dev.memlife.internal.Deadline;
import dev.memlife.internal.Threads;
import dev.memlife.internal.ThrottledLog;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Calls every owned provider's {@link MemoryProvider#shutdown()} once, in reverse registration
 * order, and never while a hook of that provider may still run. A provider the manager only uses
 * ({@link MemoryManager#useProvider}) is not shut down: its gate closes, so this manager calls it
 * no more, and the application shuts it down when it is done with it.
 *
 * <p>First it closes every provider's {@link ProviderGate gate}, so no hook starts on any of them
 * from then on. A provider whose gate is held (a write still running on the writer, an extraction
 * left running past its timeout, a prefetch) is shut down <em>later</em>, by the thread that
 * leaves its gate last, and reported as such. The others are shut down now, on a thread of their
 * own, waited for until a deadline on the manager's ticker: a provider that hangs in {@code
 * shutdown()} cannot hang the caller; whatever has not returned by then is reported by name and
 * left to finish detached on the (daemon) shutdown thread. If no thread can be made, they are shut
 * down on the caller's thread, without the deadline's bound, and that is logged. Each {@code
 * shutdown()} is isolated by {@link ProviderCalls#shutdown}.
 *
 * <p>It holds nothing but what it works with, the manager whose providers these are, the calls
 * that isolate each {@code shutdown()} and the manager's warnings, so it is a record.
 *
 * @param manager the manager whose providers are shut down
 * @param calls the manager's provider calls
 * @param warnings the manager's warnings
 */
record ProviderShutdown(MemoryManager manager, ProviderCalls calls, ThrottledLog warnings) {

    /** Which providers were not shut down within the budget, and which wait for a running hook. */
    record Result(List<String> notShutDown, List<String> shutDownLater) {}

    /** The manager whose provider's {@code shutdown()} this thread is inside, if any. */
    private static final ThreadLocal<Object> INSIDE = new ThreadLocal<>();

    /** Whether this thread is inside a provider's {@code shutdown()} called for {@code manager}. */
    static boolean isInside(Object manager) {
        return INSIDE.get() == manager;
    }

    /** Shuts {@code providers} down; waits for the ones shut down now until {@code deadline}. */
    Result run(List<RegisteredProvider> providers, Threads threads, Deadline deadline) {
        List<RegisteredProvider> order = new ArrayList<>(providers);
        Collections.reverse(order);
        List<RegisteredProvider> now = new ArrayList<>();
        List<String> later = new ArrayList<>();
        for (RegisteredProvider p : order) {
            if (!p.owned) {
                p.gate.close(() -> { }); // used, not owned: this manager stops calling it, and that is all
                continue;
            }
            if (p.gate.close(() -> shutDown(p, true))) {
                now.add(p);
            } else {
                later.add(p.name);
            }
        }
        if (!later.isEmpty()) {
            String name = manager.name();
            warnings.warn(name + "/shutdown-later", "memory manager '" + name + "': " + later
                    + " still run a hook (a write past the drain deadline, or a detached extraction or prefetch); "
                    + "each is shut down as soon as its hook returns, never before", null);
        }
        return new Result(shutDownNow(now, threads, deadline), List.copyOf(later));
    }

    /** @return the names of the providers whose shutdown had not returned by the deadline */
    private List<String> shutDownNow(List<RegisteredProvider> order, Threads threads, Deadline deadline) {
        if (order.isEmpty()) {
            return List.of();
        }
        // The calls run one after another, so the ones not finished are always the last getCount().
        CountDownLatch done = new CountDownLatch(order.size());
        Runnable all = () -> {
            for (RegisteredProvider p : order) {
                try {
                    shutDown(p, false);
                } finally {
                    done.countDown();
                }
            }
        };
        String name = manager.name();
        Thread thread = threads.start(all, t -> warnings.warn(name + "/shutdown-thread", "memory manager '" + name
                + "': no thread could be made for the providers' shutdown (" + t + "); shutting them down on this "
                + "thread, unbounded", null));
        if (thread == null) {
            all.run();
            return List.of();
        }
        try {
            deadline.await(done);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<String> unfinished = new ArrayList<>();
        for (RegisteredProvider p : order.subList(order.size() - (int) done.getCount(), order.size())) {
            unfinished.add(p.name);
        }
        if (!unfinished.isEmpty()) {
            warnings.warn(name + "/shutdown-budget", "memory manager '" + name + "': shutdown() of "
                    + unfinished + " did not return within " + deadline.budget().toMillis() + " ms; left running "
                    + "detached", null);
        }
        return unfinished;
    }

    /** One provider's shutdown, marked as inside it for {@link #isInside}. */
    private void shutDown(RegisteredProvider p, boolean late) {
        Object outer = INSIDE.get();
        INSIDE.set(manager);
        try {
            calls.shutdown(p, late);
        } finally {
            INSIDE.set(outer);
            ProviderOwners.release(p.provider, manager);
        }
    }
}
