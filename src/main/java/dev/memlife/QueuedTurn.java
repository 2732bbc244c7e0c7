package dev.memlife;

import java.util.List;

/**
 * A turn in a writer's queue: the turn itself, and what the writer needs to deliver it. The
 * writer's {@link TurnQueue} links these; the providers see them as plain {@link Turn}s.
 */
final class QueuedTurn extends Turn {

    /** The providers this write goes to: the manager's list when it was accepted. */
    final RegisteredProvider[] route;
    /**
     * Where the manager's write-ahead log holds this write (the position just past its record),
     * for the delivery mark; 0 without a log. Set before the turn is linked.
     */
    long logPosition;
    /** The write queued after this one, while both are in the queue. */
    QueuedTurn next;

    /** A newly accepted write; its sequence number comes with its place in the queue. */
    QueuedTurn(String idPrefix, String sessionId, String userContent, String assistantContent,
            List<Message> messages, RegisteredProvider[] route) {
        super(idPrefix, false, 0, sessionId, userContent, assistantContent, messages, 0);
        this.route = route;
    }

    private QueuedTurn(Turn given, RegisteredProvider[] route, long logPosition) {
        super(given.writeId(), true, 0, given.sessionId(), given.userContent(), given.assistantContent(),
                given.messages(), given.acceptedAtMillis());
        this.route = route;
        this.logPosition = logPosition;
    }

    /**
     * A write replayed from the write-ahead log: its given id, contents and time, queued again for
     * {@code route}.
     */
    static QueuedTurn replayed(Turn given, RegisteredProvider[] route, long logPosition) {
        return new QueuedTurn(given, route, logPosition);
    }
}
