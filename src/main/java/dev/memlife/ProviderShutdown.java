package dev.memlife;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * Calls every provider's {@link MemoryProvider#shutdown()} once, in reverse registration order, on
 * a thread of its own, and waits for them at most a budget: a provider that hangs in shutdown
 * cannot hang the caller. Whatever has not returned by then is reported by name and left to finish
 * detached on the (daemon) shutdown thread.
 */
final class ProviderShutdown {

    private ProviderShutdown() {}

    /**
     * @return the names of the providers whose shutdown had not returned within the budget
     */
    static List<String> run(String managerName, List<RegisteredProvider> providers, ThreadFactory threadFactory,
            long budgetNanos, ThrottledLog warnings) {
        if (providers.isEmpty()) {
            return List.of();
        }
        List<RegisteredProvider> order = new ArrayList<>(providers);
        Collections.reverse(order);
        // The calls run one after another, so the ones not finished are always the last getCount().
        CountDownLatch done = new CountDownLatch(order.size());
        Thread thread = threadFactory.newThread(() -> {
            for (int i = 0; i < order.size(); i++) {
                RegisteredProvider p = order.get(i);
                try {
                    p.provider.shutdown();
                } catch (Throwable t) {
                    Writer.rethrowIfFatal(t);
                    warnings.warn(managerName + "/" + p.name + "/shutdown", "memory provider '" + p.name
                            + "' of manager '" + managerName + "' failed in shutdown()", t);
                } finally {
                    done.countDown();
                }
            }
        });
        if (thread == null) {
            throw new IllegalStateException("thread factory returned null for the shutdown of manager '"
                    + managerName + "'");
        }
        thread.start();
        try {
            done.await(budgetNanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<String> unfinished = new ArrayList<>();
        for (RegisteredProvider p : order.subList(order.size() - (int) done.getCount(), order.size())) {
            unfinished.add(p.name);
        }
        if (!unfinished.isEmpty()) {
            warnings.warn(managerName + "/shutdown-budget", "memory manager '" + managerName + "': shutdown() of "
                    + unfinished + " did not return within " + TimeUnit.NANOSECONDS.toMillis(budgetNanos)
                    + " ms; left running detached", null);
        }
        return unfinished;
    }
}
