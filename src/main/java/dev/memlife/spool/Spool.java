package dev.memlife.spool;

import static dev.memlife.spool.SpoolFiles.LOCK_FILE;
import static dev.memlife.spool.SpoolFiles.OFFSET_MASK;
import static java.util.Objects.requireNonNull;

import dev.memlife.DurableLog;
import dev.memlife.SpoolFigures;
import dev.memlife.internal.FileLocks;
import dev.memlife.internal.WriteAheadLogs;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The durable write-ahead spool of one {@link dev.memlife.MemoryManager}: every write is stored
 * here, checksummed, before it is queued, so it survives a crash of the process the moment the
 * write is accepted, and group-committed to disk, so it survives power loss once forced; a manager
 * that starts on a spool an earlier run left writes in replays them before its first new write.
 * Build a manager with it: {@code MemoryManager.builder().spool(Spool.open(dir))}.
 *
 * <h2>On disk</h2>
 *
 * A spool is a directory holding segment files ({@code 00000000000000000001.seg}, numbered in the
 * order they were written; the format is {@link SegmentFormat}'s: length-prefixed records checked
 * by CRC32C), the delivery mark ({@code delivered.mark}) and a lock file ({@code spool.lock}),
 * held while a manager uses the spool, so two managers or processes never write one spool.
 *
 * <h2>What survives what</h2>
 *
 * <ul>
 *   <li><b>An accepted write</b> survives {@code kill -9}, an OOM kill and a JVM crash: its record
 *       is stored into a memory-mapped window of the segment being written, under the order lock,
 *       before the write is queued ({@link MappedSegment}), so it is in the kernel's page cache,
 *       which outlives the process, before {@code syncAll} returns.
 *   <li><b>A durable write</b> survives power loss too: it is on disk once a group commit's force
 *       returned ({@link dev.memlife.MemoryManager#awaitDurable}). The spool's committer thread
 *       starts a group commit as soon as writes wait for one, so without waiting a write is durable
 *       within one commit: a force of the records stored since the last.
 *   <li><b>A segment</b> is found after power loss once its first records are forced: the first
 *       force into it forces its directory first.
 *   <li><b>The delivery mark</b> (the position up to which every write was handed to every
 *       provider) is written after each commit and at close, and is not forced: after power loss
 *       it may be older than the truth, which replays writes the idempotent store already holds.
 *   <li><b>A deleted segment</b> (every write in it delivered) is gone once its directory is
 *       forced; until then it may come back after power loss, with the same effect as an old mark.
 * </ul>
 *
 * After a crash, a segment ends in zeros (space a mapping reached and no record did: cut at the
 * next open), and the newest may end in a torn record (a write the crash cut short while it was
 * stored, or power loss in the middle of unforced pages; never confirmed durable): the next open
 * reports it and cuts it off. Bytes that are not a record at the end of an older segment, or in
 * the middle of any, are damage: reported with their offset and skipped; the records around them
 * are kept. A newest segment whose header a crash cut short (its creation interrupted: no write
 * can be in it) is reported and deleted.
 *
 * <p>A spool is what an application holds; what it does for its manager ({@link SpoolLog}) is
 * not part of the API.
 *
 * <p>Thread-safe. Closed by the manager's shutdown.
 */
public final class Spool implements DurableLog {

    /** The default size bound: 1 GiB. */
    public static final long DEFAULT_MAX_BYTES = 1L << 30;
    /** The default segment size: 64 MiB. */
    public static final long DEFAULT_SEGMENT_BYTES = 64L << 20;

    static {
        WriteAheadLogs.register(Spool.class, spool -> spool.log);
    }

    private final SpoolLog log;

    private Spool(SpoolLog log) {
        this.log = log;
    }

    /**
     * Opens the spool in {@code dir} with the default bounds, creating the directory if it is
     * missing. See {@link Builder#open()}.
     *
     * @param dir the spool's directory
     * @return the spool, ready to be given to one manager's builder
     */
    public static Spool open(Path dir) {
        return builder(dir).open();
    }

    /**
     * A builder for a spool with other bounds.
     *
     * @param dir the spool's directory
     * @return the builder
     * @throws NullPointerException if {@code dir} is null
     */
    public static Builder builder(Path dir) {
        return new Builder(requireNonNull(dir, "dir"));
    }

    /** {@return the spool's figures now: all zero but its size and segments before a manager uses it} */
    @Override
    public SpoolFigures figures() {
        return log.figures();
    }

    /** {@return the spool's directory} */
    public Path directory() {
        return log.directory();
    }

    /**
     * Closes the spool: its last commit, the delivery mark, the lock released. Its manager's
     * shutdown does this; call it only for a spool no manager was built with. Idempotent.
     *
     * @throws UncheckedIOException if the last commit or the mark could not be written
     */
    public void close() {
        log.close();
    }

    /** {@return what the manager calls; for this package's tests} */
    SpoolLog log() {
        return log;
    }

    @Override
    public String toString() {
        return log.toString();
    }

    /** Settings of a {@link Spool}. Not thread-safe. */
    public static final class Builder {

        /**
         * The real paths of the spool directories this JVM holds open. A lock file's OS lock
         * belongs to the process, and closing any channel to the file releases it; so a second
         * open in this JVM is refused here, before it opens a channel of its own.
         */
        static final Set<Path> HELD = ConcurrentHashMap.newKeySet();

        private final Path dir;
        private long maxBytes = DEFAULT_MAX_BYTES;
        private long segmentBytes = DEFAULT_SEGMENT_BYTES;
        private boolean removeWhenEmpty;

        private Builder(Path dir) {
            this.dir = dir;
        }

        /**
         * The spool's size bound, on disk and in its buffer: a write that would pass it is refused
         * with {@link SpoolFullException}, unless every write the spool holds was delivered (the
         * write then starts a new segment, and the delivered ones are deleted), so a bound smaller
         * than a segment never fills for good; default 1 GiB.
         *
         * @param maxBytes the bound; at least 1 KiB
         * @return this builder
         * @throws IllegalArgumentException if it is less than 1 KiB
         */
        public Builder maxBytes(long maxBytes) {
            if (maxBytes < 1024) {
                throw new IllegalArgumentException("maxBytes must be at least 1024, was " + maxBytes);
            }
            this.maxBytes = maxBytes;
            return this;
        }

        /**
         * The size at which the spool starts a new segment file; default 64 MiB. A segment is
         * deleted once every write in it was delivered, so smaller segments give space back
         * sooner, at the cost of a file creation and a force of the directory each.
         *
         * @param segmentBytes the size; between 4 KiB and 1 TiB
         * @return this builder
         * @throws IllegalArgumentException if it is out of range
         */
        public Builder segmentBytes(long segmentBytes) {
            if (segmentBytes < 4096 || segmentBytes > OFFSET_MASK) {
                throw new IllegalArgumentException("segmentBytes must be between 4096 and " + OFFSET_MASK + ", was "
                        + segmentBytes);
            }
            this.segmentBytes = segmentBytes;
            return this;
        }

        long maxBytes() {
            return maxBytes;
        }

        long segmentBytes() {
            return segmentBytes;
        }

        /**
         * Removes the spool's directory at close when every write in it was delivered, as {@link
         * SpoolDirectory} does for the spool of each agent; default false (the directory stays,
         * empty but for the lock file and the delivery mark).
         *
         * @param remove whether to remove the directory
         * @return this builder
         */
        Builder removeWhenEmpty(boolean remove) {
            this.removeWhenEmpty = remove;
            return this;
        }

        /**
         * Opens the spool: creates the directory if needed, takes its lock, reads its delivery mark
         * and checks every segment. A torn tail is reported and cut off; a damaged record in the
         * middle is reported with its offset (and skipped by the replay); segments whose writes
         * were all delivered are deleted, and so is a newest segment whose header a crash cut short.
         *
         * @return the spool
         * @throws IllegalStateException if another manager or process holds the spool, or a
         *     segment is not a memlife segment or was written by a newer memlife
         * @throws UncheckedIOException if the directory cannot be read or written
         */
        public Spool open() {
            Path heldAs;
            try {
                Files.createDirectories(dir);
                heldAs = dir.toRealPath();
            } catch (IOException e) {
                throw new UncheckedIOException("could not open spool " + dir, e);
            }
            // Checked before the lock file is opened: the OS lock is the process's, and closing
            // any channel to the file (a refused second open's, say) would release it.
            if (!HELD.add(heldAs)) {
                throw new IllegalStateException("spool " + dir + " is in use by another manager in this JVM; a "
                        + "spool serves one manager at a time");
            }
            FileChannel lockChannel = null;
            try {
                lockChannel = FileChannel.open(dir.resolve(LOCK_FILE), StandardOpenOption.CREATE,
                        StandardOpenOption.WRITE);
                FileLock lock = FileLocks.tryLock(lockChannel);
                if (lock == null) {
                    throw new IllegalStateException("spool " + dir + " is in use by another manager or process (its "
                            + LOCK_FILE + " is locked); a spool serves one manager at a time");
                }
                return new Spool(new SpoolLog(dir, maxBytes, segmentBytes, removeWhenEmpty, heldAs, lockChannel, lock));
            } catch (IOException e) {
                closeQuietly(lockChannel);
                HELD.remove(heldAs);
                throw new UncheckedIOException("could not open spool " + dir, e);
            } catch (RuntimeException e) {
                closeQuietly(lockChannel);
                HELD.remove(heldAs);
                throw e;
            }
        }

        private static void closeQuietly(FileChannel channel) {
            if (channel != null) {
                try {
                    channel.close(); // releases the lock too, if it was taken
                } catch (IOException ignored) {
                    // the open's own failure is what the caller is told
                }
            }
        }
    }
}
