package dev.memlife.store;

import static java.util.Objects.requireNonNull;

import dev.memlife.Message;
import dev.memlife.Turn;
import java.time.Instant;
import java.util.List;

/**
 * One turn as it is stored in the database, read back by {@link JdbcMemoryProvider#turns(String)}.
 * Immutable and thread-safe.
 *
 * @param writeId the write id the turn was stored under (its key)
 * @param sessionId the session the turn belongs to
 * @param userContent what the user said
 * @param assistantContent what the assistant replied
 * @param messages the turn's full messages, empty if none were handed over
 * @param acceptedAt when the manager accepted the write (millisecond precision)
 * @param storedAt when the store wrote it (millisecond precision)
 */
public record StoredTurn(String writeId, String sessionId, String userContent, String assistantContent,
        List<Message> messages, Instant acceptedAt, Instant storedAt) {

    /**
     * A stored turn.
     *
     * @param writeId the write id the turn was stored under
     * @param sessionId the session the turn belongs to
     * @param userContent what the user said
     * @param assistantContent what the assistant replied
     * @param messages the turn's full messages; copied
     * @param acceptedAt when the manager accepted the write
     * @param storedAt when the store wrote it
     * @throws NullPointerException if an argument, or an element of {@code messages}, is null
     */
    public StoredTurn {
        requireNonNull(writeId, "writeId");
        requireNonNull(sessionId, "sessionId");
        requireNonNull(userContent, "userContent");
        requireNonNull(assistantContent, "assistantContent");
        messages = List.copyOf(requireNonNull(messages, "messages"));
        requireNonNull(acceptedAt, "acceptedAt");
        requireNonNull(storedAt, "storedAt");
    }

    /**
     * {@return the turn with its original write id}, to replay it through a provider (a replay is
     * idempotent).
     */
    public Turn toTurn() {
        return Turn.of(writeId, sessionId, userContent, assistantContent, messages, acceptedAt);
    }
}
