package dev.memlife;

import java.util.List;

/**
 * A turn in a writer's queue: the turn itself, and what the writer needs to deliver it. The
 * writer's {@link TurnQueue} links these; the providers see them as plain {@link Turn}s. A manager
 * with a spool queues {@link LoggedTurn}s, which also know their place in it; one without pays
 * nothing for the spool: a queued write is one object of seven references and two longs.
 */
sealed class QueuedTurn extends Turn permits LoggedTurn {

    /** The providers this write goes to: the manager's list when it was accepted. */
    final RegisteredProvider[] route;
    /** The write queued after this one, while both are in the queue. */
    QueuedTurn next;

    /** A newly accepted write; its sequence number comes with its place in the queue. */
    QueuedTurn(String idPrefix, String sessionId, String userContent, String assistantContent,
            List<Message> messages, RegisteredProvider[] route) {
        this(idPrefix, sessionId, userContent, assistantContent, messages, 0, route);
    }

    QueuedTurn(String idPrefix, String sessionId, String userContent, String assistantContent,
            List<Message> messages, long acceptedAtMillis, RegisteredProvider[] route) {
        super(idPrefix, 0, sessionId, userContent, assistantContent, messages, acceptedAtMillis);
        this.route = route;
    }

    @Override
    boolean idGiven() {
        return false;
    }

    /**
     * Where the manager's write-ahead log holds this write (the position just past its record),
     * for the delivery mark; 0 without a log.
     */
    long logPosition() {
        return 0;
    }
}
