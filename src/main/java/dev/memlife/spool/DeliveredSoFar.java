package dev.memlife.spool;

import dev.memlife.internal.LeadingPadding;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * How far the writer thread has finished writes ({@link Spool#delivered}), and whether it has
 * asked the committer to record that. The writer updates it after every write a provider took,
 * so it lives on cache lines of its own: in the spool's object it would share a line with the
 * fields every caller reads on every append, and make each of those reads a miss. The writer
 * publishes with release stores, not volatile ones, which would cost a full fence per write; so
 * the committer may miss the last update for a moment, and looks again before it parks and
 * before it exits ({@link Spool#hasWork}).
 */
final class DeliveredSoFar extends DeliveredSoFarFields {

    private static final VarHandle POSITION;
    private static final VarHandle COUNT;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            POSITION = lookup.findVarHandle(DeliveredSoFarFields.class, "position", long.class);
            COUNT = lookup.findVarHandle(DeliveredSoFarFields.class, "count", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Keeps whatever the JVM places after this object off the fields' cache line. */
    long p10, p11, p12, p13, p14, p15, p16, p17;

    /** Starts at the delivery mark an open found. */
    DeliveredSoFar(long position) {
        this.position = position;
    }

    /**
     * The writer thread, the only one that calls this: every write up to {@code position} is
     * finished, {@code writes} more than before.
     *
     * @return true if the committer should be woken to record it: it was not asked since its
     *     last pass began
     */
    boolean add(long position, int writes) {
        if (position > this.position) {
            POSITION.setRelease(this, position);
        }
        COUNT.setRelease(this, count + writes);
        if (wakeAsked) {
            return false;
        }
        wakeAsked = true;
        return true;
    }

    /** The committer begins a pass: the writer's next update asks for another. */
    void passBegins() {
        wakeAsked = false;
    }

    /** {@return whether the writer asked for a pass that has not begun} */
    boolean wakeAsked() {
        return wakeAsked;
    }

    /** {@return the position of the last write finished} */
    long position() {
        return position;
    }

    /** {@return the writes finished this run} */
    long count() {
        return count;
    }
}

/** What the writer writes on every write finished, after padding against what precedes it. */
abstract class DeliveredSoFarFields extends LeadingPadding {
    /** Written by the writer only, with release stores. */
    volatile long position;
    /** Written by the writer only, with release stores. */
    volatile long count;
    /** Set by the writer when it wakes the committer; cleared by the committer as a pass begins. */
    volatile boolean wakeAsked;
}
