package dev.memlife.spool;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A window onto a segment's bytes that only moves forward, so a segment of any size is read in
 * bounded memory: a chunk at a time ({@value #CHUNK} bytes), or as much as one record needs (a
 * record holds at most {@link SegmentFormat#MAX_PAYLOAD} bytes). Opening a spool and replaying it
 * never holds a whole segment (64 MiB by default) in the heap.
 *
 * <p>A window over a byte array ({@link #of(byte[])}) holds all of it; one over a file ({@link
 * #open}) reads it with positional reads. Not thread-safe.
 */
final class SegmentWindow implements AutoCloseable {

    /** Bytes read from a file at a time, unless a record needs more. */
    static final int CHUNK = 1 << 20;

    private final FileChannel channel;
    private final String name;
    private final long size;
    private byte[] buffer;
    /** The segment offset of {@code buffer[0]}. */
    private long start;
    /** How many bytes of {@code buffer} hold the segment's, from {@code start}. */
    private int held;
    /** See {@link #dataEnd()}; -1 until computed. */
    private long dataEnd = -1;

    private SegmentWindow(FileChannel channel, String name, long size, byte[] buffer, int held) {
        this.channel = channel;
        this.name = name;
        this.size = size;
        this.buffer = buffer;
        this.held = held;
    }

    /** A window holding all of {@code bytes}. */
    static SegmentWindow of(byte[] bytes) {
        return new SegmentWindow(null, "bytes", bytes.length, bytes, bytes.length);
    }

    /**
     * A window onto {@code file}, from its start, reading {@value #CHUNK} bytes at a time; closing
     * it closes the file.
     *
     * @throws IOException if the file cannot be opened
     */
    static SegmentWindow open(Path file) throws IOException {
        return open(file, CHUNK);
    }

    /** {@link #open(Path)}, reading {@code chunk} bytes at a time; for tests of the window's moves. */
    static SegmentWindow open(Path file, int chunk) throws IOException {
        FileChannel channel = FileChannel.open(file, StandardOpenOption.READ);
        try {
            long size = channel.size();
            return new SegmentWindow(channel, file.toString(), size, new byte[(int) Math.min(size, chunk)], 0);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** {@return the segment's length in bytes} */
    long size() {
        return size;
    }

    /**
     * {@return the offset just past the segment's last byte that is not zero; 0 if every byte is}
     * A segment is written through a mapping that extends its file ahead of the records, so the
     * zeros after this are space no record reached. Read from the end, {@value #CHUNK} bytes at a
     * time, apart from the window (whose place it does not move); computed once.
     */
    long dataEnd() {
        if (dataEnd < 0) {
            dataEnd = channel == null ? lastNonZero(buffer, 0, held) + 1 : scanFromTheEnd();
        }
        return dataEnd;
    }

    private long scanFromTheEnd() {
        byte[] block = new byte[(int) Math.min(size, CHUNK)];
        try {
            for (long blockEnd = size; blockEnd > 0; ) {
                long blockStart = Math.max(0, blockEnd - block.length);
                ByteBuffer into = ByteBuffer.wrap(block, 0, (int) (blockEnd - blockStart));
                readFully(into, blockStart);
                int last = lastNonZero(block, 0, into.position());
                if (last >= 0) {
                    return blockStart + last + 1;
                }
                blockEnd = blockStart;
            }
            return 0;
        } catch (IOException e) {
            throw new UncheckedIOException("could not read spool segment " + name, e);
        }
    }

    /** {@return the index of the last byte of {@code bytes[from, to)} that is not zero; -1 if none} */
    private static int lastNonZero(byte[] bytes, int from, int to) {
        for (int i = to - 1; i >= from; i--) {
            if (bytes[i] != 0) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Makes the segment's bytes {@code [from, from + count)} readable in {@link #array()}, as far as
     * the segment goes; bytes before {@code from} may be dropped.
     *
     * @param count how many; the window grows to hold them (a record's at most {@link
     *     SegmentFormat#RECORD_OVERHEAD} + {@link SegmentFormat#MAX_PAYLOAD}, more only to search
     *     a damaged segment)
     * @return whether the segment holds all of them
     * @throws IllegalStateException if {@code from} is before bytes already dropped (a reader
     *     going back)
     * @throws UncheckedIOException if the file cannot be read
     */
    boolean load(long from, int count) {
        if (from < start) {
            throw new IllegalStateException("segment " + name + ": offset " + from + " is before the window at "
                    + start + "; a segment is read forward only");
        }
        long end = Math.min(from + count, size);
        if (end <= start + held) {
            return from + count <= size;
        }
        int keep = (int) Math.max(0, start + held - from); // loaded bytes from 'from' on, kept
        int need = (int) (end - from);
        byte[] into = need > buffer.length ? new byte[need] : buffer;
        if (keep > 0) {
            System.arraycopy(buffer, index(from), into, 0, keep);
        }
        buffer = into;
        start = from;
        held = keep;
        fill();
        return from + count <= size;
    }

    /** Reads on until the buffer is full or the segment ends. */
    private void fill() {
        ByteBuffer into = ByteBuffer.wrap(buffer, held, (int) Math.min(buffer.length - held, size - start - held));
        try {
            readFully(into, start);
        } catch (IOException e) {
            throw new UncheckedIOException("could not read spool segment " + name, e);
        }
        held = into.position();
    }

    /** Fills {@code into} from the file, its index 0 being the file's offset {@code at}. */
    private void readFully(ByteBuffer into, long at) throws IOException {
        while (into.hasRemaining()) {
            if (channel.read(into, at + into.position()) < 0) {
                throw new IOException("the file ended at " + (at + into.position()) + " bytes, before its " + size
                        + " bytes were read (was it cut while being read?)");
            }
        }
    }

    /** {@return how many bytes the window holds at most now; for tests of its bound} */
    int capacity() {
        return buffer.length;
    }

    /** {@return the buffer holding the loaded bytes; valid until the next {@link #load}} */
    byte[] array() {
        return buffer;
    }

    /** {@return where the segment's byte at {@code offset} is in {@link #array()}} */
    int index(long offset) {
        return (int) (offset - start);
    }

    /** {@return the big-endian int at {@code offset}, which must be loaded} */
    int getInt(long offset) {
        int at = index(offset);
        return (buffer[at] & 0xFF) << 24 | (buffer[at + 1] & 0xFF) << 16 | (buffer[at + 2] & 0xFF) << 8
                | buffer[at + 3] & 0xFF;
    }

    /** {@return the big-endian unsigned 2-byte value at {@code offset}, which must be loaded} */
    int getUnsignedShort(long offset) {
        int at = index(offset);
        return (buffer[at] & 0xFF) << 8 | buffer[at + 1] & 0xFF;
    }

    @Override
    public void close() throws IOException {
        if (channel != null) {
            channel.close();
        }
    }
}
