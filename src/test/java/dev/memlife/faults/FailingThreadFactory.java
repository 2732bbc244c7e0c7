package dev.memlife.faults;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A thread factory that fails the way {@link Fault}'s {@code FACTORY_*} rows say; otherwise (and
 * for {@link Fault#FACTORY_FAILS_ONCE} after its first call) it makes daemon threads.
 */
final class FailingThreadFactory implements ThreadFactory {

    private final Fault fault;
    private final String name;
    private final AtomicInteger calls = new AtomicInteger();
    private final AtomicInteger made = new AtomicInteger();

    FailingThreadFactory(Fault fault, String name) {
        this.name = name;
        if (!fault.factoryFault()) {
            throw new IllegalArgumentException(fault + " is not a thread factory fault");
        }
        this.fault = fault;
    }

    @Override
    public Thread newThread(Runnable r) {
        int call = calls.incrementAndGet();
        switch (fault) {
            case FACTORY_RETURNS_NULL:
                return null;
            case FACTORY_THROWS:
                throw new IllegalStateException("thread factory refuses on purpose");
            case FACTORY_OOM:
                throw new OutOfMemoryError("unable to create native thread: possibly out of memory or process/resource "
                        + "limits reached (thrown by the test's factory)");
            case FACTORY_FAILS_ONCE:
                if (call == 1) {
                    throw new OutOfMemoryError("unable to create native thread (thrown once by the test's factory)");
                }
                Thread t = new Thread(r, "faults-" + name + "-" + made.incrementAndGet());
                t.setDaemon(true);
                return t;
            default:
                throw new AssertionError(fault);
        }
    }

    /** How often the factory was asked for a thread. */
    int calls() {
        return calls.get();
    }
}
