package dev.memlife.spool;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One segment file being written through memory mappings: appends store their records into a
 * mapped {@linkplain Window window} of it, so a record is in the kernel's page cache, and survives
 * the process ({@code kill -9}, an OOM kill, a JVM crash), the moment it is stored; a force
 * ({@code msync}) makes it survive power loss. A window is a stretch of the file mapped at once
 * (up to {@link #WINDOW} bytes, or a record's size if larger); mapping it extends the file, so a
 * file ends in at most one window of zeros that no record reached, which {@link
 * SegmentFormat#read} knows for space never written.
 *
 * <p>The window's disk blocks are taken as the records are stored (the file is sparse ahead of
 * them): writing zeros first would take them earlier, but the file system then writes those pages
 * back with the next force, and a store into a page being written back waits for it (tens of
 * microseconds per page on this project's test machine). So a window is mapped only while the
 * disk has its size and {@link #SPARE_BYTES} free; a store the disk still cannot hold is refused
 * by the kernel, which fails the spool ({@link Spool}).
 *
 * <p>Windows are mapped by the appends, under the spool's order lock; forced, unmapped and the
 * file sealed by the committer, under the commit lock, once the appends have moved past them.
 * Mapping clears the caller's interrupt and restores it after: an interrupted caller never closes
 * the file's channel, so it never fails the spool.
 */
final class MappedSegment {

    private static final Logger LOG = LoggerFactory.getLogger(Spool.class);

    /**
     * The most bytes mapped at a time, unless a record needs more: 1 MiB, some thousands of
     * records. Each window costs a system call and a check of the disk's free space; after a
     * crash the file ends in at most one window of zeros.
     */
    static final int WINDOW = 1 << 20;
    /** How often a mapping an interrupt cut short is tried again before the append is refused. */
    private static final int MAP_TRIES = 100;
    /** {@code sun.misc.Unsafe.invokeCleaner(ByteBuffer)} bound to the instance; null if unavailable. */
    private static final MethodHandle UNMAP = unmapper();
    /**
     * The free disk space a new window must leave: a store into a mapping the disk has no block
     * for is refused by the kernel (SIGBUS, an {@code InternalError} in Java), so windows are only
     * mapped while the disk has room to spare.
     */
    static final long SPARE_BYTES = 64L << 20;

    /** A stretch of the segment mapped into memory: the file's bytes {@code [start, start + capacity)}. */
    record Window(MappedSegment segment, long start, MappedByteBuffer bytes) {

        long end() {
            return start + bytes.capacity();
        }

        /** Stores {@code record[0, length)} at segment offset {@code at}, inside this window. */
        void put(long at, byte[] record, int length) {
            bytes.put((int) (at - start), record, 0, length);
        }

        /**
         * Forces the segment's bytes {@code [from, to)}, inside this window, to disk; the first
         * force of a new segment forces its directory first, so the file is found after power loss.
         */
        void force(long from, long to) throws IOException {
            if (to <= from) {
                return;
            }
            segment.announce();
            try {
                bytes.force((int) (from - start), (int) (to - from));
            } catch (UncheckedIOException e) {
                throw e.getCause();
            }
        }

        /** Unmaps the window; it must never be touched again (a store into it would crash the JVM). */
        void unmap() {
            MappedSegment.unmap(bytes);
        }
    }

    final long number;
    final Path path;
    private final Path dir;
    /** Open while the segment is written; reopened if an interrupt closed it. */
    private FileChannel channel;
    /** Whether the directory was forced since the file was created: under the commit lock. */
    private boolean announced;

    private MappedSegment(long number, Path dir, Path path, FileChannel channel) {
        this.number = number;
        this.dir = dir;
        this.path = path;
        this.channel = channel;
    }

    /**
     * Creates segment {@code number} in {@code dir} and maps its first window, {@code header} stored
     * at its start. Not forced: the committer forces the directory and the header with the first
     * records. On the appending thread, under the order lock.
     *
     * @param windowBytes the first window's size: the header and at least the first record
     * @throws IOException if the file cannot be created or mapped, or the disk lacks the room
     */
    static Window create(Path dir, long number, byte[] header, int windowBytes) throws IOException {
        Path path = SpoolFiles.segmentPath(dir, number);
        MappedSegment segment = new MappedSegment(number, dir, path, null);
        try {
            segment.channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            Window first = segment.map(0, windowBytes);
            first.bytes.put(0, header);
            return first;
        } catch (IOException | RuntimeException e) {
            segment.closeQuietly();
            Files.deleteIfExists(path);
            throw e;
        }
    }

    /**
     * Maps the window of {@code bytes} bytes starting at offset {@code start}; the file grows to
     * its end. On the appending thread, under the order lock.
     *
     * @throws IOException if it cannot be mapped, or the disk lacks the room
     */
    Window map(long start, int bytes) throws IOException {
        boolean interrupted = Thread.interrupted();
        try {
            return mapCleared(start, bytes);
        } finally {
            if (interrupted || Thread.interrupted()) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** {@link #map}, with the caller's interrupt flag cleared; an interrupt during the call is retried. */
    private Window mapCleared(long start, int bytes) throws IOException {
        long free = Files.getFileStore(dir).getUsableSpace();
        if (free < bytes + SPARE_BYTES) {
            throw new IOException("the disk holding spool " + dir + " has " + free + " bytes free; the next "
                    + bytes + " bytes of segment " + path.getFileName() + " are mapped only with " + SPARE_BYTES
                    + " bytes to spare");
        }
        for (int tries = 1; ; tries++) {
            try {
                return new Window(this, start, channel.map(FileChannel.MapMode.READ_WRITE, start, bytes));
            } catch (ClosedByInterruptException e) {
                // Another thread interrupted this one during the call, which closed the channel;
                // the file is untouched. Clear the flag (restored by the caller) and map again.
                Thread.interrupted();
                channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
                if (tries == MAP_TRIES) {
                    throw new IOException("mapping segment " + path + " was interrupted " + tries + " times", e);
                }
            }
        }
    }

    /** Forces the directory once, before the first records of the segment are forced. */
    private void announce() throws IOException {
        if (!announced) {
            SegmentFile.forceDirectory(dir);
            announced = true;
        }
    }

    /**
     * Seals the segment once its windows are forced and unmapped: cuts the file at {@code end}, past
     * its last record, and closes it. Not forced: a cut lost to power loss leaves zeros after the
     * last record, which the next open cuts again.
     */
    void seal(long end) {
        try {
            channel.truncate(end);
        } catch (IOException e) {
            LOG.warn("spool {}: could not cut segment {} at its last record ({}); the next open cuts it", dir,
                    path.getFileName(), e.toString());
        } finally {
            closeQuietly();
        }
    }

    /** Closes the file and deletes it: a segment never used (its windows unmapped first). */
    void discard() {
        closeQuietly();
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            LOG.warn("spool {}: could not delete unused segment {} ({}); the next open deletes it", dir,
                    path.getFileName(), e.toString());
        }
    }

    private void closeQuietly() {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // nothing is written through the channel: the mappings hold the records
            }
        }
    }

    /**
     * Unmaps {@code bytes} now, so the file's pages and, once it is deleted, its disk space are
     * given back at once rather than when the collector finds the buffer; where the JDK does not
     * allow it, the collector does it.
     */
    static void unmap(ByteBuffer bytes) {
        if (UNMAP != null) {
            try {
                UNMAP.invokeExact(bytes);
            } catch (Throwable e) {
                LOG.debug("could not unmap a spool window; the collector unmaps it", e);
            }
        }
    }

    private static MethodHandle unmapper() {
        try {
            Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
            Field theUnsafe = unsafeClass.getDeclaredField("theUnsafe");
            theUnsafe.setAccessible(true);
            MethodHandle invokeCleaner = MethodHandles.lookup().findVirtual(unsafeClass, "invokeCleaner",
                    MethodType.methodType(void.class, ByteBuffer.class));
            return invokeCleaner.bindTo(theUnsafe.get(null));
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.debug("sun.misc.Unsafe.invokeCleaner is not available; spool windows are unmapped by the collector",
                    e);
            return null;
        }
    }
}
