package dev.memlife.spool;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Appends records to one new spool segment ({@link SegmentFormat}) and makes them durable with
 * group commit: {@link #append} only writes (to the page cache) and returns where the record ends;
 * {@link #awaitDurable} waits until the segment is forced to disk at least that far. Concurrent
 * callers share the {@code force}: while one runs, the others wait, and the next one covers every
 * record appended meanwhile. Thread-safe.
 *
 * <p>What is durable when: the header and the segment's directory entry once {@link #create}
 * returns (the file and its directory are forced); a record once {@link #awaitDurable} returned
 * for its end offset, or {@link #durableLength()} is past it. After power loss the segment is at
 * least {@link #durableLength()} long, and whatever lies beyond is a torn tail the reader cuts.
 */
final class SegmentAppender implements AutoCloseable {

    private final Path file;
    private final FileChannel channel;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition forced = lock.newCondition();
    // Guarded by lock.
    private long end;
    private long durable;
    private boolean forcing;
    private long forces;
    private IOException failure;

    private SegmentAppender(Path file, FileChannel channel, long end) {
        this.file = file;
        this.channel = channel;
        this.end = end;
        this.durable = end;
    }

    /**
     * Creates the segment {@code file}, writes its header and forces the file and its directory.
     *
     * @throws UncheckedIOException if the file exists or cannot be written
     */
    static SegmentAppender create(Path file) {
        try {
            FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            try {
                writeFully(channel, ByteBuffer.wrap(SegmentFormat.header()));
                channel.force(true);
                forceDirectory(file.toAbsolutePath().getParent());
                return new SegmentAppender(file, channel, SegmentFormat.HEADER_BYTES);
            } catch (IOException | RuntimeException e) {
                channel.close();
                throw e;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not create spool segment " + file, e);
        }
    }

    /** Forces a directory's entries to disk (a new or deleted segment); a no-op where the OS cannot. */
    static void forceDirectory(Path dir) throws IOException {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException e) {
            if (!System.getProperty("os.name", "").toLowerCase().startsWith("windows")) {
                throw e;
            }
        }
    }

    /**
     * Appends one record; not durable yet.
     *
     * @return the segment's length after the record: pass it to {@link #awaitDurable}
     * @throws UncheckedIOException if the write failed; the segment then refuses every later append
     */
    long append(byte[] payload) {
        byte[] record = SegmentFormat.record(payload);
        lock.lock();
        try {
            checkHealthy();
            try {
                writeFully(channel, ByteBuffer.wrap(record));
            } catch (IOException e) {
                failure = e;
                throw new UncheckedIOException("could not append to spool segment " + file, e);
            }
            end += record.length;
            return end;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until the segment is on disk at least up to {@code offset}: forces it itself unless
     * another caller's force covers it. An interrupt is deferred until the force it waits for ends.
     *
     * @throws UncheckedIOException if the force failed; nothing after the last good force is durable
     */
    void awaitDurable(long offset) {
        lock.lock();
        try {
            boolean interrupted = false;
            while (durable < offset) {
                checkHealthy();
                if (!forcing) {
                    forceAll();
                    continue;
                }
                try {
                    forced.await();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Under the lock: forces everything appended so far, without the lock while the disk works. */
    private void forceAll() {
        forcing = true;
        long target = end;
        lock.unlock();
        IOException failed = null;
        try {
            channel.force(false);
        } catch (IOException e) {
            failed = e;
        } finally {
            lock.lock();
            forcing = false;
            forces++;
            if (failed == null) {
                durable = Math.max(durable, target);
            } else {
                failure = failed;
            }
            forced.signalAll();
        }
    }

    private void checkHealthy() {
        if (failure != null) {
            throw new UncheckedIOException("spool segment " + file + " failed earlier; nothing after its last "
                    + "durable length " + durable + " is on disk", failure);
        }
    }

    /** {@return how far the segment is known to be on disk} */
    long durableLength() {
        lock.lock();
        try {
            return durable;
        } finally {
            lock.unlock();
        }
    }

    /** {@return how many times the segment was forced: fewer than the records when callers shared} */
    long forces() {
        lock.lock();
        try {
            return forces;
        } finally {
            lock.unlock();
        }
    }

    private static void writeFully(FileChannel channel, ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
    }

    /** Closes the segment's file; what was not forced may not be on disk. */
    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException e) {
            throw new UncheckedIOException("could not close spool segment " + file, e);
        }
    }
}
