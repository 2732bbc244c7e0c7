package dev.memlife.session;

import dev.memlife.agent.SessionCommitter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A session owner whose commits the test controls: by default every commit blocks until {@link
 * #release()} (like the seed's {@code RecordingAgent}), records that it was entered, and can be
 * told to throw. A blocked commit gives up after {@link #MAX_HOLD} so a forgotten release fails the
 * test instead of hanging it. Thread-safe.
 */
class BlockingOwner implements SessionCommitter {

    static final Duration MAX_HOLD = Duration.ofSeconds(60);

    private final String name;
    private final CountDownLatch entered = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);
    private final AtomicInteger calls = new AtomicInteger();
    private final AtomicInteger running = new AtomicInteger();
    private final AtomicInteger maxRunning = new AtomicInteger();
    private final List<Throwable> failures = new ArrayList<>();
    private final List<String> log;

    /** An owner that blocks in every commit until released. */
    BlockingOwner(String name) {
        this(name, new ArrayList<>());
    }

    /** An owner that appends {@code "commit:<name>"} to a shared log on every commit. */
    BlockingOwner(String name, List<String> sharedLog) {
        this.name = name;
        this.log = sharedLog;
    }

    /** An owner whose commits return at once. */
    static BlockingOwner released(String name) {
        BlockingOwner o = new BlockingOwner(name);
        o.release();
        return o;
    }

    /** The next commits throw these, one per call, before blocking. */
    BlockingOwner failNextWith(Throwable... next) {
        synchronized (failures) {
            failures.addAll(List.of(next));
        }
        return this;
    }

    @Override
    public void commitSession() throws Exception {
        calls.incrementAndGet();
        int now = running.incrementAndGet();
        maxRunning.accumulateAndGet(now, Math::max);
        try {
            synchronized (log) {
                log.add("commit:" + name);
            }
            entered.countDown();
            Throwable failure;
            synchronized (failures) {
                failure = failures.isEmpty() ? null : failures.remove(0);
            }
            if (failure instanceof Exception) {
                throw (Exception) failure;
            }
            if (failure instanceof Error) {
                throw (Error) failure;
            }
            if (!released.await(MAX_HOLD.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new IllegalStateException(name + " was never released");
            }
        } finally {
            running.decrementAndGet();
        }
    }

    void release() {
        released.countDown();
    }

    boolean awaitEntered(Duration timeout) throws InterruptedException {
        return entered.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    int calls() {
        return calls.get();
    }

    int running() {
        return running.get();
    }

    int maxRunning() {
        return maxRunning.get();
    }

    @Override
    public String toString() {
        return "BlockingOwner[" + name + "]";
    }
}
