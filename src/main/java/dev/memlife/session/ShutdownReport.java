package dev.memlife.session;

import static java.util.Objects.requireNonNull;

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
public record ShutdownReport(List<Component> components, Duration budget, Duration elapsed) {

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
     * @param report what its drain returned (a {@code SessionDrainReport}, a {@code DrainReport},
     *     ...), or null
     * @param failure what it threw, for {@link Status#FAILED}; null otherwise
     * @param elapsed how long the hook waited for it
     */
    public record Component(String name, Status status, Object report, Throwable failure, Duration elapsed) {
        /**
         * Checks the components.
         *
         * @param name the component
         * @param status how its drain ended
         * @param report what its drain returned, or null
         * @param failure what it threw, for {@link Status#FAILED}; null otherwise
         * @param elapsed how long the hook waited for it
         */
        public Component {
            requireNonNull(name, "name");
            requireNonNull(status, "status");
            requireNonNull(elapsed, "elapsed");
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

    /** {@return whether every component's drain returned without throwing} */
    public boolean complete() {
        return components.stream().allMatch(c -> c.status() == Status.DONE);
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
