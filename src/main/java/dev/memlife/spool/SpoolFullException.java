package dev.memlife.spool;

import java.nio.file.Path;
import java.util.concurrent.RejectedExecutionException;

/**
 * Thrown by {@code syncAll} when the manager's spool holds as many bytes as its size bound allows:
 * the write was not accepted, nothing was queued, and it is counted as rejected (in the manager's
 * figures, and in the spool's {@link dev.memlife.SpoolFigures#rejectedFull()}). The spool empties
 * as the providers take its writes; a spool that stays full means the providers have stopped
 * taking writes, or the bound is too small for the backlog the service must survive.
 */
public final class SpoolFullException extends RejectedExecutionException {

    private static final long serialVersionUID = 1L;

    private final transient Path directory;
    /** The bytes the spool held when it refused the write. */
    private final long bytes;
    /** The spool's size bound. */
    private final long maxBytes;

    SpoolFullException(Path directory, long bytes, long maxBytes, long writeBytes, String managerName) {
        super("the spool of memory manager '" + managerName + "' in " + directory + " is full: it holds " + bytes
                + " bytes and its bound is " + maxBytes + " bytes, too little for one more write of " + writeBytes
                + " bytes; the write was not accepted and is counted as rejected");
        this.directory = directory;
        this.bytes = bytes;
        this.maxBytes = maxBytes;
    }

    /** {@return the spool's directory} */
    public Path directory() {
        return directory;
    }

    /** {@return the bytes the spool held when it refused the write} */
    public long bytes() {
        return bytes;
    }

    /** {@return the spool's size bound} */
    public long maxBytes() {
        return maxBytes;
    }
}
