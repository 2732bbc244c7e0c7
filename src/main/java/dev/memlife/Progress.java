package dev.memlife;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;

/**
 * What the writer has finished, as it publishes it: how many writes every provider took
 * (delivered), how many at least one provider failed, and which ones failed, by id.
 *
 * <p>Only the writer thread writes here, one chunk at a time, so the counts are published with
 * release stores and cost no atomic instruction. A failed chunk's ids are added (under {@link
 * #failedLock}, taken only when a write fails and by the drain) before its count is published, so
 * a reader that saw the count finds the ids. {@link #read()} returns one consistent pair of counts,
 * with the failed ids up to it.
 */
final class Progress {

    private static final VarHandle DELIVERED;
    private static final VarHandle FAILED;
    private static final VarHandle BATCHES;
    private static final VarHandle BATCHED_WRITES;
    private static final VarHandle LARGEST_BATCH;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            DELIVERED = lookup.findVarHandle(Progress.class, "delivered", long.class);
            FAILED = lookup.findVarHandle(Progress.class, "failed", long.class);
            BATCHES = lookup.findVarHandle(Progress.class, "batches", long.class);
            BATCHED_WRITES = lookup.findVarHandle(Progress.class, "batchedWrites", long.class);
            LARGEST_BATCH = lookup.findVarHandle(Progress.class, "largestBatch", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Writes every provider took; written only by the writer thread (release stores). */
    private volatile long delivered;
    /** Writes at least one provider failed; written only by the writer thread (release stores). */
    private volatile long failed;
    /** Batches the writer took; written only by the writer thread, once per batch (release stores). */
    private volatile long batches;
    /** Writes in those batches. */
    private volatile long batchedWrites;
    /** The most writes in one of them. */
    private volatile long largestBatch;
    /** Guards {@link #failedIds}: the writer appends (only when a write fails), the drain reads. */
    private final Object failedLock = new Object();
    private final WriteIds.Builder failedIds;

    Progress(String idPrefix) {
        this.failedIds = new WriteIds.Builder(idPrefix);
    }

    /** The counts and failed ids at one moment. */
    record Counts(long delivered, long failed, WriteIds failedIds) {}

    /** Writes finished so far, delivered or failed. */
    long finished() {
        return delivered + failed;
    }

    /** The writer: it took a batch of {@code n} writes. */
    void batchTaken(int n) {
        BATCHES.setRelease(this, batches + 1);
        BATCHED_WRITES.setRelease(this, batchedWrites + n);
        if (n > largestBatch) {
            LARGEST_BATCH.setRelease(this, (long) n);
        }
    }

    long batches() {
        return batches;
    }

    long batchedWrites() {
        return batchedWrites;
    }

    long largestBatch() {
        return largestBatch;
    }

    long delivered() {
        return delivered;
    }

    long failed() {
        return failed;
    }

    /** The writer: {@code n} more writes every provider took. */
    void delivered(int n) {
        DELIVERED.setRelease(this, delivered + n);
    }

    /** The writer: {@code batch[from, to)} failed at one provider at least. */
    void failed(List<Turn> batch, int from, int to) {
        synchronized (failedLock) {
            for (int i = from; i < to; i++) {
                failedIds.add(batch.get(i));
            }
        }
        FAILED.setRelease(this, failed + (to - from));
    }

    /** One consistent pair of counts, and the ids of the failed writes it counts. */
    Counts read() {
        long d;
        long f;
        do { // the writer moves one of them per chunk, both only up
            d = delivered;
            f = failed;
        } while (d != delivered);
        synchronized (failedLock) {
            return new Counts(d, f, failedIds.build((int) f)); // the ids were added before the count
        }
    }
}
