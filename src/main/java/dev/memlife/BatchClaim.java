package dev.memlife;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The batch the writer is working on, and who owns each of its writes: the writer claims each
 * chunk before it hands it to the first provider ({@link #claim}); a drain past its deadline
 * claims all the rest at once ({@link #claimRest}), and so does a writer dying of memlife's own
 * error ({@link #giveUpRest}). A write of the batch is thus started by the writer or claimed by the
 * other side, never both and never neither. {@link Writer}'s design notes tell the whole protocol.
 *
 * <p>{@link #lock} (the <em>batch lock</em>) guards the batch itself, {@link #current} and {@link
 * #base}: the writer replaces them under it once per batch, and the drain reads them under it, so
 * the batch cannot change under a drain. The claim word {@link #started} is atomic, and the
 * writer's claims do not take the lock.
 */
final class BatchClaim {

    /** {@link #started} once the rest of the batch is claimed, by the drain or a dying writer. */
    static final int STOPPED = Integer.MAX_VALUE;
    /** {@link #current} before a writer ran. */
    private static final List<Turn> NO_BATCH = List.of();

    /** The batch lock: held by the writer while it takes a batch, and by the drain while it claims. */
    final ReentrantLock lock = new ReentrantLock();
    /** The writer's batch: the one list it refills, set when the writer starts. */
    private List<Turn> current = NO_BATCH;
    /** Writes finished before {@link #current} was taken. */
    private long base;
    /** How many writes of {@link #current} the writer has claimed to start, or {@link #STOPPED}. */
    private final AtomicInteger started = new AtomicInteger();
    /** Set once by a drain that claimed the rest: writes of {@link #current} before it were reported running. */
    private volatile int reportedRunningEnd;

    // ---- the writer ----------------------------------------------------------------------------

    /** Under the lock: the list the (new) writer takes its batches into, from now on. */
    void install(List<Turn> batch) {
        current = batch;
    }

    /**
     * Under the lock: a retiring writer takes its list away, unless a new writer installed its
     * own. Every write the retiring writer claimed is finished, so the counts ({@code finished -
     * base == started}) describe an empty batch as well as the old one.
     */
    void uninstall(List<Turn> batch) {
        if (current == batch) {
            current = NO_BATCH;
        }
    }

    /** Under the lock: whether a writer installed its list. */
    boolean installed() {
        return current != NO_BATCH;
    }

    /** The writer's list; read by the writer itself, or by the drain under the lock. */
    List<Turn> current() {
        return current;
    }

    /** Under the lock, once the writer took a new batch into its list: nothing of it is claimed yet. */
    void begin(long finishedBefore) {
        base = finishedBefore;
        started.set(0);
    }

    /**
     * Under the lock: the first write of the batch that was not finished when {@code finished}
     * writes were; null if the batch holds none.
     */
    Turn firstUnfinished(long finished) {
        long i = finished - base;
        return i >= 0 && i < current.size() ? current.get((int) i) : null;
    }

    /** Claims {@code current[from, to)} for the writer; false if the rest was claimed by the drain. */
    boolean claim(int from, int to) {
        return started.compareAndSet(from, to);
    }

    /**
     * The writer is dying of an error of memlife's own: claims the rest of the batch for it to
     * count as failed, unless the drain claimed it first.
     *
     * @return true if the writer now owns the whole batch; false if the drain owns what it had not
     *     claimed
     */
    boolean giveUpRest() {
        int seen = started.get();
        return seen != STOPPED && started.compareAndSet(seen, STOPPED); // only the drain competes
    }

    /** Whether {@code current[.., to)} was in a drain's report as still running, when it finishes. */
    boolean reportedRunning(int to) {
        return to <= reportedRunningEnd;
    }

    // ---- the drain, under the lock ---------------------------------------------------------------

    /**
     * Claims every write of the batch the writer has not claimed.
     *
     * @return how far the writer had claimed (the end of the chunk it may still be writing), or
     *     {@link #STOPPED} if a dying writer gave the batch up first
     */
    int claimRest() {
        return started.getAndSet(STOPPED);
    }

    /** Adds the writes of the batch from {@code from} on (those the drain just claimed) to {@code out}. */
    void addFrom(int from, WriteIds.Builder out) {
        for (int i = from; i < current.size(); i++) {
            out.add(current.get(i));
        }
    }

    /**
     * Says which writes the drain reports as still running: those before {@code claimedEnd}, from
     * before the drain's snapshot on. The writer logs how each of them ends ({@link
     * #reportedRunning}).
     */
    void reportRunning(int claimedEnd) {
        reportedRunningEnd = claimedEnd;
    }

    /**
     * Adds the writes the writer claimed but has not finished to {@code out}: {@code
     * current[finished - base, claimedEnd)}, with {@code finished} read after the claim.
     */
    void addStillRunning(long finished, int claimedEnd, WriteIds.Builder out) {
        if (claimedEnd != STOPPED) {
            for (long i = finished - base; i < claimedEnd; i++) {
                out.add(current.get((int) i));
            }
        }
    }
}
