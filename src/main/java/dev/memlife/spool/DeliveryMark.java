package dev.memlife.spool;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The spool's delivery mark: the position up to which every write was handed to every provider,
 * in a 16-byte file ({@code "MLDM"}, the position, the CRC32C of both) rewritten in place. Not
 * forced: a mark older than the truth only replays writes the idempotent store already holds, and
 * a mark that does not check (a torn write, on a disk that tears 16 bytes) counts as none, which
 * replays every write still in the spool.
 */
final class DeliveryMark {

    private static final Logger LOG = LoggerFactory.getLogger(DeliveryMark.class);

    /** The mark file's name. */
    static final String FILE = "delivered.mark";
    private static final int MAGIC = 0x4D4C444D; // "MLDM"
    private static final int BYTES = 16;

    private final Path file;
    private FileChannel channel;

    DeliveryMark(Path dir) {
        this.file = dir.resolve(FILE);
    }

    /** {@return the recorded position; 0 if there is none, or it does not check (logged)} */
    long read() {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return 0;
        } catch (IOException e) {
            LOG.warn("spool mark {} could not be read ({}); every write still in the spool is replayed", file,
                    e.toString());
            return 0;
        }
        Long position = decode(bytes);
        if (position == null) {
            LOG.warn("spool mark {} is damaged ({} bytes that do not check); every write still in the spool is "
                    + "replayed, and the idempotent store keeps each once", file, bytes.length);
            return 0;
        }
        return position;
    }

    /** The position in a mark file's bytes; null if they do not check. */
    static Long decode(byte[] bytes) {
        if (bytes.length != BYTES) {
            return null;
        }
        ByteBuffer in = ByteBuffer.wrap(bytes);
        if (in.getInt(0) != MAGIC || in.getInt(12) != checksum(bytes)) {
            return null;
        }
        return in.getLong(4);
    }

    /** Records {@code position}, in place and without forcing it. */
    void write(long position) throws IOException {
        if (channel == null) {
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        }
        byte[] bytes = ByteBuffer.allocate(BYTES).putInt(MAGIC).putLong(position).putInt(0).array();
        ByteBuffer.wrap(bytes).putInt(12, checksum(bytes));
        ByteBuffer out = ByteBuffer.wrap(bytes);
        long at = 0;
        while (out.hasRemaining()) {
            at += channel.write(out, at);
        }
    }

    private static int checksum(byte[] bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, 12);
        return (int) crc.getValue();
    }

    /** Closes the mark's file. */
    void close() throws IOException {
        if (channel != null) {
            channel.close();
            channel = null;
        }
    }
}
