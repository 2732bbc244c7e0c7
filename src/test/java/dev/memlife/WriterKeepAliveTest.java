package dev.memlife;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An idle manager holds no thread: its writer exits after the keep-alive and the next write starts
 * a new one, and no write is lost when a write and the writer's exit meet.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class WriterKeepAliveTest {

    private static final Duration FLUSH = Duration.ofSeconds(10);
    private static final Duration WAIT = Duration.ofSeconds(10);

    /** The threads a manager made, so a test can see which are still alive. */
    private static final class CountingThreads implements ThreadFactory {
        final List<Thread> made = new CopyOnWriteArrayList<>();

        @Override
        public Thread newThread(Runnable body) {
            Thread t = new Thread(body, "keep-alive-test-" + made.size());
            t.setDaemon(true);
            made.add(t);
            return t;
        }

        long alive() {
            return made.stream().filter(Thread::isAlive).count();
        }
    }

    @Test
    void anIdleWriterExitsAfterItsKeepAliveAndTheNextWriteStartsAnother() {
        CountingThreads threads = new CountingThreads();
        RecordingProvider provider = new RecordingProvider("rec");
        MemoryManager manager = MemoryManager.builder().name("idle").writerKeepAlive(Duration.ofMillis(50))
                .threadFactory(threads).build();
        manager.addProvider(provider);

        manager.syncAll("u1", "a1", "s");
        assertThat(manager.flushPending(FLUSH)).isTrue();
        assertThat(threads.made).hasSize(1);
        await().atMost(Duration.ofSeconds(10)).until(() -> threads.alive() == 0);

        manager.syncAll("u2", "a2", "s");
        assertThat(manager.flushPending(FLUSH)).isTrue();
        assertThat(threads.made).hasSize(2);

        DrainReport report = manager.stop();
        assertThat(provider.turns()).extracting(Turn::userContent).containsExactly("u1", "u2");
        assertThat(provider.turns()).allSatisfy(t -> assertThat(report.statusOf(t.writeId()))
                .isEqualTo(WriteStatus.DELIVERED));
        assertThat(report.delivered()).isEqualTo(2);
    }

    @Test
    void aWriterWithinItsKeepAliveKeepsItsThread() {
        CountingThreads threads = new CountingThreads();
        RecordingProvider provider = new RecordingProvider("rec");
        MemoryManager manager = MemoryManager.builder().writerKeepAlive(Duration.ofHours(1)).threadFactory(threads)
                .build();
        manager.addProvider(provider);
        for (int i = 0; i < 20; i++) {
            manager.syncAll("u" + i, "a", "s");
            assertThat(manager.flushPending(FLUSH)).isTrue();
        }
        assertThat(threads.made).hasSize(1);
        assertThat(threads.alive()).isEqualTo(1);
        assertThat(manager.stop().delivered()).isEqualTo(20);
        await().atMost(Duration.ofSeconds(10)).until(() -> threads.alive() == 0);
    }

    /**
     * Regression, found by the soak: a writer parked idle (every write delivered) when {@code stop}
     * came was never woken, so its thread and its manager stayed alive for good, one per idle
     * agent shut down.
     */
    @Test
    void anIdleWritersThreadEndsAtShutdown() throws Exception {
        // A keep-alive far longer than the test: the writer must end because shutdown woke it.
        MemoryManager m = MemoryManager.builder().name("idle").writerKeepAlive(Duration.ofHours(1)).build();
        m.addProvider(new RecordingProvider("rec"));
        m.syncAll("u", "a", "s");
        assertThat(m.flushPending(WAIT)).isTrue();
        Thread writer = m.writerThread();
        await().atMost(WAIT).until(() -> writer.getState() == Thread.State.TIMED_WAITING); // parked, idle

        assertThat(m.stop().delivered()).isEqualTo(1);

        writer.join(WAIT.toMillis());
        assertThat(writer.isAlive()).as("the writer of a shut-down manager").isFalse();
    }

    /**
     * With no keep-alive the writer retires a few microseconds after each round, so callers keep
     * appending while it retires. A write whose wake-up went to a retiring writer would wait in the
     * queue with no writer, and the round's flush would time out.
     */
    @Test
    void writesRacingTheWritersExitAreAllDeliveredInOrder() throws Exception {
        int producers = 4;
        int rounds = 1_500;
        CountingThreads threads = new CountingThreads();
        RecordingProvider provider = new RecordingProvider("rec");
        MemoryManager manager = MemoryManager.builder().name("racing").writerKeepAlive(Duration.ZERO)
                .threadFactory(threads).build();
        manager.addProvider(provider);
        CyclicBarrier start = new CyclicBarrier(producers + 1);
        CyclicBarrier written = new CyclicBarrier(producers + 1);
        List<Thread> workers = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int id = p;
            Thread t = new Thread(() -> {
                try {
                    for (int r = 0; r < rounds; r++) {
                        start.await();
                        manager.syncAll("p" + id + "-" + r, "a", "s" + id);
                        written.await();
                    }
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            t.start();
            workers.add(t);
        }
        for (int r = 0; r < rounds; r++) {
            start.await(10, TimeUnit.SECONDS);
            written.await(10, TimeUnit.SECONDS);
            assertThat(manager.flushPending(FLUSH)).as("flush of round %d", r).isTrue();
        }
        for (Thread t : workers) {
            t.join(TimeUnit.SECONDS.toMillis(10));
        }

        DrainReport report = manager.stop();
        assertThat(report.delivered()).isEqualTo((long) producers * rounds);
        assertThat(threads.made.size()).as("writer threads started: the writer did retire").isGreaterThan(1);
        for (int p = 0; p < producers; p++) {
            String session = "s" + p;
            List<String> expected = IntStream.range(0, rounds).mapToObj(r -> "p" + session.substring(1) + "-" + r)
                    .collect(Collectors.toList());
            assertThat(provider.turns().stream().filter(t -> t.sessionId().equals(session)).map(Turn::userContent))
                    .as("writes of producer %d, in order", p).containsExactlyElementsOf(expected);
        }
        assertThat(provider.turns()).allSatisfy(t -> assertThat(report.statusOf(t.writeId()))
                .isEqualTo(WriteStatus.DELIVERED));
    }

    /** hermes-agent agent/memory_manager.py: with no providers, sync_all creates no background worker. */
    @Test
    void aManagerWithNoProvidersStartsNoWriterThread() {
        CountingThreads threads = new CountingThreads();
        MemoryManager manager = MemoryManager.builder().threadFactory(threads).build();
        for (int i = 0; i < 3; i++) {
            assertThat(manager.syncAll("u" + i, "a", "s")).isTrue();
        }
        assertThat(manager.flushPending(FLUSH)).isTrue();
        assertThat(manager.figures().accepted()).isEqualTo(3);
        assertThat(manager.figures().delivered()).isEqualTo(3);
        assertThat(threads.made).isEmpty();

        DrainReport report = manager.stop();
        assertThat(report.submitted()).isEqualTo(3);
        assertThat(report.delivered()).isEqualTo(3);
        assertThat(manager.syncAll("late", "a", "s")).isFalse();
        assertThat(manager.rejectedWrites()).isEqualTo(1);
        assertThat(threads.made).as("nor does its shutdown start a thread").isEmpty();
    }

    @Test
    void manyIdleManagersOverOneSharedProviderHoldNoThread() {
        int managers = 300;
        CountingThreads threads = new CountingThreads();
        RecordingProvider shared = new RecordingProvider("shared");
        List<MemoryManager> all = new ArrayList<>();
        for (int m = 0; m < managers; m++) {
            MemoryManager manager = MemoryManager.builder().name("agent-" + m).writerKeepAlive(Duration.ofMillis(20))
                    .threadFactory(threads).build();
            manager.useProvider(shared);
            all.add(manager);
        }
        for (int turn = 0; turn < 2; turn++) {
            for (int m = 0; m < managers; m++) {
                all.get(m).syncAll("m" + m + "-t" + turn, "a", "agent-" + m);
            }
            for (MemoryManager manager : all) {
                assertThat(manager.flushPending(FLUSH)).isTrue();
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> threads.alive() == 0);
        }

        assertThat(threads.made.size()).isGreaterThanOrEqualTo(2 * managers); // each restarted after idling
        for (int m = 0; m < managers; m++) {
            DrainReport report = all.get(m).stop();
            assertThat(report.delivered()).isEqualTo(2);
            String session = "agent-" + m;
            assertThat(shared.turns().stream().filter(t -> t.sessionId().equals(session)).map(Turn::userContent))
                    .containsExactly("m" + m + "-t0", "m" + m + "-t1");
        }
        assertThat(shared.turns()).hasSize(2 * managers);
    }
}
