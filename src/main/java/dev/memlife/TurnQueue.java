package dev.memlife;

import dev.memlife.internal.LeadingPadding;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;

/**
 * The writer's bounded queue: many callers append, one taker (the writer thread) takes. A write
 * costs its caller two atomic instructions, no lock and no allocation beyond the {@link Turn}.
 *
 * <p><b>Reserving</b> counts the write and gives it its sequence number in one compare-and-set on
 * {@code word}, which also holds the closed flag: once {@link #close()} set it no reservation
 * succeeds, and the count is final. So "accepted before shutdown" is exact without a lock or a
 * second counter. The capacity check reads the taker's count only when a cached limit runs out.
 *
 * <p><b>Appending</b> is Vyukov's intrusive MPSC list: the caller swaps its turn in as the new
 * {@code tail}, then links the old tail to it through {@link Turn#next}. Between the two steps the
 * write is reserved but not yet linked, so the taker may see fewer linked writes than reserved
 * ones for a moment; it goes by the counts, never by emptiness, to know whether more is coming.
 *
 * <p><b>Taking</b> ({@link #poll()}, {@link #endTake()}, {@link #markFinished(long)}) is for one
 * thread at a time: the writer, or the drain once it has stopped the writer from taking more; the
 * {@code Writer}'s batch lock guarantees that.
 *
 * <p><b>Layout.</b> Callers write {@code word} and {@code tail} on every write; the taker writes
 * {@code head} on every write. The fields sit on cache lines of their own (the padding classes
 * below), so that neither side's writes take the other side's line away from it.
 */
final class TurnQueue extends TurnQueueTakerEnd {

    /** {@link #reserve()} results besides a sequence number. */
    static final long FULL = 0;
    static final long REJECTED = -1;
    /** The closed flag in {@code word}; the bits below it count reservations. */
    private static final long CLOSED = 1L << 62;
    private static final long COUNT = CLOSED - 1;

    private static final VarHandle WORD;
    private static final VarHandle TAIL;
    private static final VarHandle TAKER_PARKED;
    private static final VarHandle NEXT;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            WORD = lookup.findVarHandle(TurnQueueCallerEnd.class, "word", long.class);
            TAIL = lookup.findVarHandle(TurnQueueCallerEnd.class, "tail", QueuedTurn.class);
            TAKER_PARKED = lookup.findVarHandle(TurnQueueCallerEnd.class, "takerParked", boolean.class);
            NEXT = lookup.findVarHandle(QueuedTurn.class, "next", QueuedTurn.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final int capacity;
    /** Padding after the taker's fields, against whatever follows the queue in the heap. */
    long p20, p21, p22, p23, p24, p25, p26, p27;

    TurnQueue(int capacity) {
        this.capacity = capacity;
        QueuedTurn stub = new QueuedTurn("", "", "", "", List.of(), null);
        head = stub;
        tail = stub;
        limit = capacity;
        takerParked = true; // no taker runs yet: the first caller to append starts it
    }

    // ---- callers ------------------------------------------------------------------------------

    /**
     * Reserves the next write if the queue has room.
     *
     * @return the write's sequence number (1, 2, ...), {@link #FULL}, or {@link #REJECTED} once closed
     */
    long reserve() {
        while (true) {
            long w = word;
            if ((w & CLOSED) != 0) {
                return REJECTED;
            }
            if (w >= limit) {
                long fresh = taken + capacity; // the taker's line: read once per refill, not per write
                if (w >= fresh) {
                    return FULL;
                }
                limit = fresh;
            }
            if (WORD.weakCompareAndSet(this, w, w + 1)) {
                return w + 1;
            }
        }
    }

    /** {@return whether the queue is closed: every later reservation is refused} */
    boolean isClosed() {
        return (word & CLOSED) != 0;
    }

    /**
     * Appends a reserved write; never fails, never waits.
     *
     * @return true if the taker announced it would park (or none runs yet) and this caller is the
     *     one to wake it
     */
    boolean append(QueuedTurn turn) {
        QueuedTurn previous = (QueuedTurn) TAIL.getAndSet(this, turn);
        NEXT.setRelease(previous, turn);
        return takerParked && TAKER_PARKED.compareAndSet(this, true, false);
    }

    int capacity() {
        return capacity;
    }

    /** True while the queue holds as many writes as its capacity. */
    boolean isFull() {
        return untaken() >= capacity;
    }

    /** Writes reserved that the taker has not taken yet (as of its last {@link #endTake()}). */
    long untaken() {
        return reserved() - taken;
    }

    /** Writes reserved so far; final once the queue is closed. */
    long reserved() {
        return word & COUNT;
    }

    /** Refuses every later reservation; returns how many writes were reserved before, for good. */
    long close() {
        while (true) {
            long w = word;
            if ((w & CLOSED) != 0 || WORD.compareAndSet(this, w, w | CLOSED)) {
                return w & COUNT;
            }
        }
    }

    // ---- the taker ----------------------------------------------------------------------------

    /**
     * Takes the first linked write, or returns null if none is linked yet. The taken turn stays
     * the head until the next one is taken, and then drops its link, so a provider that keeps a
     * turn does not keep the writes queued after it.
     */
    QueuedTurn poll() {
        QueuedTurn h = head;
        QueuedTurn first = (QueuedTurn) NEXT.getAcquire(h);
        if (first == null) {
            return null;
        }
        h.next = null;
        head = first;
        polled++;
        return first;
    }

    /** The first linked write, without taking it; null if none is linked. Taker's end: under the batch lock. */
    QueuedTurn peek() {
        return (QueuedTurn) NEXT.getAcquire(head);
    }

    /** Publishes what {@link #poll()} took since the last call: it makes room for callers. */
    void endTake() {
        taken = polled;
    }

    /** Writes taken so far (as of the last {@link #endTake()}). */
    long taken() {
        return taken;
    }

    /** True if a write is linked and can be taken now. */
    boolean hasLinked() {
        return NEXT.getAcquire(head) != null;
    }

    /**
     * Announces that the taker is about to park; then true if it may: no write is linked or being
     * linked. A caller that appends after this sees the announcement and wakes the taker.
     */
    boolean announcePark() {
        takerParked = true;
        return tail == head;
    }

    /** The taker is running again; callers need not wake it. */
    void clearPark() {
        takerParked = false;
    }

    /** Records {@code n} more writes finished by the taker; publishes the total. */
    void markFinished(long n) {
        finished += n; // one taker at a time
    }

    /** Writes the taker finished (delivered, or failed and counted). */
    long finished() {
        return finished;
    }
}

/**
 * What callers write on every write; the padding before it keeps these fields off the cache line
 * of whatever precedes the queue in the heap.
 */
abstract class TurnQueueCallerEnd extends LeadingPadding {
    /** Reservations so far, plus the closed flag once closed. */
    volatile long word;
    /** Reservations may go up to here without reading {@code taken}; refreshed by callers. */
    volatile long limit;
    /** The last turn appended (or the initial stub). */
    volatile QueuedTurn tail;
    /** Set by the taker before it parks; cleared by the one caller that wakes it. */
    volatile boolean takerParked;
}

abstract class TurnQueuePadBetween extends TurnQueueCallerEnd {
    long p10, p11, p12, p13, p14, p15, p16, p17;
}

/** What the taker writes as it goes. */
abstract class TurnQueueTakerEnd extends TurnQueuePadBetween {
    /** The last turn taken (or the stub); its {@code next} is the first queued write. */
    QueuedTurn head;
    /** Turns polled; the taker's own count. */
    long polled;
    /** Turns taken, as published to callers (once per batch). */
    volatile long taken;
    /** Turns finished by the taker (delivered, or failed and counted). */
    volatile long finished;
}
