package dev.memlife;

import java.util.concurrent.RejectedExecutionException;

/**
 * Thrown by {@link MemoryManager#syncAll} when the write queue stayed full for the whole enqueue
 * timeout. The write was not accepted; it is counted as rejected in the manager's {@link
 * DrainReport}.
 */
public final class QueueFullException extends RejectedExecutionException {

    private static final long serialVersionUID = 1L;

    /** The queue's capacity. */
    private final int capacity;
    /** The writes queued or being written at the rejection. */
    private final long pending;

    QueueFullException(String manager, int capacity, long pending, long waitedMillis, boolean interrupted) {
        super("memory write queue of manager '" + manager + "' is full: capacity " + capacity + ", "
                + pending + " writes pending, " + (interrupted ? "interrupted after " : "waited ")
                + waitedMillis + " ms; the write was rejected");
        this.capacity = capacity;
        this.pending = pending;
    }

    /** {@return the queue's capacity, in writes} */
    public int capacity() {
        return capacity;
    }

    /** {@return how many writes were queued or being written when the write was rejected} */
    public long pending() {
        return pending;
    }
}
