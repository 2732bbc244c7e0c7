package dev.memlife.spool;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A file in the segment format written with plain writes: the file of failed writes a run keeps
 * for the next start ({@code <n>.failed}). Created with its header (the file and its directory
 * forced, so it exists after power loss), then written at its end and forced after each write.
 * Not thread-safe: the spool uses it under its lock for failed writes.
 */
final class SegmentFile implements AutoCloseable {

    /**
     * The most bytes given to one system call: the JDK copies a heap buffer into a direct one for
     * the call and keeps that one for the thread's next write.
     */
    static final int WRITE_CHUNK = 128 * 1024;

    private final FileChannel channel;

    private SegmentFile(FileChannel channel) {
        this.channel = channel;
    }

    /** Creates the file, writes its header and forces the file and its directory. */
    static SegmentFile create(Path path, byte[] header) throws IOException {
        FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        try {
            writeFully(channel, ByteBuffer.wrap(header));
            channel.force(true);
            forceDirectory(path.toAbsolutePath().getParent());
            return new SegmentFile(channel);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /**
     * Forces a directory's entries to disk, after a segment was created or deleted; a no-op on
     * Windows, where a directory cannot be opened for it.
     */
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
     * Writes {@code bytes[from, from + count)} at the segment's end; to the page cache, not durable
     * yet. It is written {@link #WRITE_CHUNK} bytes at a time, so one large write never holds as
     * much native memory for the writing thread's life.
     */
    void write(byte[] bytes, int from, int count) throws IOException {
        for (int at = from, end = from + count; at < end; at += WRITE_CHUNK) {
            writeFully(channel, ByteBuffer.wrap(bytes, at, Math.min(WRITE_CHUNK, end - at)));
        }
    }

    /** Forces what was written to disk (data only: the size the records need is forced with them). */
    void force() throws IOException {
        channel.force(false);
    }

    private static void writeFully(FileChannel channel, ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
