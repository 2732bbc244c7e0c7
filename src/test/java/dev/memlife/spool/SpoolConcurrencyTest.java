package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.memlife.MemoryManager;
import dev.memlife.Turn;
import dev.memlife.testing.GatedProvider;
import dev.memlife.testing.RecordingProvider;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Many producers on one spool: the order lock keeps the spool's order the queue's, group commit
 * shares forces, every write confirmed durable is replayed after a crash exactly once and in its
 * producer's order, and an idle spool gives its committer thread back.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SpoolConcurrencyTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final int PRODUCERS = 8;
    private static final int EACH = 2_000;
    private static final int GROUP = 50;

    @TempDir
    Path tmp;

    @Test
    void everyWriteConfirmedByConcurrentProducersIsReplayedOnceInItsProducersOrder() throws Exception {
        Path dir = tmp.resolve("spool");
        GatedProvider held = new GatedProvider("store", t -> true); // nothing is delivered: all stays in the spool
        MemoryManager first = MemoryManager.builder().name("first").queueCapacity(PRODUCERS * EACH)
                .spool(Spool.builder(dir).segmentBytes(64 * 1024).open()).build();
        first.addProvider(held);
        Set<String> confirmed = ConcurrentHashMap.newKeySet();
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(PRODUCERS);
        List<Future<?>> producers = new ArrayList<>();
        for (int p = 0; p < PRODUCERS; p++) {
            int producer = p;
            producers.add(pool.submit(() -> {
                go.await();
                List<String> group = new ArrayList<>();
                for (int i = 0; i < EACH; i++) {
                    String marker = producer + "-" + i;
                    assertThat(first.syncAll(marker, "a", "s" + producer)).isTrue();
                    group.add(marker);
                    if (group.size() == GROUP) {
                        assertThat(first.awaitDurable(WAIT)).as("durable by %s", marker).isTrue();
                        confirmed.addAll(group);
                        group.clear();
                    }
                }
                return null;
            }));
        }
        go.countDown();
        for (Future<?> f : producers) {
            f.get();
        }
        pool.shutdown();
        assertThat(confirmed).hasSize(PRODUCERS * EACH);
        long commits = first.figures().spool().groupCommits();
        assertThat(commits).as("forces shared by the producers").isLessThan(PRODUCERS * EACH / GROUP);

        Path image = tmp.resolve("crash");
        SpoolTest.crashImage(dir, image);
        RecordingProvider store = new RecordingProvider("store");
        MemoryManager second = MemoryManager.builder().name("second").queueCapacity(1_000)
                .spool(Spool.open(image)).build();
        second.addProvider(store);
        assertThat(second.replaySpool()).isEqualTo(PRODUCERS * EACH);
        assertThat(second.flushPending(WAIT)).isTrue();

        Map<String, Integer> seen = new HashMap<>();
        int[] next = new int[PRODUCERS];
        for (Turn t : store.turns()) {
            String marker = t.userContent();
            assertThat(seen.merge(marker, 1, Integer::sum)).as("%s replayed once", marker).isEqualTo(1);
            int producer = Integer.parseInt(marker.substring(0, marker.indexOf('-')));
            int i = Integer.parseInt(marker.substring(marker.indexOf('-') + 1));
            assertThat(i).as("producer %d's writes in its order", producer).isEqualTo(next[producer]);
            next[producer]++;
        }
        assertThat(seen.keySet()).isEqualTo(confirmed);
        second.stop();
        assertThat(SpoolTest.segments(image)).isEmpty();
        held.open();
        first.stop();
    }

    @Test
    void theDeliveryMarkCoversExactlyTheWritesDeliveredWhileProducersRace() throws Exception {
        Path dir = tmp.resolve("spool");
        Spool spool = Spool.open(dir);
        AtomicInteger seen = new AtomicInteger();
        int deliverFirst = 3_000;
        GatedProvider store = new GatedProvider("store", t -> seen.incrementAndGet() > deliverFirst);
        MemoryManager first = MemoryManager.builder().name("first").queueCapacity(PRODUCERS * EACH).spool(spool)
                .build();
        first.addProvider(store);
        Set<String> accepted = ConcurrentHashMap.newKeySet();
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(PRODUCERS);
        List<Future<?>> producers = new ArrayList<>();
        for (int p = 0; p < PRODUCERS; p++) {
            int producer = p;
            producers.add(pool.submit(() -> {
                go.await();
                for (int i = 0; i < EACH / 2; i++) {
                    String marker = producer + "-" + i;
                    assertThat(first.syncAll(marker, "a", "s")).isTrue();
                    accepted.add(marker);
                }
                return null;
            }));
        }
        go.countDown();
        for (Future<?> f : producers) {
            f.get();
        }
        pool.shutdown();
        assertThat(first.awaitDurable(WAIT)).isTrue();
        assertThat(store.awaitHeld(WAIT)).isTrue(); // the first 3,000 in queue order delivered, the next held
        await().atMost(WAIT).until(() -> spool.log().markWritten() == spool.log().deliveredPosition());
        Set<String> delivered = store.turns().stream().map(Turn::userContent).collect(Collectors.toSet());
        assertThat(delivered).hasSize(deliverFirst);

        Path image = tmp.resolve("crash");
        SpoolTest.crashImage(dir, image);
        RecordingProvider after = new RecordingProvider("store");
        MemoryManager second = MemoryManager.builder().name("second").spool(Spool.open(image)).build();
        second.addProvider(after);
        second.replaySpool();
        assertThat(second.flushPending(WAIT)).isTrue();
        Set<String> replayed = after.turns().stream().map(Turn::userContent).collect(Collectors.toSet());
        assertThat(after.turns()).hasSize(replayed.size());
        Set<String> both = new HashSet<>(replayed);
        both.retainAll(delivered);
        assertThat(both).as("delivered before the crash and replayed after it").isEmpty();
        Set<String> lost = new HashSet<>(accepted);
        lost.removeAll(delivered);
        lost.removeAll(replayed);
        assertThat(lost).as("neither delivered nor replayed").isEmpty();
        second.stop();
        store.open();
        first.stop();
    }

    @Test
    void interruptingCallersWhoWaitForTheDiskNeverBreaksTheSpool() throws Exception {
        RecordingProvider store = new RecordingProvider("store");
        MemoryManager manager = MemoryManager.builder().name("interrupted").queueCapacity(100_000)
                .spool(Spool.open(tmp.resolve("spool"))).build();
        manager.addProvider(store);
        int callers = 4;
        AtomicInteger accepted = new AtomicInteger();
        AtomicInteger interrupted = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(callers);
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < callers; c++) {
            Thread t = new Thread(() -> {
                try {
                    for (int i = 0; i < 300; i++) {
                        manager.syncAll("turn " + i, "a", "s");
                        accepted.incrementAndGet();
                        if (!manager.awaitDurable(WAIT)) {
                            assertThat(Thread.interrupted()).as("false only when interrupted").isTrue();
                            interrupted.incrementAndGet();
                        }
                    }
                } finally {
                    done.countDown();
                }
            });
            threads.add(t);
            t.start();
        }
        while (done.getCount() > 0) { // interrupt the waiters while forces run
            for (Thread t : threads) {
                t.interrupt();
            }
            Thread.onSpinWait();
        }
        assertThat(interrupted.get()).as("some waits were interrupted").isPositive();
        manager.syncAll("after", "a", "s");
        assertThat(manager.awaitDurable(WAIT)).as("the spool still forces").isTrue();
        assertThat(manager.flushPending(WAIT)).isTrue();
        assertThat(store.turns()).hasSize(accepted.get() + 1);
        assertThat(manager.stop().delivered()).isEqualTo(accepted.get() + 1);
    }

    @Test
    void anIdleSpoolGivesItsCommitterThreadBackAndTheNextWriteStartsOne() throws Exception {
        RecordingProvider store = new RecordingProvider("store");
        MemoryManager manager = MemoryManager.builder().name("idle-spool").writerKeepAlive(Duration.ZERO)
                .spool(Spool.open(tmp.resolve("spool"))).build();
        manager.addProvider(store);
        for (int round = 0; round < 3; round++) {
            manager.syncAll("turn " + round, "a", "s");
            assertThat(manager.awaitDurable(WAIT)).isTrue();
            assertThat(manager.flushPending(WAIT)).isTrue();
            await().atMost(WAIT).until(() -> committers("idle-spool") == 0);
        }
        assertThat(store.turns()).extracting(Turn::userContent).containsExactly("turn 0", "turn 1", "turn 2");
        manager.stop();
    }

    private static long committers(String manager) {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("memlife-spool-" + manager) && t.isAlive()).count();
    }
}
