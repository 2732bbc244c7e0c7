package dev.memlife;

import static java.util.Objects.requireNonNull;

import java.util.concurrent.RejectedExecutionException;

/**
 * Thrown when work is handed to a memlife component that has been shut down, stopped or closed: a
 * {@link MemoryManager} after {@code stop}, an agent gateway after {@code stop}. The work
 * was not taken. Like {@link QueueFullException} it is a {@link RejectedExecutionException}, so a
 * caller can treat both "refused" cases alike (for example, answer 503 and let the client retry
 * elsewhere).
 */
public final class StoppedException extends RejectedExecutionException {

    private static final long serialVersionUID = 1L;

    /** What refused the work. */
    private final String component;
    /** What was refused. */
    private final String operation;

    /**
     * @param component what refused, as its messages name it, e.g. {@code memory manager 'chat-7'}
     * @param operation what was refused, e.g. {@code addProvider} or {@code lease of key chat:1}
     */
    public StoppedException(String component, String operation) {
        super(requireNonNull(component, "component") + " is stopped; " + requireNonNull(operation, "operation")
                + " refused");
        this.component = component;
        this.operation = operation;
    }

    /** {@return what refused the work, e.g. {@code memory manager 'chat-7'}} */
    public String component() {
        return component;
    }

    /** {@return what was refused, e.g. {@code addProvider}} */
    public String operation() {
        return operation;
    }
}
