package dev.memlife.gateway;

import static java.util.Objects.requireNonNull;

import dev.memlife.agent.TeardownResult;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What {@link AgentGateway#stop()} did: which cached agents were closed within the shared
 * deadline, which were not, and whether the housekeeping executor finished its work. Immutable
 * and thread-safe.
 *
 * @param closed for each agent whose teardown finished in time: the result of the teardown that
 *     owned it
 * @param notFinished keys of the agents whose teardown had not finished at the deadline; it goes
 *     on detached
 * @param failed keys of the agents whose teardown threw, with what it threw
 * @param housekeepingTerminated whether the housekeeping executor had run every task (resets,
 *     evictions) by the deadline
 * @param housekeepingTasksLeft housekeeping tasks still running or queued at the deadline; they go
 *     on detached
 * @param budget the shared deadline the stop had
 * @param elapsed how long the stop took
 */
public record GatewayStopReport(Map<String, TeardownResult> closed, List<String> notFinished,
        Map<String, Throwable> failed, boolean housekeepingTerminated, int housekeepingTasksLeft, Duration budget,
        Duration elapsed) {

    /**
     * Copies the collections; nothing may be null.
     *
     * @param closed for each agent whose teardown finished in time: the result of the teardown that
     *     owned it
     * @param notFinished keys of the agents whose teardown had not finished at the deadline; it goes
     *     on detached
     * @param failed keys of the agents whose teardown threw, with what it threw
     * @param housekeepingTerminated whether the housekeeping executor had run every task (resets,
     *     evictions) by the deadline
     * @param housekeepingTasksLeft housekeeping tasks still running or queued at the deadline; they go
     *     on detached
     * @param budget the shared deadline the stop had
     * @param elapsed how long the stop took
     */
    public GatewayStopReport {
        closed = Map.copyOf(closed);
        notFinished = List.copyOf(notFinished);
        failed = Map.copyOf(failed);
        requireNonNull(budget, "budget");
        requireNonNull(elapsed, "elapsed");
    }

    /** {@return true if every agent was closed, none failed, and the housekeeping executor terminated} */
    public boolean complete() {
        return notFinished.isEmpty() && failed.isEmpty() && housekeepingTerminated;
    }

    @Override
    public String toString() {
        return "GatewayStopReport[closed=" + closed.size() + ", notFinished=" + notFinished + ", failed="
                + failed.keySet() + ", housekeepingTerminated=" + housekeepingTerminated
                + (housekeepingTasksLeft == 0 ? "" : ", housekeepingTasksLeft=" + housekeepingTasksLeft)
                + ", elapsed=" + elapsed.toMillis() + "ms of " + budget.toMillis() + "ms]";
    }
}
