package dev.memlife.session;

import static java.util.Objects.requireNonNull;

import dev.memlife.StopReport;
import java.time.Duration;
import java.util.List;

/**
 * What one run of the {@link ShutdownHooks shutdown drain} did with every registered component.
 * Immutable and thread-safe; {@link #toString()} is the multi-line summary the hook prints.
 *
 * @param components every component, in the order they were drained
 * @param budget the shared deadline
 * @param elapsed how long the whole drain took
 */
public record ShutdownReport(List<Component> components, Duration budget, Duration elapsed) implements StopReport {

    /** How a component's drain ended. */
    public enum Status {
        /** It returned within the budget. */
        DONE,
        /** It threw; see {@link Component#failure()}. */
        FAILED,
        /** It had not returned when the budget was spent; it was left running on its daemon thread. */
        TIMED_OUT
    }

    /**
     * One component's part in the drain.
     *
     * @param name the component, e.g. {@code "tracker sessions-1"} or {@code "manager agent-7"}
     * @param status how its drain ended
     * @param report what its stop returned (a {@code SessionDrainReport}, a {@code DrainReport},
     *     ...), or null for a resource that was only closed
     * @param failure what it threw, for {@link Status#FAILED}; null otherwise
     * @param elapsed how long the hook waited for it
     */
    public record Component(String name, Status status, StopReport report, Throwable failure, Duration elapsed) {
        /**
         * Checks the components.
         *
         * @param name the component
         * @param status how its drain ended
         * @param report what its stop returned, or null
         * @param failure what it threw, for {@link Status#FAILED}; null otherwise
         * @param elapsed how long the hook waited for it
         */
        public Component {
            requireNonNull(name, "name");
            requireNonNull(status, "status");
            requireNonNull(elapsed, "elapsed");
        }

        /** {@return whether it returned in time, and its report, if any, is complete} */
        public boolean complete() {
            return status == Status.DONE && (report == null || report.complete());
        }

        @Override
        public String toString() {
            return name + ": " + status + " in " + elapsed.toMillis() + " ms"
                    + (report == null ? "" : " - " + report) + (failure == null ? "" : " - " + failure);
        }
    }

    /**
     * Copies the list; nothing may be null.
     *
     * @param components every component, in the order they were drained
     * @param budget the shared deadline
     * @param elapsed how long the whole drain took
     */
    public ShutdownReport {
        components = List.copyOf(components);
        requireNonNull(budget, "budget");
        requireNonNull(elapsed, "elapsed");
    }

    /** {@return whether every component's stop returned in time, without throwing, and completed} */
    @Override
    public boolean complete() {
        return components.stream().allMatch(Component::complete);
    }

    /** {@return the names of the components that did not {@linkplain Component#complete() complete}} */
    @Override
    public List<String> unfinished() {
        return components.stream().filter(c -> !c.complete()).map(Component::name).toList();
    }

    @Override
    public String toString() {
        long done = components.stream().filter(c -> c.status() == Status.DONE).count();
        StringBuilder out = new StringBuilder("memlife shutdown drain: ").append(done).append(" of ")
                .append(components.size()).append(" components done in ").append(elapsed.toMillis())
                .append(" ms (deadline ").append(budget.toMillis()).append(" ms)");
        for (Component c : components) {
            out.append(System.lineSeparator()).append("  ").append(c);
        }
        return out.toString();
    }
}
