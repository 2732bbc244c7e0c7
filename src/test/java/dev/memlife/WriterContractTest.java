package dev.memlife;

import static dev.memlife.HeldWrites.writeIds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.memlife.testing.GatedProvider;
import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Design section 2, contracts 1, 2 and 9: one writer, a non-blocking {@code syncAll}, a bounded queue. */
@Timeout(30)
class WriterContractTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final List<MemoryManager> managers = new ArrayList<>();

    private MemoryManager manager(MemoryManager.Builder builder) {
        MemoryManager m = builder.build();
        managers.add(m);
        return m;
    }

    @AfterEach
    void shutDown() {
        managers.forEach(m -> m.stop(Duration.ZERO));
    }

    @Test
    void writesAreDeliveredInAcceptanceOrderOnOneNamedDaemonThread() {
        List<Thread> threads = new CopyOnWriteArrayList<>();
        RecordingProvider provider = new RecordingProvider("rec") {
            @Override
            public void syncTurn(Turn turn) {
                threads.add(Thread.currentThread());
                super.syncTurn(turn);
            }
        };
        MemoryManager m = manager(MemoryManager.builder().name("orders"));
        m.addProvider(provider);
        for (int i = 0; i < 500; i++) {
            m.syncAll("u" + i, "a" + i, "s");
        }

        assertThat(m.flushPending(Duration.ofSeconds(10))).isTrue();
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            expected.add("a" + i);
        }
        assertThat(provider.assistantContents()).containsExactlyElementsOf(expected);
        assertThat(new HashSet<>(threads)).hasSize(1);
        Thread writer = threads.get(0);
        assertThat(writer.getName()).isEqualTo("memlife-writer-orders");
        assertThat(writer.isDaemon()).isTrue();
    }

    @Test
    void writerThreadStartsLazilyWithTheFirstWrite() {
        MemoryManager m = manager(MemoryManager.builder());
        m.addProvider(new RecordingProvider("rec"));
        assertThat(m.writerThread()).isNull();

        m.syncAll("hello", "hi", "s");

        assertThat(m.writerThread()).isNotNull();
    }

    @Test
    void providerNeverSeesTwoWritesAtOnceEvenWithManyCallers() throws Exception {
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        RecordingProvider provider = new RecordingProvider("rec") {
            @Override
            public void syncTurn(Turn turn) {
                maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                super.syncTurn(turn);
                inside.decrementAndGet();
            }
        };
        MemoryManager m = manager(MemoryManager.builder());
        m.addProvider(provider);
        int callers = 4;
        int each = 2_000;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < callers; c++) {
            int id = c;
            Thread t = new Thread(() -> {
                awaitQuietly(start);
                for (int i = 0; i < each; i++) {
                    m.syncAll("u", id + ":" + i, "s");
                }
            });
            t.start();
            threads.add(t);
        }
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }

        assertThat(m.flushPending(Duration.ofSeconds(20))).isTrue();
        assertThat(maxInside.get()).isEqualTo(1);
        assertThat(provider.turns()).hasSize(callers * each);
        // Each caller's own writes stay in its order.
        for (int c = 0; c < callers; c++) {
            String prefix = c + ":";
            List<String> mine = provider.assistantContents().stream().filter(a -> a.startsWith(prefix)).toList();
            for (int i = 0; i < each; i++) {
                assertThat(mine.get(i)).isEqualTo(prefix + i);
            }
        }
    }

    @Test
    void syncAllReturnsWhileTheProviderIsHeld() {
        GatedProvider gated = new GatedProvider("gated");
        MemoryManager m = manager(MemoryManager.builder());
        m.addProvider(gated);
        try {
            assertThat(m.syncAll("first", "held", "s")).isTrue();
            assertThat(gated.awaitHeld(Duration.ofSeconds(10))).isTrue();

            for (int i = 0; i < 100; i++) {
                assertThat(m.syncAll("more " + i, "queued", "s")).isTrue();
            }

            assertThat(m.pendingWrites()).isEqualTo(101);
            assertThat(gated.turns()).isEmpty();
        } finally {
            gated.open();
        }
        assertThat(m.flushPending(Duration.ofSeconds(10))).isTrue();
        assertThat(gated.turns()).hasSize(101);
    }

    @Test
    void everyWriteGetsAUniqueWriteIdThatStaysTheSame() {
        RecordingProvider provider = new RecordingProvider("rec");
        MemoryManager m = manager(MemoryManager.builder());
        m.addProvider(provider);
        for (int i = 0; i < 1_000; i++) {
            m.syncAll("u", "a", "s");
        }
        MemoryManager other = manager(MemoryManager.builder());
        RecordingProvider otherProvider = new RecordingProvider("rec");
        other.addProvider(otherProvider);
        other.syncAll("u", "a", "s");

        assertThat(m.flushPending(Duration.ofSeconds(10))).isTrue();
        assertThat(other.flushPending(Duration.ofSeconds(10))).isTrue();
        Set<String> ids = new HashSet<>();
        for (Turn t : provider.turns()) {
            assertThat(t.writeId()).isEqualTo(t.writeId()).isNotBlank();
            ids.add(t.writeId());
        }
        ids.add(otherProvider.turns().get(0).writeId());
        assertThat(ids).hasSize(1_001);
    }

    @Test
    void blankUserContentIsNotATurn() {
        RecordingProvider provider = new RecordingProvider("rec");
        MemoryManager m = manager(MemoryManager.builder());
        m.addProvider(provider);

        assertThat(m.syncAll("   ", "reply", "s")).isFalse();
        assertThat(m.syncAll("", "reply", "s")).isFalse();

        assertThat(m.pendingWrites()).isZero();
        assertThat(m.writerThread()).isNull();
        assertThat(m.stop().submitted()).isZero();
        assertThat(provider.turns()).isEmpty();
    }

    /** Regression (reliability issue, defect 10c): a blank user text dropped a real assistant reply with no count and no log. */
    @Test
    void aBlankUserTurnIsCountedNotDroppedUnseen() {
        MemoryManager m = MemoryManager.create();
        assertThat(m.syncAll(" ", "a real reply", "s")).isFalse();
        assertThat(m.blankTurns()).isEqualTo(1);
        DrainReport report = m.stop();
        assertThat(report.blankTurns()).isEqualTo(1);
        assertThat(report.submitted()).isZero();
    }

    @Test
    void aWriteGoesToTheProvidersRegisteredWhenItWasAccepted() {
        GatedProvider first = new GatedProvider("first");
        RecordingProvider late = new RecordingProvider("late");
        MemoryManager m = manager(MemoryManager.builder());
        m.addProvider(first);
        try {
            m.syncAll("before", "a", "s");
            assertThat(first.awaitHeld(Duration.ofSeconds(10))).isTrue();
            m.addProvider(late);
            m.syncAll("after", "b", "s");
        } finally {
            first.open();
        }

        assertThat(m.flushPending(Duration.ofSeconds(10))).isTrue();
        assertThat(first.assistantContents()).containsExactly("a", "b");
        assertThat(late.assistantContents()).containsExactly("b");
    }

    @Test
    void turnCarriesWhatTheCallerHandedOver() {
        RecordingProvider provider = new RecordingProvider("rec");
        MemoryManager m = manager(MemoryManager.builder());
        m.addProvider(provider);
        List<Message> messages = new ArrayList<>(List.of(Message.user("q"), Message.assistant("r")));

        m.syncAll("q", "r", "session-7", messages);
        messages.clear(); // the caller's list may change afterwards

        assertThat(m.flushPending(Duration.ofSeconds(10))).isTrue();
        Turn turn = provider.turns().get(0);
        assertThat(turn.sessionId()).isEqualTo("session-7");
        assertThat(turn.userContent()).isEqualTo("q");
        assertThat(turn.assistantContent()).isEqualTo("r");
        assertThat(turn.messages()).containsExactly(Message.user("q"), Message.assistant("r"));
    }

    /**
     * Regression (reliability issue, defect 10b): the list handed to {@code syncBatch} was a view
     * of the writer's reused buffer; a provider that kept it got {@code
     * ConcurrentModificationException} (or other writes) later.
     */
    @Test
    void aBatchAProviderKeepsStaysAsItWasHanded() throws Exception {
        List<List<Turn>> kept = new CopyOnWriteArrayList<>();
        List<List<String>> seen = new CopyOnWriteArrayList<>();
        MemoryProvider keeper = new MemoryProvider() {
            @Override
            public String name() {
                return "keeper";
            }

            @Override
            public void syncBatch(List<Turn> turns) {
                kept.add(turns);
                seen.add(writeIds(turns));
            }
        };
        MemoryManager m = MemoryManager.create();
        m.addProvider(keeper);
        for (int round = 0; round < 20; round++) {
            for (int i = 0; i < 5; i++) {
                m.syncAll("u", "r" + round + "w" + i, "s");
            }
            assertThat(m.flushPending(WAIT)).isTrue();
        }
        m.stop();

        for (int i = 0; i < kept.size(); i++) {
            assertThat(writeIds(kept.get(i))).isEqualTo(seen.get(i));
        }
    }

    @Test
    void fullQueueBlocksForTheEnqueueTimeoutThenThrowsWithCapacityAndPending() {
        GatedProvider gated = new GatedProvider("gated");
        MemoryManager m = manager(MemoryManager.builder().name("small").queueCapacity(2)
                .enqueueTimeout(Duration.ofMillis(100)));
        m.addProvider(gated);
        try {
            m.syncAll("1", "in flight", "s");
            assertThat(gated.awaitHeld(Duration.ofSeconds(10))).isTrue();
            m.syncAll("2", "queued", "s");
            m.syncAll("3", "queued", "s");

            assertThatThrownBy(() -> m.syncAll("4", "no room", "s"))
                    .isInstanceOf(QueueFullException.class)
                    .hasMessageContaining("'small'")
                    .hasMessageContaining("capacity 2")
                    .hasMessageContaining("3 writes pending")
                    .satisfies(e -> {
                        assertThat(((QueueFullException) e).capacity()).isEqualTo(2);
                        assertThat(((QueueFullException) e).pending()).isEqualTo(3);
                    });
            assertThat(m.rejectedWrites()).isEqualTo(1);
        } finally {
            gated.open();
        }
        DrainReport report = m.stop(Duration.ofSeconds(10));
        assertThat(report.delivered()).isEqualTo(3);
        assertThat(report.rejected()).isEqualTo(1);
        assertThat(report.submitted()).isEqualTo(4);
    }

    @Test
    void fullQueueAcceptsTheWriteOnceTheWriterMakesRoom() throws Exception {
        GatedProvider gated = new GatedProvider("gated");
        MemoryManager m = manager(MemoryManager.builder().queueCapacity(1).enqueueTimeout(Duration.ofSeconds(20)));
        m.addProvider(gated);
        AtomicReference<Boolean> accepted = new AtomicReference<>();
        Thread caller;
        try {
            m.syncAll("1", "in flight", "s");
            assertThat(gated.awaitHeld(Duration.ofSeconds(10))).isTrue();
            m.syncAll("2", "queued", "s");
            caller = new Thread(() -> accepted.set(m.syncAll("3", "waits for room", "s")));
            caller.start();
            await().atMost(Duration.ofSeconds(10)).until(() -> caller.getState() == Thread.State.TIMED_WAITING);
            assertThat(accepted.get()).isNull();
        } finally {
            gated.open();
        }
        caller.join();
        assertThat(accepted.get()).isTrue();
        assertThat(m.flushPending(Duration.ofSeconds(10))).isTrue();
        assertThat(gated.assistantContents()).containsExactly("in flight", "queued", "waits for room");
    }

    @Test
    void callerWaitingForRoomIsRejectedWhenShutdownBegins() throws Exception {
        GatedProvider gated = new GatedProvider("gated");
        MemoryManager m = manager(MemoryManager.builder().queueCapacity(1).enqueueTimeout(Duration.ofSeconds(20)));
        m.addProvider(gated);
        AtomicReference<Boolean> accepted = new AtomicReference<>();
        m.syncAll("1", "in flight", "s");
        assertThat(gated.awaitHeld(Duration.ofSeconds(10))).isTrue();
        m.syncAll("2", "queued", "s");
        Thread caller = new Thread(() -> accepted.set(m.syncAll("3", "waits for room", "s")));
        caller.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> caller.getState() == Thread.State.TIMED_WAITING);

        DrainReport report;
        try {
            report = m.stop(Duration.ZERO);
        } finally {
            gated.open();
        }
        caller.join();

        assertThat(accepted.get()).isFalse();
        assertThat(report.rejected()).isEqualTo(1);
        assertThat(report.abandonedWriteIds()).hasSize(1);
        assertThat(report.stillRunning()).isEqualTo(1);
        assertThat(report.submitted()).isEqualTo(3);
    }

    /**
     * Regression (reliability issue, defect 3): when the writer thread could not be started,
     * {@code syncAll} threw but the write stayed queued, so a retry stored the turn twice under two
     * write ids.
     */
    @Test
    void syncAllThatThrowsBecauseNoWriterCanStartQueuedNothing() {
        AtomicInteger calls = new AtomicInteger();
        ThreadFactory firstFails = r -> {
            if (calls.getAndIncrement() == 0) {
                throw new OutOfMemoryError("unable to create native thread (simulated)");
            }
            Thread t = new Thread(r, "writer");
            t.setDaemon(true);
            return t;
        };
        RecordingProvider provider = new RecordingProvider("rec");
        MemoryManager m = MemoryManager.builder().threadFactory(firstFails).build();
        m.addProvider(provider);

        assertThatThrownBy(() -> m.syncAll("u", "turn", "s")).isInstanceOf(RejectedExecutionException.class)
                .hasMessageContaining("not accepted");
        assertThat(m.rejectedWrites()).isEqualTo(1);
        assertThat(m.syncAll("u", "turn", "s")).as("the caller retries").isTrue();
        assertThat(m.flushPending(WAIT)).isTrue();

        assertThat(provider.turns()).hasSize(1);
        DrainReport report = m.stop();
        assertThat(report.delivered()).isEqualTo(1);
        assertThat(report.rejected()).isEqualTo(1);
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void acceptedAtIsTheWallClockTimeTheWriterTookTheWriteAndNeverDecreasesInQueueOrder() {
        RecordingProvider provider = new RecordingProvider("rec");
        MemoryManager m = manager(MemoryManager.builder().name("stamps"));
        m.addProvider(provider);
        Instant before = Instant.ofEpochMilli(System.currentTimeMillis());
        for (int i = 0; i < 2_000; i++) {
            m.syncAll("u" + i, "a" + i, "s");
        }
        assertThat(m.flushPending(Duration.ofSeconds(10))).isTrue();
        Instant after = Instant.ofEpochMilli(System.currentTimeMillis());

        List<Turn> turns = provider.turns();
        assertThat(turns).hasSize(2_000);
        for (int i = 0; i < turns.size(); i++) {
            assertThat(turns.get(i).acceptedAt()).isBetween(before, after);
            if (i > 0) {
                assertThat(turns.get(i).acceptedAt()).isAfterOrEqualTo(turns.get(i - 1).acceptedAt());
            }
        }
    }
}
