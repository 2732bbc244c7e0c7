package dev.memlife.session;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.List;

/**
 * What one run of the {@link ShutdownHooks shutdown drain} did with every registered component.
 * Immutable and thread-safe; {@link #toString()} is the multi-line summary the hook prints.
 */
public final class ShutdownReport {

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

    private final List<Component> components;
    private final Duration deadline;
    private final Duration elapsed;

    ShutdownReport(List<Component> components, Duration deadline, Duration elapsed) {
        this.components = List.copyOf(components);
        this.deadline = deadline;
        this.elapsed = elapsed;
    }

    /** Every component, in the order they were drained. */
    public List<Component> components() {
        return components;
    }

    /** Whether every component's drain returned without throwing. */
    public boolean allDone() {
        return components.stream().allMatch(c -> c.status() == Status.DONE);
    }

    /** The shared deadline. */
    public Duration deadline() {
        return deadline;
    }

    /** How long the whole drain took. */
    public Duration elapsed() {
        return elapsed;
    }

    @Override
    public String toString() {
        long done = components.stream().filter(c -> c.status() == Status.DONE).count();
        StringBuilder out = new StringBuilder("memlife shutdown drain: ").append(done).append(" of ")
                .append(components.size()).append(" components done in ").append(elapsed.toMillis())
                .append(" ms (deadline ").append(deadline.toMillis()).append(" ms)");
        for (Component c : components) {
            out.append(System.lineSeparator()).append("  ").append(c);
        }
        return out.toString();
    }
}
