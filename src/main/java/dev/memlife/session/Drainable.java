package dev.memlife.session;

import java.time.Duration;

/**
 * A component the {@link ShutdownHooks shutdown hook} drains under its shared deadline, such as a
 * gateway: {@code hooks.register("gateway", gateway::stop)} for any {@code stop(Duration)} that
 * returns its report.
 */
@FunctionalInterface
public interface Drainable {

    /**
     * Drains the component, taking at most {@code budget} if it can. The hook calls it on a daemon
     * thread of its own and stops waiting for it when the budget is spent.
     *
     * @param budget what is left of the shared deadline
     * @return a report for the shutdown summary (its {@code toString()}), or null
     * @throws Exception if the drain failed; the summary records it
     */
    Object drain(Duration budget) throws Exception;
}
