package dev.memlife.bench;

import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.locks.ReentrantLock;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptAppender;

/**
 * The physical references for the spool's hot path (issue 25): appends of a record of the spool's
 * size into memory-mapped files, safe from a crash of the process the moment they are stored, as
 * the spool's are, but with no queue, no writer and no provider behind them.
 *
 * <ul>
 *   <li>{@link #chronicle}: Chronicle Queue's appender, one per producer thread, on one queue;
 *       each write one {@code writeBytes} of the record (Chronicle locks the queue's tail per
 *       write, as the spool's order lock does).
 *   <li>{@link #mappedLoop}: a plain {@code MappedByteBuffer.put} of the record under a lock,
 *       into a file mapped 1 GiB at a time.
 * </ul>
 * Neither forces: like the spool's {@code syncAll}, a write is in the page cache, not on disk.
 */
final class MappedAppendPeers {

    /** Writes per second from the barrier that starts the producers until the last write returned. */
    record Result(String contender, int producers, long writes, long nanos) {
        double writesPerSecond() {
            return writes / (nanos / 1e9);
        }
    }

    private MappedAppendPeers() {}

    /** Chronicle Queue, a fresh queue per run, each producer its own appender. */
    static Result chronicle(int producers, int writes, int recordBytes) throws Exception {
        Path dir = Files.createTempDirectory("memlife-chronicle");
        byte[] record = record(recordBytes);
        try (ChronicleQueue queue = ChronicleQueue.singleBuilder(dir.toFile()).build()) {
            long nanos = race(producers, writes, () -> {
                ExcerptAppender appender = queue.createAppender(); // closed with the queue
                return () -> appender.writeBytes(b -> b.write(record));
            });
            return new Result("Chronicle Queue appender (writeBytes, no force)", producers, writes, nanos);
        } finally {
            Files2.deleteTree(dir);
        }
    }

    /** A plain mapped file: one lock, one {@code put} of the record per write. */
    static Result mappedLoop(int producers, int writes, int recordBytes) throws Exception {
        Path dir = Files.createTempDirectory("memlife-mapped-loop");
        byte[] record = record(recordBytes);
        int window = 1 << 30;
        try (FileChannel ch = FileChannel.open(dir.resolve("log"), StandardOpenOption.CREATE_NEW,
                StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ReentrantLock lock = new ReentrantLock();
            MappedByteBuffer[] map = {ch.map(FileChannel.MapMode.READ_WRITE, 0, window)};
            long[] mapStart = {0};
            long[] end = {0};
            long nanos = race(producers, writes, () -> () -> {
                lock.lock();
                try {
                    if (end[0] + record.length > mapStart[0] + window) {
                        mapStart[0] = end[0];
                        map[0] = ch.map(FileChannel.MapMode.READ_WRITE, mapStart[0], window);
                    }
                    map[0].put((int) (end[0] - mapStart[0]), record, 0, record.length);
                    end[0] += record.length;
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                } finally {
                    lock.unlock();
                }
            });
            return new Result("MappedByteBuffer.put under a lock (no force)", producers, writes, nanos);
        } finally {
            Files2.deleteTree(dir);
        }
    }

    private static byte[] record(int bytes) {
        byte[] r = new byte[bytes];
        Arrays.fill(r, (byte) 'x');
        return r;
    }

    /** Makes one producer's write, on its own thread. */
    @FunctionalInterface
    private interface Producer {
        Runnable writer() throws Exception;
    }

    /** {@code writes} writes split among {@code producers} threads started at one barrier; the nanoseconds taken. */
    private static long race(int producers, int writes, Producer producer) throws Exception {
        int share = writes / producers;
        CyclicBarrier start = new CyclicBarrier(producers + 1);
        List<Thread> threads = new ArrayList<>();
        List<Throwable> failures = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            Thread t = new Thread(() -> {
                try {
                    Runnable write = null;
                    try {
                        write = producer.writer();
                        for (int i = 0; i < Math.min(share, 100_000); i++) {
                            write.run(); // warm-up, before the barrier
                        }
                    } finally {
                        start.await(); // even after a failure: the others must not wait for this one
                    }
                    for (int i = 0; i < share; i++) {
                        write.run();
                    }
                } catch (Throwable e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                }
            }, "mapped-peer-" + p);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        start.await();
        long t0 = System.nanoTime();
        for (Thread t : threads) {
            t.join();
        }
        long nanos = System.nanoTime() - t0;
        if (!failures.isEmpty()) {
            IllegalStateException e = new IllegalStateException("a producer failed");
            failures.forEach(e::addSuppressed);
            throw e;
        }
        return nanos;
    }
}
