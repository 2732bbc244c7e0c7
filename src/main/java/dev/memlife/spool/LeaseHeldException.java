package dev.memlife.spool;

/**
 * {@link SharedLog#agent} could not claim an agent's lease within its claim timeout: another live
 * replica holds it and keeps renewing it. The message names the holder and when its lease ends.
 * Route the session to that replica, or try again later.
 */
public final class LeaseHeldException extends IllegalStateException {

    private static final long serialVersionUID = 1L;

    /**
     * @param message which agent, which replica holds it, until when
     */
    LeaseHeldException(String message) {
        super(message);
    }
}
