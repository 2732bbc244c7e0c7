package dev.memlife.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CyclicBarrier;

/**
 * The producer threads of a benchmark: each on a daemon thread of its own, all released by one
 * barrier, all waited for. A producer that throws fails the run, with every failure attached.
 */
final class Producers {

    /** What one producer does once the barrier lets it go. */
    @FunctionalInterface
    interface Body {
        /**
         * @param index the producer's number, from 0
         * @param startedAt {@link System#nanoTime()} when the barrier tripped
         */
        void run(int index, long startedAt) throws Exception;
    }

    private Producers() {}

    /**
     * Runs {@code count} producers, threads named {@code name + index}, and waits for all of them.
     *
     * @return the nanoseconds from the barrier until the last producer finished
     * @throws IllegalStateException naming {@code what} if a producer threw
     */
    static long run(String what, int count, String name, Body body) throws Exception {
        CyclicBarrier start = new CyclicBarrier(count + 1);
        List<Throwable> failures = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        long[] startedAt = new long[1];
        for (int p = 0; p < count; p++) {
            int index = p;
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    body.run(index, startedAt[0]);
                } catch (Throwable e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                }
            }, name + p);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        startedAt[0] = System.nanoTime(); // before the barrier trips: the producers read it after
        start.await();
        for (Thread t : threads) {
            t.join();
        }
        long nanos = System.nanoTime() - startedAt[0];
        if (!failures.isEmpty()) {
            IllegalStateException e = new IllegalStateException(what + ": a producer failed");
            failures.forEach(e::addSuppressed);
            throw e;
        }
        return nanos;
    }

    /**
     * Each producer's latencies, in nanoseconds: a producer adds only to its own, and they are read
     * after {@link #run} has joined every producer.
     */
    static final class Latencies {
        private final long[][] samples;
        private final int[] counts;

        Latencies(int producers) {
            samples = new long[producers][1 << 12];
            counts = new int[producers];
        }

        void add(int producer, long nanos) {
            int n = counts[producer];
            if (n == samples[producer].length) {
                samples[producer] = Arrays.copyOf(samples[producer], n * 2);
            }
            samples[producer][n] = nanos;
            counts[producer] = n + 1;
        }

        /** Every producer's latencies, one after another. */
        long[] all() {
            long[] all = new long[Arrays.stream(counts).sum()];
            int at = 0;
            for (int p = 0; p < samples.length; p++) {
                System.arraycopy(samples[p], 0, all, at, counts[p]);
                at += counts[p];
            }
            return all;
        }
    }
}
