package dev.memlife.session;

/** What {@link SessionCommitTracker#discard} did. */
public enum DiscardResult {
    /** The session was clean and idle; the tracker forgot it and its registered owner. */
    DISCARDED,
    /** The tracker knows no such session, or the id is null or blank; nothing changed. */
    NO_SESSION,
    /** Refused: the session has uncommitted work. */
    REFUSED_DIRTY,
    /** Refused: a commit of the session is in flight. */
    REFUSED_IN_FLIGHT
}
