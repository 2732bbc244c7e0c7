package dev.memlife;

import java.util.List;

/**
 * A queued write of a manager with a write-ahead log (a spool): a {@link QueuedTurn} that also
 * knows where the log holds it, so the writer can mark it delivered there, and whether its id came
 * from the log (a write replayed after a restart keeps the id it was first accepted with).
 */
final class LoggedTurn extends QueuedTurn {

    /** Whether the id was given whole: a write replayed from the log. */
    private final boolean replayed;
    /** The position just past the write's record in the log; set before the turn is linked. */
    private long logPosition;

    /** A newly accepted write, appended to the log as it is queued ({@link #logPosition(long)}). */
    LoggedTurn(String idPrefix, String sessionId, String userContent, String assistantContent,
            List<Message> messages, RegisteredProvider[] route) {
        super(idPrefix, sessionId, userContent, assistantContent, messages, route);
        this.replayed = false;
    }

    private LoggedTurn(Turn given, RegisteredProvider[] route, long logPosition) {
        super(given.writeId(), given.sessionId(), given.userContent(), given.assistantContent(),
                given.messages(), given.acceptedAtMillis(), route);
        this.replayed = true;
        this.logPosition = logPosition;
    }

    /**
     * A write replayed from the log: its given id, contents and time, queued again for {@code
     * route}; {@code logPosition} is where the log holds it.
     */
    static LoggedTurn replayed(Turn given, RegisteredProvider[] route, long logPosition) {
        return new LoggedTurn(given, route, logPosition);
    }

    @Override
    boolean idGiven() {
        return replayed;
    }

    @Override
    long logPosition() {
        return logPosition;
    }

    /** Records where the log put the write; called once, under the log's order lock, before it is linked. */
    void logPosition(long position) {
        this.logPosition = position;
    }
}
