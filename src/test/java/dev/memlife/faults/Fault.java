package dev.memlife.faults;

/**
 * The faults of the matrix: what the faulty provider (registered between two healthy recorders)
 * does, or, for the {@code FACTORY_*} rows, how the thread factory given to the manager, the agent
 * (extraction) and the gateway (housekeeping) fails.
 *
 * <p>A provider fault fires in every hook the path reaches: on each <em>trigger</em> write (user
 * content starting with {@code "T"}; the other writes pass), in {@code onSessionEnd}, and in
 * {@code shutdown()} — except where a row says otherwise. {@link #SLOW} slows every call.
 */
enum Fault {
    RUNTIME_EXCEPTION,
    ERROR,
    /** A real one: the provider recurses until the stack is exhausted. */
    STACK_OVERFLOW,
    /** Thrown by the provider (the heap is not really exhausted; that would hurt the shared JVM). */
    OUT_OF_MEMORY,
    ASSERTION_ERROR,
    /** Hangs, ignoring interrupts, until the test releases it (in {@code finally}). */
    HANG_FOREVER,
    /** Hangs {@link FaultBehaviour#BOUNDED_HANG} (past every flush, extraction and drain budget), then returns by itself. */
    HANG_THEN_RETURN,
    /** Hangs only in {@code shutdown()}, until released: writes and extraction are healthy. */
    HANG_IN_SHUTDOWN,
    /** A few milliseconds in every call, every write included. */
    SLOW,
    /** Sets its own thread's interrupt flag and returns normally. */
    SELF_INTERRUPT,
    /**
     * Takes writes as batches ({@code syncBatch}, as do the recorders then) and keeps every list it
     * is handed; the test reads the kept lists again after later writes and after the teardown.
     */
    KEEPS_BATCH,
    /** Calls {@code syncAll} and {@code flushPending} on its manager from inside each hook. */
    CALLBACK_WRITE_AND_FLUSH,
    /** Calls {@code stop} on its manager from inside the first trigger write (on the writer thread). */
    SHUTDOWN_FROM_WRITE,
    /** Calls {@code stop} on its manager from inside {@code onSessionEnd} (extraction). */
    SHUTDOWN_FROM_EXTRACTION,
    /** Calls {@code stop} on its manager from inside its own {@code shutdown()}. */
    SHUTDOWN_FROM_SHUTDOWN,
    /** The thread factory returns null. */
    FACTORY_RETURNS_NULL,
    /** The thread factory throws a RuntimeException. */
    FACTORY_THROWS,
    /** The thread factory throws {@code OutOfMemoryError("unable to create native thread")}. */
    FACTORY_OOM,
    /** The thread factory throws that OutOfMemoryError on its first call only, then works. */
    FACTORY_FAILS_ONCE;

    /** The provider throws from the hook. */
    boolean throwsFromHooks() {
        switch (this) {
            case RUNTIME_EXCEPTION:
            case ERROR:
            case STACK_OVERFLOW:
            case OUT_OF_MEMORY:
            case ASSERTION_ERROR:
                return true;
            default:
                return false;
        }
    }

    /** The writer is still inside the trigger write when the path starts. */
    boolean holdsWriter() {
        return this == HANG_FOREVER || this == HANG_THEN_RETURN;
    }

    /** No writer thread can ever be made: every write is rejected with RejectedExecutionException. */
    boolean noThreads() {
        return this == FACTORY_RETURNS_NULL || this == FACTORY_THROWS || this == FACTORY_OOM;
    }

    boolean factoryFault() {
        return noThreads() || this == FACTORY_FAILS_ONCE;
    }

    /** Something must be released by the test for the run to end. */
    boolean needsRelease() {
        return this == HANG_FOREVER || this == HANG_IN_SHUTDOWN;
    }

    /** The provider itself shuts its manager down before the path does. */
    boolean managerShutByProviderWrite() {
        return this == SHUTDOWN_FROM_WRITE;
    }
}
