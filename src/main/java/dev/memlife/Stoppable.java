package dev.memlife;

import java.time.Duration;

/**
 * Something that stops within a budget and reports what it did. Every memlife owner of threads or
 * connections is one (the memory manager, the gateway, the session tracker, the write-behind
 * stores, the shutdown hook), and each is {@link AutoCloseable} too: {@code close()} stops within
 * the budgets given to its builder, for try-with-resources and frameworks that close what they
 * own; call {@link #stop(Duration)} for the report. Both are idempotent: a later call returns
 * what the first did.
 *
 * <p>A functional interface, so a component of an application (an HTTP server, say) can be handed
 * to {@code ShutdownHooks.register} as a lambda that returns its own report, or null.
 *
 * @param <R> the report
 */
@FunctionalInterface
public interface Stoppable<R extends StopReport> {

    /**
     * Stops within {@code budget}: refuses new work, finishes what it can of what it holds, gives
     * up on the rest when the budget is spent, and reports which was which. memlife's owners return
     * within the budget (plus a small margin) whatever the code they call does.
     *
     * @param budget how long the stop may take
     * @return what the stop did; never null from a memlife owner
     * @throws NullPointerException if {@code budget} is null
     */
    R stop(Duration budget);
}
