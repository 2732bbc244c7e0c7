package dev.memlife.internal;

/**
 * What memlife does with a {@link Throwable} it catches. Not part of the API: the package is not
 * exported.
 *
 * <p>There are two rules, and this is where both are written down:
 * <ol>
 *   <li><b>What a memory provider throws is that provider's failure of that call</b>, whatever it
 *       is: an {@link Error} included, even a {@link StackOverflowError} or a thrown {@link
 *       OutOfMemoryError}. It is logged (throttled) and counted for the provider, and never passed
 *       to the next provider, the writer thread or the caller. By the time memlife catches it the
 *       provider's frames are gone, so the stack is usable again and what the provider allocated
 *       is garbage; if the heap is really exhausted, the next provider fails the same way and is
 *       counted the same way. The core's {@code ProviderCalls} is the one place that applies it.
 *   <li><b>From any other code memlife calls, a {@link VirtualMachineError} is fatal</b> and goes
 *       on up ({@link #rethrowIfFatal}): a teardown listener, a session owner's commit. Whatever
 *       else they throw is logged or reported, and the work goes on.
 * </ol>
 * A throwable that memlife only hands on to whoever waits for the work (a future, a failed
 * component of a shutdown report) is handed on as it is, fatal or not. The JVM shutdown hook
 * swallows everything: by then there is no one left to tell.
 */
public final class Failures {

    private Failures() {}

    /** Whether {@code t} is fatal to the JVM and must not be swallowed outside a provider call. */
    public static boolean isFatal(Throwable t) {
        return t instanceof VirtualMachineError;
    }

    /**
     * Rethrows {@code t} if it is {@link #isFatal fatal}; otherwise returns, and the caller logs or
     * reports it. A null {@code t} is not fatal.
     */
    public static void rethrowIfFatal(Throwable t) {
        if (isFatal(t)) {
            throw (VirtualMachineError) t;
        }
    }
}
