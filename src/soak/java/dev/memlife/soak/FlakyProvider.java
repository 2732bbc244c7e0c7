package dev.memlife.soak;

import dev.memlife.MemoryProvider;
import dev.memlife.Message;
import dev.memlife.Turn;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The soak's second provider, a remote memory service on a bad day: on a random few writes and
 * extractions it throws a {@link RuntimeException} or an {@link Error}, is slow, or hangs until the
 * soak {@link Hangs#releaseAll() releases} it (at most {@link Hangs#MAX_HANG}). It writes one turn
 * at a time (no {@code syncBatch}), so a write still running at a drain deadline is always a single
 * write, named in memlife's log.
 *
 * <p>It records the id of every write it is handed, before it decides to fail it, so the soak can
 * give {@link dev.memlife.faults.Accounting} what a provider saw; it counts any hook called after
 * its {@code shutdown()}, and lets the soak wait for that shutdown: memlife shuts a provider down
 * only after the writer's last write (a write still running at the deadline included) has left it.
 * Thread-safe.
 */
final class FlakyProvider implements MemoryProvider {

    private final Random random;
    private final Hangs hangs;
    /** The write-id prefix (all of one manager's ids share it) and the sequence numbers handed to this provider. */
    private String idPrefix;
    private long[] seqs = new long[8];
    private int size;
    private final CountDownLatch shutDown = new CountDownLatch(1);
    private final AtomicInteger shutdowns = new AtomicInteger();
    private final AtomicInteger hooksAfterShutdown = new AtomicInteger();

    FlakyProvider(long seed, Hangs hangs) {
        this.random = new Random(seed);
        this.hangs = hangs;
    }

    @Override
    public String name() {
        return "flaky";
    }

    @Override
    public void syncTurn(Turn turn) {
        checkNotShutDown();
        record(turn.writeId());
        misbehave(1_000, 10, 3, 20, 2);
    }

    @Override
    public void onSessionEnd(List<Message> messages) {
        checkNotShutDown();
        misbehave(100, 2, 1, 3, 1);
    }

    @Override
    public void shutdown() {
        shutdowns.incrementAndGet();
        shutDown.countDown();
    }

    /**
     * Out of every {@code outOf} calls, on average: {@code runtime} throw a RuntimeException,
     * {@code error} an Error, {@code slow} take 2 to {@code slow + 1} ms, and {@code hang} hang until released.
     */
    private void misbehave(int outOf, int runtime, int error, int slow, int hang) {
        int dice;
        synchronized (random) {
            dice = random.nextInt(outOf);
        }
        if (dice < runtime) {
            throw new IllegalStateException("flaky provider: injected failure");
        }
        dice -= runtime;
        if (dice < error) {
            throw new InjectedError();
        }
        dice -= error;
        if (dice < slow) {
            pause(2 + dice % 29);
            return;
        }
        dice -= slow;
        if (dice < hang) {
            hangs.hang();
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis); // sleep-ok: the slow call this provider simulates
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private synchronized void record(String writeId) {
        int colon = writeId.lastIndexOf(':');
        if (idPrefix == null) {
            idPrefix = writeId.substring(0, colon);
        }
        if (size == seqs.length) {
            seqs = Arrays.copyOf(seqs, size * 2);
        }
        seqs[size++] = Long.parseLong(writeId.substring(colon + 1));
    }

    private void checkNotShutDown() {
        if (shutDown.getCount() == 0) {
            hooksAfterShutdown.incrementAndGet();
        }
    }

    /** The ids of every write handed to this provider, in delivery order. */
    synchronized List<String> receivedIds() {
        List<String> ids = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            ids.add(idPrefix + ':' + seqs[i]);
        }
        return ids;
    }

    /** Waits until memlife has called {@code shutdown()}; false on timeout. */
    boolean awaitShutdown(Duration timeout) throws InterruptedException {
        return shutDown.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    int shutdowns() {
        return shutdowns.get();
    }

    int hooksAfterShutdown() {
        return hooksAfterShutdown.get();
    }

    /** The Error this provider throws now and then; memlife must isolate it like any exception. */
    static final class InjectedError extends Error {
        private static final long serialVersionUID = 1L;

        InjectedError() {
            super("flaky provider: injected Error");
        }
    }

    /**
     * The soak's hung calls: a call {@link #hang()}s until the soak {@link #releaseAll()}s every call
     * hung so far, or at most {@link #MAX_HANG}; like a wedged remote call it ignores interrupts
     * meanwhile (and restores the flag). While disabled, nothing hangs. Thread-safe.
     */
    static final class Hangs {

        static final Duration MAX_HANG = Duration.ofSeconds(3);

        private volatile CountDownLatch gate = new CountDownLatch(1);
        private volatile boolean enabled = true;
        final AtomicLong hung = new AtomicLong();
        final AtomicLong releasedBySoak = new AtomicLong();

        void hang() {
            if (!enabled) {
                return;
            }
            CountDownLatch mine = gate;
            hung.incrementAndGet();
            long deadline = System.nanoTime() + MAX_HANG.toNanos();
            boolean interrupted = false;
            try {
                while (true) {
                    try {
                        if (mine.await(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                            releasedBySoak.incrementAndGet();
                        }
                        return;
                    } catch (InterruptedException e) {
                        interrupted = true; // a wedged call does not notice
                    }
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /** Lets every call hung so far return. */
        void releaseAll() {
            CountDownLatch old = gate;
            gate = new CountDownLatch(1);
            old.countDown();
        }

        void enable() {
            enabled = true;
        }

        /** No call hangs from now on, and every hung call returns. */
        void disable() {
            enabled = false;
            releaseAll();
        }
    }
}
