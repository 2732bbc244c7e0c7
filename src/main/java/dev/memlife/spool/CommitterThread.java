package dev.memlife.spool;

import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The spool's committer thread, started on demand: it commits whenever there is work, parks until
 * work that waits is due (the page the appends fill, once they pause), parks when there is none,
 * and exits after {@link #KEEP_ALIVE_NANOS} without work, so an idle spool holds no thread; the
 * next {@link #wake} starts another.
 */
final class CommitterThread {

    private static final Logger LOG = LoggerFactory.getLogger(Spool.class);

    /** How long an idle committer thread waits for work before it exits. */
    static final long KEEP_ALIVE_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** What the committer thread asks of its spool, and does to it. */
    interface Work {

        /**
         * When a commit is due: 0 now, {@code Long.MAX_VALUE} never (nothing waits), or the
         * nanoseconds until work that waits becomes due; read without a lock.
         */
        long nanosUntilWork();

        /** One commit. */
        void commitOnce();

        /** Whether the spool is closed: the thread exits. */
        boolean closed();
    }

    private final Path dir;
    private final Work work;
    /** Makes the thread: the manager's thread factory, given at attach. */
    private volatile ThreadFactory threads;
    /** The thread; null while none runs. */
    private volatile Thread thread;
    /** Guards starting and retiring the thread. */
    private final Object start = new Object();

    /**
     * @param dir the spool's directory, for the log
     * @param work the spool's side of the work
     */
    CommitterThread(Path dir, Work work) {
        this.dir = dir;
        this.work = work;
    }

    /** Makes later threads with {@code factory}. */
    void use(ThreadFactory factory) {
        this.threads = factory;
    }

    /** {@return the thread now running; null if none} */
    Thread current() {
        return thread;
    }

    /**
     * Wakes the thread, or starts one if none runs. Called after the work it is woken for is
     * published, so a thread that is retiring sees it: it forgets itself first and then looks for
     * work, while this reads the thread after publishing the work; one of the two sees the other.
     */
    void wake() {
        VarHandle.fullFence(); // work may be published with a release store: order it before the read
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t);
            return;
        }
        synchronized (start) {
            if (thread != null || work.closed()) {
                LockSupport.unpark(thread);
                return;
            }
            ThreadFactory factory = threads;
            if (factory == null) {
                return; // not attached yet: nothing to commit
            }
            try {
                Thread started = factory.newThread(this::run);
                thread = started;
                started.start();
            } catch (RuntimeException | Error e) {
                thread = null;
                LOG.warn("spool {}: could not start its committer thread ({}); writes become durable when a caller "
                        + "waits for them, or at close", dir, e.toString());
            }
        }
    }

    private void run() {
        long idleSince = System.nanoTime();
        while (!work.closed()) {
            long due = work.nanosUntilWork();
            if (due == 0) {
                work.commitOnce();
                idleSince = System.nanoTime();
                continue;
            }
            if (due != Long.MAX_VALUE) {
                LockSupport.parkNanos(this, due); // work that waits: no retiring before it is done
                idleSince = System.nanoTime();
                continue;
            }
            long left = KEEP_ALIVE_NANOS - (System.nanoTime() - idleSince);
            if (left <= 0 && retire()) {
                return;
            }
            LockSupport.parkNanos(this, Math.max(left, 0));
        }
    }

    /** Forgets this thread, then looks for work once more; true if it may exit. */
    private boolean retire() {
        Thread self = Thread.currentThread();
        synchronized (start) {
            thread = null;
        }
        VarHandle.fullFence(); // forgetting itself is ordered before looking for work (see wake)
        if (work.nanosUntilWork() == Long.MAX_VALUE) {
            return true;
        }
        synchronized (start) {
            if (thread == null) {
                thread = self; // nobody started another: this one goes on
                return false;
            }
        }
        return true; // a caller started another, which does the work
    }
}
