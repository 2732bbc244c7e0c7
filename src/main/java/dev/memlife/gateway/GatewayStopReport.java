package dev.memlife.gateway;

import dev.memlife.agent.TeardownResult;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What {@link AgentGateway#stop()} did: which cached agents were closed within the shared
 * deadline, which were not, and whether the housekeeping executor finished its work. Immutable
 * and thread-safe.
 */
public final class GatewayStopReport {

    private final Map<String, TeardownResult> closed;
    private final List<String> notFinished;
    private final Map<String, Throwable> failed;
    private final boolean housekeepingTerminated;
    private final int housekeepingTasksLeft;
    private final Duration timeout;
    private final Duration elapsed;

    GatewayStopReport(Map<String, TeardownResult> closed, List<String> notFinished, Map<String, Throwable> failed,
            boolean housekeepingTerminated, int housekeepingTasksLeft, Duration timeout, Duration elapsed) {
        this.closed = Map.copyOf(closed);
        this.notFinished = List.copyOf(notFinished);
        this.failed = Map.copyOf(failed);
        this.housekeepingTerminated = housekeepingTerminated;
        this.housekeepingTasksLeft = housekeepingTasksLeft;
        this.timeout = timeout;
        this.elapsed = elapsed;
    }

    /** For each agent whose teardown finished in time: the result of the teardown that owned it. */
    public Map<String, TeardownResult> closed() {
        return closed;
    }

    /** Keys of the agents whose teardown had not finished at the deadline; it goes on detached. */
    public List<String> notFinished() {
        return notFinished;
    }

    /** Keys of the agents whose teardown threw, with what it threw. */
    public Map<String, Throwable> failed() {
        return failed;
    }

    /** Whether the housekeeping executor had run every task (resets, evictions) by the deadline. */
    public boolean housekeepingTerminated() {
        return housekeepingTerminated;
    }

    /** Housekeeping tasks still running or queued at the deadline; they go on detached. */
    public int housekeepingTasksLeft() {
        return housekeepingTasksLeft;
    }

    /** True if every agent was closed, none failed, and the housekeeping executor terminated. */
    public boolean completed() {
        return notFinished.isEmpty() && failed.isEmpty() && housekeepingTerminated;
    }

    /** The shared deadline the stop had. */
    public Duration timeout() {
        return timeout;
    }

    /** How long the stop took. */
    public Duration elapsed() {
        return elapsed;
    }

    @Override
    public String toString() {
        return "GatewayStopReport[closed=" + closed.size() + ", notFinished=" + notFinished + ", failed="
                + failed.keySet() + ", housekeepingTerminated=" + housekeepingTerminated
                + (housekeepingTasksLeft == 0 ? "" : ", housekeepingTasksLeft=" + housekeepingTasksLeft)
                + ", elapsed=" + elapsed.toMillis() + "ms of " + timeout.toMillis() + "ms]";
    }
}
