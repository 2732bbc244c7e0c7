package dev.memlife;

import dev.memlife.internal.Threads;
import java.util.concurrent.locks.LockSupport;

/**
 * Which thread is a writer's, if any, and starting, waking and forgetting it. The first caller
 * starts it; it is forgotten when it dies of an error of memlife's own, or when it retires after
 * its keep-alive ({@link WriteLoop}), and the next caller starts another.
 *
 * <p>The <em>start lock</em> ({@link #startLock}) guards starting the thread and forgetting it.
 * The user's thread factory runs under it; no other lock is ever held with it.
 */
final class WriterThread {

    /**
     * The threads of a writer for concurrency checkers: a writer built with them never starts a
     * thread; the checker drives it with {@link Writer#stepByHand()}.
     */
    static final Threads BY_HAND = Threads.named("memlife-writer-by-hand");

    private final String managerName;
    private final Threads threads;
    /** Guards starting (and forgetting) {@link #worker}; nothing else is taken under it. */
    private final Object startLock = new Object();
    /** The writer thread once started; null again if it died of an Error or retired. */
    private volatile Thread worker;

    WriterThread(String managerName, Threads threads) {
        this.managerName = managerName;
        this.threads = threads;
    }

    /** The writer thread, if one was started (and has not died or retired). */
    Thread current() {
        return worker;
    }

    /** {@return whether the calling thread is the writer's} */
    boolean isCurrent() {
        return Thread.currentThread() == worker;
    }

    /**
     * Starts a thread running {@code body} as the writer, unless one runs.
     *
     * @throws RuntimeException or {@link Error} (an {@link OutOfMemoryError} "unable to create
     *     native thread" included) if no thread could be made or started
     */
    void start(Runnable body) {
        synchronized (startLock) {
            if (worker != null) {
                return;
            }
            if (threads == BY_HAND) {
                worker = new Thread(() -> { }, "memlife-writer-by-hand-" + managerName); // never started
                return;
            }
            Thread t = threads.newThread(body); // never null: a refusing factory throws
            worker = t; // before start: a provider calling back from the writer must see itself as the writer
            try {
                t.start();
            } catch (Throwable e) {
                worker = null;
                throw e;
            }
        }
    }

    /**
     * Unparks the writer thread, if there is one; harmless if it is not parked (a park that
     * returns at once looks again).
     *
     * @return false if there is no writer thread
     */
    boolean unpark() {
        Thread w = worker;
        if (w == null) {
            return false;
        }
        LockSupport.unpark(w);
        return true;
    }

    /** The writer thread is going down or retiring: forgets it, so the next caller starts another. */
    void forget() {
        synchronized (startLock) {
            worker = null;
        }
    }

    /**
     * After {@link #forget()}, makes {@code self} the writer again, unless a caller started
     * another meanwhile.
     *
     * @return true if {@code self} is the writer again
     */
    boolean reclaim(Thread self) {
        synchronized (startLock) {
            if (worker == null) {
                worker = self;
                return true;
            }
            return false;
        }
    }
}
