package dev.memlife;

import dev.memlife.internal.Failures;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Every call a manager makes into its providers, isolated: the one place that applies the first
 * rule of {@link Failures}. Whatever a provider throws, an {@link Error} included, is that
 * provider's failure of that call: it is counted where the report counts it (failed writes, by
 * provider), logged (WARN, throttled per manager, provider and hook), and turned into the caller's
 * fallback; it never reaches the next provider, the writer or the caller.
 *
 * <p><b>Interrupts.</b> A provider that leaves its thread's interrupt flag set would cut the next
 * provider's I/O short, or hand the caller an interrupt that is not its own. On the threads memlife
 * lends a provider (the writer, a caller's thread) such a flag is cleared and counted by provider;
 * a caller's own interrupt, set before the call, is left alone. See {@link Interrupts} for the
 * calls where the flag is left as it is.
 *
 * <p><b>Leases.</b> A hook on the caller's thread runs under a lease on the provider's {@link
 * ProviderGate}, so it never runs after (nor during) the provider's {@code shutdown()}: {@link
 * #leased} for one provider, {@link #forEach} for a pass over all of them. The writer holds a
 * standing lease of its own (see {@link Writer}).
 *
 * <p>Thread-safe; one per manager.
 */
final class ProviderCalls {

    /** What becomes of an interrupt flag that a provider leaves set. */
    enum Interrupts {
        /** Cleared and counted, unless the thread was interrupted before the call: the thread goes on to other work. */
        CLEAR,
        /**
         * Left as it is: a provider's own thread that ends with the call (its {@code shutdown()}), or
         * one memlife interrupts itself (a prefetch past its timeout; its pool clears the flag).
         */
        LEAVE
    }

    /** Said after a failure on a pass over the providers. */
    private static final String NEXT_IS_CALLED = "; the next provider is still called";

    private final String managerName;

    ProviderCalls(String managerName) {
        this.managerName = managerName;
    }

    // ---- the writer --------------------------------------------------------------------------

    /**
     * Hands {@code batch[from, to)} to every provider of the route, on the writer thread: one write
     * as {@code syncTurn} (no list is made for it), several as one {@code syncBatch} over a list of
     * their own. A provider that throws has failed these writes: they are counted for it and
     * logged, and the next provider still gets them. An interrupt a provider leaves set is always
     * cleared and counted: the writer has no caller whose interrupt it could be. No lease: the
     * writer holds a standing one. Allocates nothing for a single write.
     *
     * @return true if every provider took them
     */
    boolean write(List<Turn> batch, int from, int to, RegisteredProvider[] route) {
        List<Turn> writes = null;
        boolean ok = true;
        for (RegisteredProvider p : route) {
            try {
                if (to - from == 1 && !p.writesBatches) {
                    p.provider.syncTurn(batch.get(from));
                } else {
                    if (writes == null) {
                        writes = List.copyOf(batch.subList(from, to)); // the provider may keep it
                    }
                    p.provider.syncBatch(writes);
                }
            } catch (Throwable t) {
                ok = false;
                p.failedWrites.addAndGet(to - from);
                failed(p, "write", "on " + describe(batch, from, to) + "; the next provider still gets it", t);
            }
            if (Thread.interrupted()) {
                interruptCleared(p, "the writer thread's interrupt flag set");
            }
        }
        return ok;
    }

    /** "write w-1:7", or "a batch of 12 writes", for logs. */
    static String describe(List<Turn> batch, int from, int to) {
        return to - from == 1 ? "write " + batch.get(from).writeId() : "a batch of " + (to - from) + " writes";
    }

    // ---- hooks -------------------------------------------------------------------------------

    /**
     * Calls {@code action} on every provider of {@code all}, in order, each call isolated, on this
     * thread. The pass leases every provider before it calls the first, so a shutdown that starts
     * meanwhile waits for each provider until the pass is done with it, and providers it already
     * shut down are skipped.
     */
    void forEach(RegisteredProvider[] all, String hook, Consumer<MemoryProvider> action) {
        boolean[] leased = new boolean[all.length];
        for (int i = 0; i < all.length; i++) {
            leased[i] = all[i].gate.enter();
        }
        int i = 0;
        try {
            for (; i < all.length; i++) {
                if (leased[i]) {
                    leased[i] = false;
                    RegisteredProvider p = all[i];
                    try {
                        isolated(p, hook, NEXT_IS_CALLED, Interrupts.CLEAR, () -> {
                            action.accept(p.provider);
                            return null;
                        }, t -> null);
                    } finally {
                        p.gate.exit();
                    }
                }
            }
        } finally {
            for (; i < all.length; i++) { // only if something above threw past its catch
                if (leased[i]) {
                    all[i].gate.exit();
                }
            }
        }
    }

    /** {@code leased} as below, clearing interrupts, with {@code fallback} for a failure or a shut-down provider. */
    <T> T leased(RegisteredProvider p, String hook, Supplier<T> body, T fallback) {
        return leased(p, hook, Interrupts.CLEAR, body, t -> fallback, () -> fallback);
    }

    /**
     * One isolated call of {@code p}'s hook, under a lease on its gate, on this thread.
     *
     * @return {@code body}'s value; {@code onFailure}'s for whatever it throws; {@code ifShutDown}'s
     *     if the provider is shut down (or about to be), without calling it
     */
    <T> T leased(RegisteredProvider p, String hook, Interrupts interrupts, Supplier<T> body,
            Function<Throwable, T> onFailure, Supplier<T> ifShutDown) {
        if (!p.gate.enter()) {
            return ifShutDown.get();
        }
        try {
            return isolated(p, hook, NEXT_IS_CALLED, interrupts, body, onFailure);
        } finally {
            p.gate.exit();
        }
    }

    /**
     * One isolated call of a provider that is not registered yet ({@code isAvailable}, its tools),
     * so has no gate to lease and no report to count in.
     */
    <T> T unregistered(RegisteredProvider p, String hook, Supplier<T> body, T fallback) {
        return isolated(p, hook, "", Interrupts.LEAVE, body, t -> fallback);
    }

    /**
     * The provider's {@code shutdown()}, isolated. No lease: its gate is closed and idle, and this
     * is the one call that runs then. {@code late} if it runs on a hook's thread after that hook.
     */
    void shutdown(RegisteredProvider p, boolean late) {
        isolated(p, "shutdown()", late ? " (run after its last hook returned)" : "", Interrupts.LEAVE, () -> {
            p.provider.shutdown();
            return null;
        }, t -> null);
    }

    /**
     * The isolation itself: {@code body}'s value, or {@code onFailure}'s for whatever it throws,
     * which is logged as {@code p}'s failure in {@code hook}, followed by {@code note}.
     */
    private <T> T isolated(RegisteredProvider p, String hook, String note, Interrupts interrupts, Supplier<T> body,
            Function<Throwable, T> onFailure) {
        // A flag set before the call is the caller's own: it stays.
        boolean clear = interrupts == Interrupts.CLEAR && !Thread.currentThread().isInterrupted();
        try {
            return body.get();
        } catch (Throwable t) { // the provider's failure, whatever it is: see Failures
            failed(p, hook, "in " + hook + note, t);
            return onFailure.apply(t);
        } finally {
            if (clear && Thread.interrupted()) {
                interruptCleared(p, "the calling thread's interrupt flag set in " + hook);
            }
        }
    }

    // ---- reporting -----------------------------------------------------------------------------

    /**
     * Logged through the provider instance's own throttle, which every manager that registers it
     * shares, so a failure burst of a shared store is one line, not one per manager.
     */
    private void failed(RegisteredProvider p, String hook, String how, Throwable t) {
        p.warnings.warn(p.name + "/" + hook, "memory provider '" + p.name + "' of manager '" + managerName
                + "' failed " + how, t);
    }

    private void interruptCleared(RegisteredProvider p, String what) {
        p.interruptsCleared.incrementAndGet();
        p.warnings.warn(p.name + "/interrupt", "memory provider '" + p.name + "' of manager '"
                + managerName + "' left " + what + "; cleared", null);
    }
}
