package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class SegmentFileTest {

    @TempDir
    Path dir;

    /**
     * The JDK writes a heap array through a direct buffer as large as the write, and keeps it for
     * the thread: a segment is written a chunk at a time, so the committer holds no more than that.
     */
    @Test
    @Timeout(30)
    void aLargeWriteLandsWholeAndHoldsNoMoreNativeMemoryThanAFewChunks() throws Exception {
        BufferPoolMXBean direct = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .filter(pool -> pool.getName().equals("direct")).findFirst().orElseThrow();
        byte[] header = SegmentFormat.header("prefix");
        byte[] large = new byte[16 * SegmentFile.WRITE_CHUNK];
        new Random(3).nextBytes(large);
        Path path = dir.resolve("1.seg");
        AtomicLong grown = new AtomicLong();
        AtomicReference<Throwable> failed = new AtomicReference<>();
        Thread writer = new Thread(() -> { // a thread of its own: the JDK's cache of direct buffers is per thread
            try (SegmentFile segment = SegmentFile.create(path, header)) {
                long before = direct.getMemoryUsed();
                segment.write(large, 0, large.length);
                grown.set(direct.getMemoryUsed() - before);
            } catch (Throwable e) {
                failed.set(e);
            }
        });
        writer.start();
        writer.join();

        assertThat(failed.get()).isNull();
        assertThat(grown.get()).as("native memory the write left held").isLessThan(4L * SegmentFile.WRITE_CHUNK);
        byte[] file = Files.readAllBytes(path);
        assertThat(file).hasSize(header.length + large.length);
        assertThat(Arrays.copyOfRange(file, 0, header.length)).isEqualTo(header);
        assertThat(Arrays.copyOfRange(file, header.length, file.length)).isEqualTo(large);
    }
}
