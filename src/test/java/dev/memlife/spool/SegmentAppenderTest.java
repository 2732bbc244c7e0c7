package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.memlife.spool.SegmentFormat.Contents;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@link SegmentAppender}: group commit, and what is on disk after a lost page-cache tail. */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SegmentAppenderTest {

    @TempDir
    Path dir;

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void concurrentWritersShareForcesAndEveryConfirmedRecordIsInTheSegment() throws Exception {
        Path file = dir.resolve("00000001.seg");
        int threads = 8;
        int each = 300;
        Set<String> confirmed = ConcurrentHashMap.newKeySet();
        try (SegmentAppender segment = SegmentAppender.create(file)) {
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> writers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                Thread w = new Thread(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    for (int i = 0; i < each; i++) {
                        String record = "w" + id + "-" + i;
                        segment.awaitDurable(segment.append(utf8(record)));
                        confirmed.add(record);
                    }
                });
                w.start();
                writers.add(w);
            }
            go.countDown();
            for (Thread w : writers) {
                w.join(TimeUnit.SECONDS.toMillis(50));
            }
            assertThat(confirmed).hasSize(threads * each);
            assertThat(segment.forces()).as("callers shared forces").isLessThan(threads * each);
            assertThat(segment.durableLength()).isEqualTo(Files.size(file));
        }
        Contents c = SegmentFormat.read(file.toString(), Files.readAllBytes(file));
        Set<String> stored = new HashSet<>(SegmentFormatTest.payloads(c));
        assertThat(stored).isEqualTo(confirmed);
        assertThat(c.corrupt()).isEmpty();
        assertThat(c.tornTailBytes()).isZero();
    }

    /**
     * Power loss, simulated: the page cache's tail is lost, so the file is cut back to its last
     * forced length (and a part of the next record may have reached the disk). Every record whose
     * {@code awaitDurable} returned survives; what follows is a torn tail, cut, never half-read.
     */
    @Test
    void afterALostPageCacheTailEveryRecordReportedDurableSurvives() throws Exception {
        Path file = dir.resolve("00000002.seg");
        List<String> durable = new ArrayList<>();
        long durableLength;
        try (SegmentAppender segment = SegmentAppender.create(file)) {
            for (int i = 0; i < 60; i++) {
                segment.append(utf8("r" + i));
                durable.add("r" + i);
            }
            segment.awaitDurable(segment.append(utf8("r60")));
            durable.add("r60");
            for (int i = 61; i < 100; i++) {
                segment.append(utf8("r" + i)); // never confirmed
            }
            durableLength = segment.durableLength();
        }
        byte[] all = Files.readAllBytes(file);
        for (long extra : new long[] {0, 3, 9}) {
            byte[] survived = Arrays.copyOf(all, (int) (durableLength + extra));
            Contents c = SegmentFormat.read(file.toString(), survived);
            assertThat(SegmentFormatTest.payloads(c)).as("%d bytes past the last force", extra)
                    .startsWith(durable.toArray(String[]::new));
            assertThat(c.corrupt()).isEmpty();
            assertThat(c.validLength() + c.tornTailBytes()).isEqualTo(survived.length);
        }
    }

    @Test
    void aSegmentThatExistsIsNotOverwritten() throws Exception {
        Path file = dir.resolve("00000003.seg");
        Files.writeString(file, "someone else's");
        assertThatThrownBy(() -> SegmentAppender.create(file)).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining(file.toString());
        assertThat(Files.readString(file)).isEqualTo("someone else's");
    }
}
