package dev.memlife.store;

import static java.util.Objects.requireNonNull;

import java.time.Instant;

/**
 * A session boundary recorded by {@link JdbcMemoryProvider#onSessionEnd}, read back by {@link
 * JdbcMemoryProvider#sessionEnds()}. Immutable and thread-safe.
 *
 * @param sessionId the session that ended
 * @param messageCount how many messages its transcript had
 * @param endedAt when the store recorded the end (millisecond precision)
 */
public record StoredSessionEnd(String sessionId, int messageCount, Instant endedAt) {

    /**
     * A recorded session end.
     *
     * @param sessionId the session that ended
     * @param messageCount how many messages its transcript had
     * @param endedAt when the store recorded the end
     * @throws NullPointerException if {@code sessionId} or {@code endedAt} is null
     */
    public StoredSessionEnd {
        requireNonNull(sessionId, "sessionId");
        requireNonNull(endedAt, "endedAt");
    }
}
