package dev.memlife;

/** What became of one accepted write, as a {@link DrainReport} tells it ({@link DrainReport#statusOf}). */
public enum WriteStatus {
    /** Every provider took it without throwing. */
    DELIVERED,
    /** At least one provider threw on it; every other provider of its route still got it. */
    FAILED,
    /** The drain deadline passed before the writer started it: no provider got it. */
    ABANDONED,
    /**
     * The writer was handing it to its providers at the drain deadline; it goes on to every one of
     * them, detached, and how it ended is logged.
     */
    STILL_RUNNING,
    /** Not a write this manager accepted (another manager's id, or never accepted). */
    UNKNOWN
}
