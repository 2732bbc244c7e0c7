package dev.memlife.bench;

import dev.memlife.MemoryManager;
import dev.memlife.SpoolFigures;
import dev.memlife.spool.Spool;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;

/**
 * The hot path with the spool on and off (issue 14, part 3): {@code producers} threads hand {@code
 * writes} writes to one manager whose provider is the counting sink, without waiting for the disk;
 * writes per second from the barrier that starts them until the last write reached the sink, as
 * {@link HotPathBenchmark} measures. A fresh manager (and spool) per measurement, after a warm-up
 * of the same loop on it.
 */
final class SpoolHotPath {

    /** Writes per second delivered, and (spool on) the group commits made while they were written. */
    record Result(boolean spool, int producers, long writes, long nanos, long groupCommits, long spoolBytesAtEnd) {
        double writesPerSecond() {
            return writes / (nanos / 1e9);
        }
    }

    private SpoolHotPath() {}

    static Result run(boolean spool, int producers, int writes) throws Exception {
        Path dir = Files.createTempDirectory("memlife-spool-hot");
        try {
            CountingSink sink = new CountingSink();
            MemoryManager.Builder b = MemoryManager.builder().name("spool-hot-" + (spool ? "on" : "off"))
                    .queueCapacity(Contender.CAPACITY).enqueueTimeout(Duration.ofMinutes(1));
            if (spool) {
                b.spool(Spool.open(dir));
            }
            MemoryManager manager = b.build();
            manager.addProvider(SpoolThroughput.sinkProvider(sink));
            long total = 0;
            total += burst(manager, producers, Math.min(writes, 200_000)); // warm-up on this manager, not counted
            sink.awaitCount(total);
            if (spool) {
                manager.awaitDurable(Duration.ofSeconds(30)); // start measuring with the disk idle
            }
            SpoolFigures before = manager.figures().spool();
            long start = System.nanoTime();
            total += burst(manager, producers, writes);
            sink.awaitCount(total);
            long nanos = System.nanoTime() - start;
            SpoolFigures after = manager.figures().spool();
            manager.stop(Duration.ofSeconds(30));
            return new Result(spool, producers, writes, nanos, after.groupCommits() - before.groupCommits(),
                    after.bytes());
        } finally {
            Files2.deleteTree(dir);
        }
    }

    /** {@return the spool's bytes per write of the benchmark's turn: its record, as stored} */
    static int recordBytes() throws Exception {
        Path dir = Files.createTempDirectory("memlife-spool-record");
        try {
            Spool spool = Spool.open(dir);
            MemoryManager manager = MemoryManager.builder().name("spool-record-size").spool(spool).build();
            manager.addProvider(SpoolThroughput.sinkProvider(new CountingSink()));
            long before = manager.figures().spool().bytes();
            int n = 1_000;
            for (int i = 0; i < n; i++) {
                manager.syncAll(Contender.USER, Contender.ASSISTANT, Contender.SESSION);
            }
            long bytes = manager.figures().spool().bytes() - before;
            manager.stop(Duration.ofSeconds(30));
            return (int) (bytes / n);
        } finally {
            Files2.deleteTree(dir);
        }
    }

    /** {@code writes} writes from {@code producers} threads started at one barrier; returns the writes. */
    private static long burst(MemoryManager manager, int producers, int writes) throws Exception {
        int share = writes / producers;
        CyclicBarrier start = new CyclicBarrier(producers);
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    for (int i = 0; i < share; i++) {
                        if (!manager.syncAll(Contender.USER, Contender.ASSISTANT, Contender.SESSION)) {
                            throw new IllegalStateException("a write was rejected");
                        }
                    }
                } catch (Throwable e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                }
            }, "spool-hot-producer-" + p);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        if (!failures.isEmpty()) {
            IllegalStateException e = new IllegalStateException("a producer failed");
            failures.forEach(e::addSuppressed);
            throw e;
        }
        return (long) share * producers;
    }
}
