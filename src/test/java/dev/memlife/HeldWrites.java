package dev.memlife;

import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A recording provider that holds chosen writes (by assistant content) until the test releases
 * each one, so a test can keep several writes in chosen states at once.
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
