package dev.memlife;

import java.util.concurrent.RejectedExecutionException;

/**
 * Thrown by {@link MemoryManager#syncAll} when the write queue stayed full for the whole enqueue
 * timeout. The write was not accepted; it is counted as rejected in the manager's {@link
 * DrainReport}.
 */
public final class QueueFullException extends RejectedExecutionException {

    private static final long serialVersionUID = 1L;

    private final int capacity;
    private final long pending;

    QueueFullException(String manager, int capacity, long pending, long waitedMillis, boolean interrupted) {
        super("memory write queue of manager '" + manager + "' is full: capacity " + capacity + ", "
                + pending + " writes pending, " + (interrupted ? "interrupted after " : "waited ")
                + waitedMillis + " ms; the write was rejected");
        this.capacity = capacity;
        this.pending = pending;
    }

    /** The queue's capacity. */
    public int capacity() {
        return capacity;
    }

    /** How many writes were queued or being written when the write was rejected. */
    public long pending() {
        return pending;
    }
}
