package dev.memlife;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The writer's queue on its own: reservation, capacity, closing, order and links. */
@Timeout(30)
class TurnQueueTest {

    private static QueuedTurn turn(String assistant) {
        return new QueuedTurn("q", "s", "u", assistant, List.of(), null);
    }

    /** Reserves and appends like a caller does; returns the sequence number or the refusal. */
    private static long offer(TurnQueue queue, QueuedTurn turn) {
        long seq = queue.reserve();
        if (seq > 0) {
            turn.assignSeq(seq);
            queue.append(turn);
        }
        return seq;
    }

    private static List<Turn> takeAll(TurnQueue queue) {
        List<Turn> taken = new ArrayList<>();
        for (Turn t; (t = queue.poll()) != null; ) {
            taken.add(t);
        }
        queue.endTake();
        return taken;
    }

    @Test
    void reservationsNumberWritesFromOneAndTakingReturnsThemInOrder() {
        TurnQueue queue = new TurnQueue(10);
        QueuedTurn a = turn("a");
        QueuedTurn b = turn("b");
        QueuedTurn c = turn("c");

        assertThat(offer(queue, a)).isEqualTo(1);
        assertThat(offer(queue, b)).isEqualTo(2);
        assertThat(offer(queue, c)).isEqualTo(3);

        assertThat(queue.reserved()).isEqualTo(3);
        assertThat(takeAll(queue)).containsExactly(a, b, c);
        assertThat(a.writeId()).isEqualTo("q:1");
        assertThat(queue.taken()).isEqualTo(3);
        assertThat(queue.poll()).isNull();
    }

    @Test
    void aFullQueueRefusesUntilTheTakerPublishesWhatItTook() {
        TurnQueue queue = new TurnQueue(2);
        offer(queue, turn("a"));
        offer(queue, turn("b"));

        assertThat(queue.reserve()).isEqualTo(TurnQueue.FULL);
        assertThat(queue.isFull()).isTrue();

        assertThat(queue.poll()).isNotNull();
        assertThat(queue.reserve()).as("taken but not yet published: still full").isEqualTo(TurnQueue.FULL);
        queue.endTake();

        assertThat(queue.isFull()).isFalse();
        assertThat(offer(queue, turn("c"))).isEqualTo(3);
        assertThat(queue.reserve()).isEqualTo(TurnQueue.FULL);
    }

    @Test
    void closingFreezesTheCountAndRefusesEveryLaterReservation() {
        TurnQueue queue = new TurnQueue(10);
        offer(queue, turn("a"));
        offer(queue, turn("b"));

        assertThat(queue.close()).isEqualTo(2);
        assertThat(queue.reserve()).isEqualTo(TurnQueue.REJECTED);
        assertThat(queue.close()).as("closing twice returns the same count").isEqualTo(2);
        assertThat(queue.reserved()).isEqualTo(2);
        assertThat(takeAll(queue)).hasSize(2);
    }

    @Test
    void aTakenTurnDropsItsLinkOnceTheNextIsTakenSoAKeptTurnKeepsNothingQueuedAlive() {
        TurnQueue queue = new TurnQueue(10);
        QueuedTurn a = turn("a");
        QueuedTurn b = turn("b");
        offer(queue, a);
        offer(queue, b);

        assertThat(queue.poll()).isSameAs(a);
        assertThat(a.next).as("a is the head; its link leads to the next queued write").isSameAs(b);
        assertThat(queue.poll()).isSameAs(b);
        assertThat(a.next).isNull();
    }

    @Test
    void onlyTheFirstAppendAfterTheTakerAnnouncedItWouldParkIsToldToWakeIt() {
        TurnQueue queue = new TurnQueue(10);
        assertThat(queue.append(reserved(queue))).as("no taker yet: the first caller starts it").isTrue();
        assertThat(queue.append(reserved(queue))).isFalse();
        takeAll(queue);

        assertThat(queue.announcePark()).as("nothing linked: the taker may park").isTrue();
        assertThat(queue.append(reserved(queue))).isTrue();
        assertThat(queue.append(reserved(queue))).isFalse();
        assertThat(queue.announcePark()).as("writes are linked: the taker must not park").isFalse();
    }

    private static QueuedTurn reserved(TurnQueue queue) {
        QueuedTurn t = turn("x");
        t.assignSeq(queue.reserve());
        return t;
    }

    @Test
    void concurrentCallersNeverLoseDuplicateOrReorderTheirOwnWritesAndNeverExceedTheCapacity() throws Exception {
        int callers = 4;
        int perCaller = 50_000;
        int capacity = 64;
        TurnQueue queue = new TurnQueue(capacity);
        CyclicBarrier start = new CyclicBarrier(callers + 1);
        CountDownLatch done = new CountDownLatch(callers);
        AtomicLong overfull = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < callers; c++) {
            String caller = "c" + c;
            Thread t = new Thread(() -> {
                try {
                    start.await();
                    for (int i = 0; i < perCaller; i++) {
                        QueuedTurn turn = new QueuedTurn("q", caller, "u", Integer.toString(i), List.of(), null);
                        long seq;
                        while ((seq = queue.reserve()) == TurnQueue.FULL) {
                            Thread.onSpinWait();
                        }
                        if (seq - queue.taken() > capacity) {
                            overfull.incrementAndGet();
                        }
                        turn.assignSeq(seq);
                        queue.append(turn);
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                } finally {
                    done.countDown();
                }
            });
            t.start();
            threads.add(t);
        }
        start.await();

        int[] nextExpected = new int[callers];
        Set<Long> seqs = new HashSet<>();
        long total = (long) callers * perCaller;
        for (long got = 0; got < total; ) {
            Turn t = queue.poll();
            if (t == null) {
                queue.endTake();
                Thread.onSpinWait();
                continue;
            }
            got++;
            int caller = Integer.parseInt(t.sessionId().substring(1));
            assertThat(Integer.parseInt(t.assistantContent())).isEqualTo(nextExpected[caller]++);
            assertThat(seqs.add(Long.parseLong(t.writeId().substring(2)))).isTrue();
        }
        queue.endTake();
        done.await();

        assertThat(queue.poll()).isNull();
        assertThat(queue.reserved()).isEqualTo(total);
        assertThat(seqs).hasSize((int) total);
        assertThat(overfull.get()).isZero();
        for (Thread t : threads) {
            t.join();
        }
    }
}
