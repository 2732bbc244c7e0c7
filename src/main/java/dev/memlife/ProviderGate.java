package dev.memlife;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Keeps one provider's hooks and its {@link MemoryProvider#shutdown()} apart: no hook starts once
 * the shutdown was decided, and {@code shutdown()} never starts while a hook still runs in the
 * provider, or may still be called by a pass that already began.
 *
 * <p>Users hold the gate: every caller-thread hook pass leases the providers it will call before
 * it calls the first ({@link #enter()}), and gives each lease back after calling it ({@link
 * #exit()}), so a pass that began before shutdown reaches every provider it planned to; the
 * writer holds one standing lease ({@link #releaseWriter()} ends it) for as long as it may still
 * hand a write to the provider. {@link #close(Runnable)} shuts the gate: when nobody holds it, the
 * shutdown runs now, on the closing thread; otherwise the last user to leave runs it, on its own
 * thread. Nothing waits: a hook hung inside a provider delays only that provider's shutdown.
 *
 * <p>Costs a compare-and-set per lease; the writer's lease is one for its whole life, so the write
 * path pays nothing. Thread-safe.
 */
final class ProviderGate {

    /** Set once the gate is closed: no lease is granted any more. */
    private static final long CLOSED = 1L << 62;
    /** Set while the writer may still hand writes to the provider. */
    private static final long WRITER = 1L << 61;
    /** The bits below count the caller-thread leases. */
    private static final long LEASES = WRITER - 1;

    private final AtomicLong word = new AtomicLong(WRITER);
    /** The shutdown to run once closed and idle; set before {@link #CLOSED}, so whoever sees both runs it. */
    private volatile Runnable onIdle;
    /** Makes sure the shutdown runs once, whoever gets there first. */
    private final AtomicBoolean ran = new AtomicBoolean();

    /** Takes a lease; false if the gate is closed (the provider is shut down, or about to be). */
    boolean enter() {
        while (true) {
            long w = word.get();
            if ((w & CLOSED) != 0) {
                return false;
            }
            if (word.compareAndSet(w, w + 1)) {
                return true;
            }
        }
    }

    /** Gives a lease back; the last user out of a closed gate runs the shutdown, here. */
    void exit() {
        runIfIdle(word.decrementAndGet());
    }

    /** The writer will not call the provider again; idempotent. */
    void releaseWriter() {
        while (true) {
            long w = word.get();
            if ((w & WRITER) == 0) {
                return;
            }
            if (word.compareAndSet(w, w & ~WRITER)) {
                runIfIdle(w & ~WRITER);
                return;
            }
        }
    }

    /**
     * Closes the gate, and arranges for {@code shutdown} to run once nobody holds it.
     *
     * @return true if nobody held the gate: the caller runs {@code shutdown} itself, now; false if
     *     a user still holds it and will run {@code shutdown} as it leaves (or already did)
     */
    boolean close(Runnable shutdown) {
        onIdle = shutdown;
        long w = word.getAndUpdate(v -> v | CLOSED);
        if ((w & (WRITER | LEASES)) != 0) {
            return false;
        }
        return ran.compareAndSet(false, true);
    }

    private void runIfIdle(long w) {
        if (w == CLOSED) {
            Runnable r = onIdle;
            if (r != null && ran.compareAndSet(false, true)) {
                r.run();
            }
        }
    }
}
