package dev.memlife.gateway;

import static java.util.Objects.requireNonNull;

import dev.memlife.StopReport;
import dev.memlife.agent.TeardownReport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What {@link AgentGateway#stop(Duration)} did: which cached agents were closed within the shared
 * deadline, which were not, and whether the housekeeping executor finished its work. Immutable
 * and thread-safe.
 *
 * @param stillLeased keys of the agents whose lease (a request in flight) was still open when the
 *     stop stopped waiting for leases, at half its budget; they were torn down anyway
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
public record GatewayStopReport(List<String> stillLeased, Map<String, TeardownReport> closed, List<String> notFinished,
        Map<String, Throwable> failed, boolean housekeepingTerminated, int housekeepingTasksLeft, Duration budget,
        Duration elapsed) implements StopReport {

    /**
     * Copies the collections; nothing may be null.
     *
     * @param stillLeased keys of the agents whose lease was still open when the stop stopped waiting
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
        stillLeased = List.copyOf(stillLeased);
        closed = Map.copyOf(closed);
        notFinished = List.copyOf(notFinished);
        failed = Map.copyOf(failed);
        requireNonNull(budget, "budget");
        requireNonNull(elapsed, "elapsed");
    }

    /**
     * {@return true if every lease was released in time, every agent was torn down, none failed, and
     * the housekeeping executor terminated}
     */
    @Override
    public boolean complete() {
        return stillLeased.isEmpty() && notFinished.isEmpty() && failed.isEmpty() && housekeepingTerminated;
    }

    /**
     * {@return the keys of the agents whose teardown had not finished at the deadline, then of
     * those whose teardown failed (the housekeeping tasks left are only counted)}
     */
    @Override
    public List<String> unfinished() {
        List<String> keys = new ArrayList<>(notFinished);
        failed.keySet().stream().sorted().forEach(keys::add);
        return List.copyOf(keys);
    }

    @Override
    public String toString() {
        return "GatewayStopReport[" + (stillLeased.isEmpty() ? "" : "stillLeased=" + stillLeased + ", ")
                + "closed=" + closed.size() + ", notFinished=" + notFinished + ", failed="
                + failed.keySet() + ", housekeepingTerminated=" + housekeepingTerminated
                + (housekeepingTasksLeft == 0 ? "" : ", housekeepingTasksLeft=" + housekeepingTasksLeft)
                + ", elapsed=" + elapsed.toMillis() + "ms of " + budget.toMillis() + "ms]";
    }
}
