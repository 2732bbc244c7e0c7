package dev.memlife.bench;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A thread factory whose threads start their work only once the gate opens: writers made by it
 * hold every write in the queue until the race begins, as {@link ShutdownRace}'s do. Daemon
 * threads, named {@code <prefix>-<n>}.
 */
final class Gate implements ThreadFactory {

    private final CountDownLatch open = new CountDownLatch(1);
    private final String prefix;
    private final AtomicInteger count = new AtomicInteger();

    Gate(String prefix) {
        this.prefix = prefix;
    }

    void open() {
        open.countDown();
    }

    @Override
    public Thread newThread(Runnable work) {
        Thread t = new Thread(() -> {
            try {
                open.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            work.run();
        }, prefix + "-" + count.incrementAndGet());
        t.setDaemon(true);
        return t;
    }
}
