package dev.memlife.bench;

import dev.memlife.MemoryManager;
import dev.memlife.MemoryProvider;
import dev.memlife.Turn;
import dev.memlife.spool.Spool;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * Latency with the spool on, behind a provider that takes 1 ms per write (issue 14, part 2).
 *
 * <ul>
 *   <li>{@link #notWaiting}: one producer calls {@code syncAll} once every {@value #PACE_NANOS} ns
 *       (50,000 writes/s, spinning between calls as {@link LatencyBenchmark} does), without waiting
 *       for the disk; the time of every call.
 *   <li>{@link #waiting}: {@code producers} threads each call {@code syncAllDurable} and then think
 *       for a random 0 to 2 ms (about 1,000 writes/s each); the time of every call, from its start
 *       until the write was confirmed on disk.
 * </ul>
 * The provider delivers only 1,000 writes/s, so the queue grows by every write beyond that; a
 * queue capacity of 4,000,000 (and the spool's default 1 GiB) holds every write of a run, so no
 * call ever waits for room. The first second of each run is a warm-up and not sampled.
 */
final class SpoolLatency {

    static final long PACE_NANOS = 20_000;
    static final int QUEUE_CAPACITY = 4_000_000;

    /** Percentiles of a run's samples, in nanoseconds. */
    record Percentiles(String what, int producers, long samples, double p50, double p99, double p999, double max,
            long writesQueuedAtEnd, long[] sorted) {

        /** The percentiles of several runs' samples together. */
        static Percentiles pooled(List<Percentiles> runs) {
            long[] all = runs.stream().flatMapToLong(r -> Arrays.stream(r.sorted())).toArray();
            Percentiles first = runs.get(0);
            return percentiles(first.what(), first.producers(), all, all.length, -1);
        }
    }

    private SpoolLatency() {}

    /** {@code syncAll} without waiting for durability, one producer paced at 50,000 writes/s. */
    static Percentiles notWaiting(Duration time) throws Exception {
        Path dir = Files.createTempDirectory("memlife-spool-latency");
        try {
            MemoryManager manager = slowManager(dir, "spool-latency");
            long warmUntil = System.nanoTime() + 1_000_000_000L;
            long end = warmUntil + time.toNanos();
            long[] samples = new long[(int) (time.toNanos() / PACE_NANOS) + 16];
            int n = 0;
            long next = System.nanoTime();
            while (true) {
                next += PACE_NANOS;
                long now;
                while ((now = System.nanoTime()) < next) {
                    Thread.onSpinWait();
                }
                if (now >= end) {
                    break;
                }
                long t0 = System.nanoTime();
                boolean ok = manager.syncAll(Contender.USER, Contender.ASSISTANT, Contender.SESSION);
                long t1 = System.nanoTime();
                if (!ok) {
                    throw new IllegalStateException("a write was rejected");
                }
                if (t0 >= warmUntil && n < samples.length) {
                    samples[n++] = t1 - t0;
                }
            }
            long queued = manager.pendingWrites();
            manager.stop(Duration.ZERO); // the queued writes are abandoned; the spool keeps them
            return percentiles("syncAll, not waiting for the disk", 1, samples, n, queued);
        } finally {
            Files2.deleteTree(dir);
        }
    }

    /** {@code syncAllDurable} from {@code producers} threads, each thinking 0 to 2 ms between writes. */
    static Percentiles waiting(int producers, Duration time) throws Exception {
        Path dir = Files.createTempDirectory("memlife-spool-latency-durable");
        try {
            MemoryManager manager = slowManager(dir, "spool-latency-durable");
            Producers.Latencies latencies = new Producers.Latencies(producers);
            long queued;
            try {
                Producers.run("syncAllDurable", producers, "spool-latency-producer-", (index, startedAt) -> {
                    long warmUntil = startedAt + 1_000_000_000L;
                    long end = warmUntil + time.toNanos();
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    while (true) {
                        long t0 = System.nanoTime();
                        if (t0 >= end) {
                            break;
                        }
                        boolean ok = manager.syncAllDurable(Contender.USER, Contender.ASSISTANT, Contender.SESSION,
                                List.of(), Duration.ofSeconds(10)).durable();
                        long t1 = System.nanoTime();
                        if (!ok) {
                            throw new IllegalStateException("a write was not confirmed within 10 s");
                        }
                        if (t0 >= warmUntil) {
                            latencies.add(index, t1 - t0);
                        }
                        LockSupport.parkNanos(random.nextLong(2_000_000));
                    }
                });
            } finally {
                queued = manager.pendingWrites();
                manager.stop(Duration.ZERO);
            }
            long[] all = latencies.all();
            return percentiles("syncAllDurable, confirmed on disk", producers, all, all.length, queued);
        } finally {
            Files2.deleteTree(dir);
        }
    }

    /**
     * The disk's own floor, for context: one thread appends a record of the same size to a file and
     * forces it ({@code FileChannel.force(false)}, as the spool does) for every write, paced like
     * the waiting producers; the time of each append and force.
     */
    static Percentiles rawForce(Duration time) throws Exception {
        Path dir = Files.createTempDirectory("memlife-raw-force");
        try (FileChannel ch = FileChannel.open(dir.resolve("raw"), StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE)) {
            ByteBuffer record = ByteBuffer.allocateDirect(SpoolThroughput.spooledBytes(dir.resolve("encode")).length + 8);
            long warmUntil = System.nanoTime() + 1_000_000_000L;
            long end = warmUntil + time.toNanos();
            long[] samples = new long[(int) (time.toSeconds() + 2) * 4_000];
            int n = 0;
            ThreadLocalRandom random = ThreadLocalRandom.current();
            while (true) {
                long t0 = System.nanoTime();
                if (t0 >= end || n == samples.length) {
                    break;
                }
                record.clear();
                while (record.hasRemaining()) {
                    ch.write(record);
                }
                ch.force(false);
                long t1 = System.nanoTime();
                if (t0 >= warmUntil) {
                    samples[n++] = t1 - t0;
                }
                LockSupport.parkNanos(random.nextLong(2_000_000));
            }
            return percentiles("one append and force per write (FileChannel.force(false)), the disk's floor", 1,
                    samples, n, 0);
        } finally {
            Files2.deleteTree(dir);
        }
    }

    private static MemoryManager slowManager(Path dir, String name) {
        MemoryManager manager = MemoryManager.builder().name(name).spool(Spool.open(dir))
                .queueCapacity(QUEUE_CAPACITY).build();
        manager.addProvider(new MemoryProvider() {
            @Override
            public String name() {
                return "one-millisecond-store";
            }

            @Override
            public void syncTurn(Turn turn) {
                LockSupport.parkNanos(1_000_000);
            }
        });
        return manager;
    }

    private static Percentiles percentiles(String what, int producers, long[] samples, int n, long queued) {
        if (n == 0) {
            throw new IllegalStateException(what + ": no samples");
        }
        long[] sorted = Arrays.copyOf(samples, n);
        Arrays.sort(sorted);
        return new Percentiles(what, producers, n, at(sorted, 0.50), at(sorted, 0.99), at(sorted, 0.999),
                sorted[n - 1], queued, sorted);
    }

    /** The nearest-rank percentile. */
    private static double at(long[] sorted, double q) {
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }
}
