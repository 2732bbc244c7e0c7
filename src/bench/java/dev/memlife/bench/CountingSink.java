package dev.memlife.bench;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The same no-op sink behind every contender: it only counts what reaches it. Written by one
 * consumer thread at a time (each contender has a single consumer), read by the benchmark thread.
 */
final class CountingSink {

    private volatile long count;

    /** Called on the contender's consumer thread. */
    @SuppressWarnings("NonAtomicVolatileUpdate") // single writer: the contender's one consumer thread
    void accept(Object item) {
        if (item != null) {
            count++;
        }
    }

    long count() {
        return count;
    }

    /** Waits until {@code target} items have arrived; fails after a minute instead of hanging. */
    void awaitCount(long target) {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        int spins = 0;
        while (count < target) {
            if (++spins > 1_000) {
                LockSupport.parkNanos(10_000);
            } else {
                Thread.onSpinWait();
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("sink received " + count + " of " + target + " items within a minute");
            }
        }
    }
}
