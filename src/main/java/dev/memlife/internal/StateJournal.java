package dev.memlife.internal;

import static java.util.Objects.requireNonNull;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A write-behind chat memory's spool: every state handed over is appended here, in the order it
 * was taken, before the call that handed it over returns, so the state survives the process (it
 * is in the kernel's page cache once the append returned: kill -9 and an OOM kill cannot take it;
 * in durable mode each append is also forced to disk, so power loss cannot either). At the next
 * start the last state of each id is replayed into the write-behind queue before anything reads
 * it.
 *
 * <p>One file, {@code states.log}, of records {@code [length][CRC32C][kind][id length][id][state]};
 * a record that is cut short or fails its checksum ends the file (a torn tail: what the crash cut
 * while it was appended, never acknowledged), is reported and cut off. Coalescing bounds it: once
 * no state waits the file is emptied, and past {@link #COMPACT_AT} bytes it is rewritten with only
 * the states that still wait. A lock file keeps a second process (or a second decorator in this
 * one) out. Not thread-safe: its owner calls it under its own lock.
 *
 * @param <K> the ids
 * @param <M> the messages
 */
public final class StateJournal<K, M> implements AutoCloseable {

    /** How an id and a state become bytes and back: the framework's own serialization. */
    public interface Codec<K, M> {
        /**
         * Turns an id into bytes.
         *
         * @param id an id
         * @return its bytes
         * @throws IllegalArgumentException if the id cannot be kept (its type, for example)
         */
        byte[] id(K id);

        /**
         * Turns bytes back into an id.
         *
         * @param bytes what {@link #id(Object)} made
         * @return the id
         */
        K id(byte[] bytes);

        /**
         * Turns messages into bytes.
         *
         * @param state the messages
         * @return their bytes
         */
        byte[] state(List<M> state);

        /**
         * Turns bytes back into messages.
         *
         * @param bytes what {@link #state(List)} made
         * @return the messages
         */
        List<M> state(byte[] bytes);
    }

    /**
     * A codec whose ids are strings, kept as UTF-8.
     *
     * @param <M> the messages
     */
    public interface StringIds<M> extends Codec<String, M> {
        @Override
        default byte[] id(String id) {
            return id.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        }

        @Override
        default String id(byte[] bytes) {
            return new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    /**
     * One id's latest state, or its deletion.
     *
     * @param id the id
     * @param state the messages; null for a delete
     */
    public record Entry<K, M>(K id, List<M> state) {}

    /** Past this size a state is appended only after the file was rewritten with what still waits. */
    static final long COMPACT_AT = 8L << 20;

    private static final Logger LOG = LoggerFactory.getLogger(StateJournal.class);
    private static final String FILE = "states.log";
    private static final int HEADER = 8;
    private static final byte SAVE = 1;
    private static final byte DELETE = 2;

    private final Path dir;
    private final Codec<K, M> codec;
    private final boolean durable;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final List<Entry<K, M>> replayed;
    private FileChannel channel;
    private long size;

    private StateJournal(Path dir, Codec<K, M> codec, boolean durable, FileChannel lockChannel, FileLock lock) {
        this.dir = dir;
        this.codec = codec;
        this.durable = durable;
        this.lockChannel = lockChannel;
        this.lock = lock;
        try {
            Path file = dir.resolve(FILE);
            this.replayed = read(file);
            this.channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            this.size = channel.size();
            channel.position(size);
        } catch (IOException e) {
            throw new UncheckedIOException("could not open the write-behind spool in " + dir, e);
        }
    }

    /**
     * Opens (creating it if needed) the spool in {@code dir} and reads what an earlier run left.
     *
     * @param dir the spool's directory
     * @param codec how ids and states become bytes
     * @param durable whether every append is forced to disk before it returns
     * @return the spool, holding its lock
     * @throws IllegalStateException if another process or decorator holds the directory
     * @throws UncheckedIOException if the directory cannot be created or read
     */
    public static <K, M> StateJournal<K, M> open(Path dir, Codec<K, M> codec, boolean durable) {
        requireNonNull(dir, "dir");
        requireNonNull(codec, "codec");
        FileChannel lockChannel = null;
        try {
            Files.createDirectories(dir);
            lockChannel = FileChannel.open(dir.resolve("lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock lock = FileLocks.tryLock(lockChannel);
            if (lock == null) {
                lockChannel.close();
                throw new IllegalStateException("write-behind spool " + dir + " is in use by another process or "
                        + "another write-behind chat memory: give each its own directory");
            }
            return new StateJournal<>(dir, codec, durable, lockChannel, lock);
        } catch (IOException e) {
            closeQuietly(lockChannel);
            throw new UncheckedIOException("could not open the write-behind spool in " + dir, e);
        }
    }

    /** {@return what an earlier run left: each id's last state (or deletion), in the order the ids first came} */
    public List<Entry<K, M>> replayed() {
        return replayed;
    }

    /** {@return the spool's directory} */
    public Path directory() {
        return dir;
    }

    /**
     * Appends {@code id}'s new state (null: its deletion); when it returns, the state survives the
     * process, and in durable mode power loss.
     *
     * @param id the id
     * @param state its messages; null for its deletion
     * @param live what still waits, asked for only when the file is rewritten past {@link #COMPACT_AT} bytes
     * @throws IllegalArgumentException if the codec cannot keep the id; nothing was appended
     * @throws UncheckedIOException if the disk refused it; nothing that callers can count on was appended
     */
    public void append(K id, List<M> state, Supplier<? extends Collection<Entry<K, M>>> live) {
        append(List.of(new Entry<>(id, state)), live);
    }

    /**
     * Appends the new states of {@code entries} (a null state: its deletion) in one write; when it
     * returns, they survive the process, and in durable mode power loss.
     *
     * @param entries the ids and their new states, in the order they were handed over
     * @param live what still waits, asked for only when the file is rewritten past {@link #COMPACT_AT} bytes
     * @throws IllegalArgumentException if the codec cannot keep an id or a state; nothing was appended
     * @throws UncheckedIOException if the disk refused it; nothing that callers can count on was appended
     */
    public void append(List<Entry<K, M>> entries, Supplier<? extends Collection<Entry<K, M>>> live) {
        ByteBuffer record;
        if (entries.size() == 1) {
            record = encode(entries.get(0).id(), entries.get(0).state());
        } else {
            List<ByteBuffer> each = new ArrayList<>(entries.size());
            int length = 0;
            for (Entry<K, M> e : entries) { // every one encoded before any byte is written
                ByteBuffer b = encode(e.id(), e.state());
                length = Math.addExact(length, b.remaining());
                each.add(b);
            }
            record = ByteBuffer.allocate(length);
            each.forEach(record::put);
            record.flip();
        }
        try {
            if (size + record.remaining() > COMPACT_AT) {
                rewrite(live.get());
            }
            size += writeFully(channel, record);
            if (durable) {
                channel.force(false);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("write-behind spool " + dir + ": could not append the state of "
                    + (entries.size() == 1 ? entries.get(0).id() : entries.size() + " ids"), e);
        }
    }

    /**
     * Rewrites the file with only {@code live}, the states that still wait (an empty file if none),
     * forced and moved into place atomically.
     *
     * @throws UncheckedIOException if the disk refused it; the old file stays
     */
    public void compact(Collection<Entry<K, M>> live) {
        try {
            rewrite(live);
        } catch (IOException e) {
            throw new UncheckedIOException("write-behind spool " + dir + ": could not compact", e);
        }
    }

    /**
     * Empties the file: every state it held is in the backend. Not forced: after a crash before the
     * truncation reached the disk, those states are replayed once more, which writes what the
     * backend already holds.
     *
     * @throws UncheckedIOException if the file could not be truncated
     */
    public void clear() {
        if (size == 0) {
            return;
        }
        try {
            channel.truncate(0);
            channel.position(0);
            size = 0;
        } catch (IOException e) {
            throw new UncheckedIOException("write-behind spool " + dir + ": could not empty it", e);
        }
    }

    /** {@return the file's size now, in bytes} */
    public long size() {
        return size;
    }

    @Override
    public void close() {
        closeQuietly(channel);
        try {
            lock.release();
        } catch (IOException e) {
            LOG.warn("write-behind spool {}: releasing its lock failed", dir, e);
        }
        closeQuietly(lockChannel);
    }

    private void rewrite(Collection<Entry<K, M>> live) throws IOException {
        Path tmp = dir.resolve(FILE + ".tmp");
        long written = 0;
        try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            for (Entry<K, M> e : live) {
                written += writeFully(out, encode(e.id(), e.state()));
            }
            out.force(true);
        }
        // Moved over the file still open for appends (the old channel keeps the old file), then
        // reopened: if the move fails, the old file and its channel go on as they were.
        Files.move(tmp, dir.resolve(FILE), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true); // the rename, on disk
        } catch (IOException ignored) {
            // not every file system lets a directory be opened; the rename still happened
        }
        FileChannel rewritten = FileChannel.open(dir.resolve(FILE), StandardOpenOption.WRITE);
        rewritten.position(written);
        closeQuietly(channel);
        channel = rewritten;
        size = written;
    }

    private ByteBuffer encode(K id, List<M> state) {
        byte[] idBytes = codec.id(id);
        byte[] stateBytes = state == null ? new byte[0] : codec.state(state);
        int payload = 1 + 4 + idBytes.length + stateBytes.length;
        ByteBuffer b = ByteBuffer.allocate(HEADER + payload);
        b.putInt(payload).putInt(0).put(state == null ? DELETE : SAVE).putInt(idBytes.length).put(idBytes).put(stateBytes);
        CRC32C crc = new CRC32C();
        crc.update(b.array(), HEADER, payload);
        b.putInt(4, (int) crc.getValue());
        return b.flip();
    }

    private List<Entry<K, M>> read(Path file) throws IOException {
        if (!Files.exists(file)) {
            return List.of();
        }
        byte[] all = Files.readAllBytes(file);
        Map<K, Entry<K, M>> last = new LinkedHashMap<>();
        ByteBuffer b = ByteBuffer.wrap(all);
        int good = 0;
        while (b.remaining() >= HEADER) {
            int payload = b.getInt();
            int expected = b.getInt();
            if (payload < 5 || payload > b.remaining()) {
                break;
            }
            CRC32C crc = new CRC32C();
            crc.update(all, b.position(), payload);
            if ((int) crc.getValue() != expected) {
                break;
            }
            byte kind = b.get();
            int idLength = b.getInt();
            if (idLength < 0 || idLength > payload - 5 || (kind != SAVE && kind != DELETE)) {
                break;
            }
            byte[] id = new byte[idLength];
            b.get(id);
            byte[] state = new byte[payload - 5 - idLength];
            b.get(state);
            K key = codec.id(id);
            last.remove(key); // an id's place is where its latest state came
            last.put(key, new Entry<>(key, kind == DELETE ? null : codec.state(state)));
            good = b.position();
        }
        if (good < all.length) {
            LOG.warn("write-behind spool {}: {} bytes after the last whole record ({} of {}) are a torn tail, "
                    + "cut off: a state the crash cut while it was appended, never acknowledged", dir,
                    all.length - good, good, all.length);
            try (FileChannel c = FileChannel.open(file, StandardOpenOption.WRITE)) {
                c.truncate(good);
                c.force(true);
            }
        }
        if (!last.isEmpty()) {
            LOG.info("write-behind spool {}: {} states an earlier run left, replayed before the first read", dir,
                    last.size());
        }
        return List.copyOf(new ArrayList<>(last.values()));
    }

    private static int writeFully(FileChannel out, ByteBuffer b) throws IOException {
        int n = b.remaining();
        while (b.hasRemaining()) {
            out.write(b);
        }
        return n;
    }

    private static void closeQuietly(FileChannel c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (IOException ignored) {
            // closing what is being given up
        }
    }
}
