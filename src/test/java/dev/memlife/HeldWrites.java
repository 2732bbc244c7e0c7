package dev.memlife;

import static org.assertj.core.api.Assertions.assertThat;

import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A recording provider that holds chosen writes (by assistant content) until the test releases
 * each one, so a test can keep several writes in chosen states at once; with the small helpers the
 * writer tests share (batching writes behind a held one, write ids, a bounded latch wait).
 */
final class HeldWrites extends RecordingProvider {

    private final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();
    private final Map<String, CountDownLatch> entered = new ConcurrentHashMap<>();

    HeldWrites(String name) {
        super(name);
    }

    /** Writes whose assistant content is {@code content} wait until {@link #release(String)}. */
    HeldWrites hold(String content) {
        gates.put(content, new CountDownLatch(1));
        entered.put(content, new CountDownLatch(1));
        return this;
    }

    void release(String content) {
        gates.get(content).countDown();
    }

    boolean awaitHeld(String content) throws InterruptedException {
        return entered.get(content).await(10, TimeUnit.SECONDS);
    }

    /**
     * Queues {@code first} on {@code manager} and waits until it is held here, then queues {@code
     * rest}, so that the writer takes the writes queued after it as one batch once {@code first} is
     * released. {@code first} must have been {@linkplain #hold(String) held}.
     */
    void queueBehindHeld(MemoryManager manager, String first, List<String> rest) throws InterruptedException {
        manager.syncAll("u", first, "s");
        assertThat(awaitHeld(first)).isTrue();
        for (String content : rest) {
            manager.syncAll("u", content, "s");
        }
    }

    /** The write ids of {@code turns}, in their order. */
    static List<String> writeIds(List<Turn> turns) {
        List<String> ids = new ArrayList<>();
        turns.forEach(t -> ids.add(t.writeId()));
        return ids;
    }

    /**
     * Waits up to ten seconds for {@code latch}, for code that cannot throw {@code
     * InterruptedException} (a provider's hook); an interrupt ends the wait and is restored.
     */
    static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void syncTurn(Turn turn) {
        CountDownLatch gate = gates.get(turn.assistantContent());
        if (gate != null) {
            entered.get(turn.assistantContent()).countDown();
            try {
                if (!gate.await(Duration.ofSeconds(30).toNanos(), TimeUnit.NANOSECONDS)) {
                    throw new IllegalStateException("held write was never released: " + turn);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        super.syncTurn(turn);
    }
}
