package dev.memlife;

/**
 * What {@link MemoryManager#syncAllDurable syncAllDurable} did with a write, and so what its caller
 * may do next: retry, wait, or answer the user.
 *
 * <p>The three outcomes differ in what a retry would do. A write that was {@linkplain #REJECTED
 * rejected} was never queued: retrying it is safe. A write that is {@linkplain #NOT_YET_DURABLE
 * not yet durable} was accepted: it is in the spool and will be delivered, so retrying it would
 * store the turn twice (a retry is a new write, with a new id); wait for it instead.
 */
public enum Durability {

    /**
     * Not accepted: nothing was queued or spooled, and the manager counted it (a blank turn, or
     * the manager is stopping). Retrying is safe, on a manager that is running.
     */
    REJECTED,

    /**
     * Accepted, but not yet forced to disk when the wait ended (the timeout passed, or the caller
     * was interrupted). The write is in the spool: it survives kill -9 and an OOM kill already,
     * and will be delivered; only power loss or a kernel panic before the next force may lose it.
     * Do not retry it: wait for it with {@link MemoryManager#awaitDurable}, or answer the user
     * knowing that.
     */
    NOT_YET_DURABLE,

    /** Accepted and forced to disk: it survives power loss, and will be delivered. */
    DURABLE;

    /** {@return whether the write was accepted: it is queued and will be delivered, so it must not be retried} */
    public boolean accepted() {
        return this != REJECTED;
    }

    /** {@return whether the write is on disk: it survives power loss} */
    public boolean durable() {
        return this == DURABLE;
    }
}
