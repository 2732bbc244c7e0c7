package dev.memlife;

import static java.util.Objects.requireNonNull;

import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * One completed turn handed to the providers: the user's message, the assistant's reply, the
 * session it belongs to, and optionally the full messages of the turn. Immutable from the moment
 * a provider sees it: memlife sets its sequence number and time before that. Pass it to other
 * threads through a thread-safe handoff (a concurrent collection, an executor), as usual.
 *
 * <p>Every turn carries a {@link #writeId() write id} that is unique across managers and
 * processes and stable for the life of the turn, so a store can make its writes idempotent: a
 * replayed turn has the same id as the original.
 *
 * <p>A pure value: a turn holds what it says and nothing of the machinery that delivers it. The
 * writer queues each accepted turn as a {@code QueuedTurn} (a {@code LoggedTurn} with a spool),
 * package-private subclasses that add its queue link, its providers and its place in the spool, so
 * a queued write costs one object; a turn a provider keeps holds no queue, provider or spool.
 */
public sealed class Turn permits QueuedTurn {

    /**
     * Write ids are {@code prefix:seq}; a turn built from a stored id keeps it whole ({@link
     * #idGiven}). The writer assigns {@code seq}, its place in the queue, once, when it accepts the
     * turn and before any other thread can see it; it never changes after. A turn with a given id
     * gets a place in the queue too (a spooled write replayed), but its id stays as given.
     */
    private final String idPrefix;
    private long idSeq;
    private final String sessionId;
    private final String userContent;
    private final String assistantContent;
    private final List<Message> messages;
    /** Set by the writer when it takes the turn off its queue (see {@link #acceptedAt()}). */
    private long acceptedAtMillis;

    Turn(String idPrefix, long idSeq, String sessionId, String userContent,
            String assistantContent, List<Message> messages, long acceptedAtMillis) {
        this.idPrefix = idPrefix;
        this.idSeq = idSeq;
        this.sessionId = sessionId;
        this.userContent = userContent;
        this.assistantContent = assistantContent;
        this.messages = messages;
        this.acceptedAtMillis = acceptedAtMillis;
    }

    /** Gives a newly accepted turn its sequence number, before the turn is queued. */
    void assignSeq(long seq) {
        this.idSeq = seq;
    }

    /** The turn's place in its manager's queue, or -1 for a turn built from a stored id and not queued. */
    long seq() {
        return idSeq;
    }

    /**
     * Whether the write id was given whole ({@link #of}, a replayed write) rather than made from the
     * queue place. A turn of this class always has its id given; a newly accepted queued write
     * says otherwise. (A method, not a field: a queued write costs no byte for it.)
     */
    boolean idGiven() {
        return true;
    }

    /** When the writer took the turn, in epoch milliseconds (see {@link #acceptedAt()}). */
    long acceptedAtMillis() {
        return acceptedAtMillis;
    }

    /**
     * Stamps the turn as the writer takes it off the queue, before any provider sees it; a replayed
     * turn keeps the time it was first accepted.
     */
    void stampAccepted(long epochMillis) {
        if (acceptedAtMillis == 0) {
            this.acceptedAtMillis = epochMillis;
        }
    }

    /**
     * A turn with a known write id, for a store or spool that replays what it saved earlier, and
     * for tests.
     *
     * @param writeId the write id, kept whole
     * @param sessionId the session the turn belongs to
     * @param userContent what the user said
     * @param assistantContent what the assistant replied
     * @param messages the turn's full messages, or an empty list; copied
     * @param acceptedAt when the write was accepted; kept to the millisecond
     * @return the turn
     * @throws NullPointerException naming the first null argument
     * @throws IllegalArgumentException if {@code writeId} is blank
     */
    public static Turn of(String writeId, String sessionId, String userContent,
            String assistantContent, List<Message> messages, Instant acceptedAt) {
        requireNonNull(writeId, "writeId");
        if (writeId.isBlank()) {
            throw new IllegalArgumentException("writeId must not be blank");
        }
        return new Turn(writeId, -1, requireNonNull(sessionId, "sessionId"),
                requireNonNull(userContent, "userContent"),
                requireNonNull(assistantContent, "assistantContent"),
                List.copyOf(requireNonNull(messages, "messages")),
                requireNonNull(acceptedAt, "acceptedAt").toEpochMilli());
    }

    /** {@return the id that identifies this write wherever it is stored or replayed} */
    public String writeId() {
        return idGiven() ? idPrefix : idPrefix + ':' + idSeq;
    }

    /** {@return the session the turn belongs to; may be empty, never null} */
    public String sessionId() {
        return sessionId;
    }

    /** {@return what the user said; never blank in a turn the manager accepted} */
    public String userContent() {
        return userContent;
    }

    /** {@return what the assistant replied; never null} */
    public String assistantContent() {
        return assistantContent;
    }

    /** {@return the turn's full messages if the caller handed them over, else an empty list} */
    public List<Message> messages() {
        return messages;
    }

    /**
     * When the manager's writer took the write off its queue, on the wall clock with millisecond
     * precision: within microseconds of {@code syncAll} while the providers keep up, later by the
     * backlog when they fall behind. A manager's turns carry non-decreasing times in queue order.
     * (The writer stamps a whole batch with one clock read; reading the clock on the caller's
     * thread cost more than the rest of {@code syncAll} together.)
     *
     * @return the time the writer took the write, or the time given to {@link #of}
     */
    public Instant acceptedAt() {
        return Instant.ofEpochMilli(acceptedAtMillis);
    }

    /** Turns are equal when their write ids are equal. */
    @Override
    public boolean equals(Object o) {
        return o instanceof Turn && ((Turn) o).writeId().equals(writeId());
    }

    @Override
    public int hashCode() {
        return Objects.hashCode(writeId());
    }

    @Override
    public String toString() {
        return "Turn[" + writeId() + ", session=" + sessionId + ", user=" + abbreviate(userContent)
                + ", assistant=" + abbreviate(assistantContent) + "]";
    }

    private static String abbreviate(String s) {
        return s.length() <= 40 ? '"' + s + '"' : '"' + s.substring(0, 37) + "...\"(" + s.length() + " chars)";
    }
}
