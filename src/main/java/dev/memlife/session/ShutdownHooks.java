package dev.memlife.session;

import static java.util.Objects.requireNonNull;

import dev.memlife.MemoryManager;
import dev.memlife.Stoppable;
import dev.memlife.Ticker;
import dev.memlife.internal.Checks;
import dev.memlife.internal.Deadline;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * The one opt-in, process-wide JVM shutdown hook of memlife: on SIGTERM (or {@code System.exit})
 * it stops every registered {@link SessionCommitTracker}, {@link Stoppable} component and {@link
 * MemoryManager} under one shared budget, and prints a summary to {@code System.err}.
 *
 * <pre>{@code
 * ShutdownHooks hooks = ShutdownHooks.install(Duration.ofSeconds(20)); // idempotent
 * hooks.register(tracker);                        // session commits first
 * hooks.register("gateway", gateway);             // then any Stoppable component
 * ShutdownHooks.Registration r = hooks.register(manager); // managers last
 * r.close();                                      // e.g. when that manager's agent is closed
 * }</pre>
 *
 * <p>Order, because a commit needs a live manager: trackers first, then the other components,
 * then the managers' {@code stop}. Within each group every component runs at once on a
 * daemon thread of its own, handed what is left of the deadline less a slack (a tenth of it, at
 * most 200 ms), so a component that keeps its budget is reported with its own
 * report; the hook stops waiting at the deadline, so a hung component cannot hold the JVM. The trackers and
 * components stop 10 % of the deadline early, keeping that share for
 * the managers, so a hung commit cannot starve the managers' queued writes. The hook writes its
 * summary straight to {@code System.err} (guarded), because the logging backend may already be
 * stopped by its own shutdown hook.
 *
 * <p>This class is thread-safe: registrations are copy-on-write, and the lifecycle moves by CAS.
 */
public final class ShutdownHooks implements Stoppable<ShutdownReport>, AutoCloseable {

    /** Default shared budget of the shutdown drain. */
    public static final Duration DEFAULT_BUDGET = Duration.ofSeconds(20);
    /** Share of the deadline kept for the managers after the trackers and components, in percent. */
    private static final int MANAGER_RESERVE_PERCENT = 10;
    /** Most a component's budget is cut below the time the hook waits for it. */
    private static final Duration SLACK = Duration.ofMillis(200);

    /** The lifecycle of one installed hook. */
    public enum State {
        /** Registered with the runtime; it drains when the JVM shuts down. */
        INSTALLED,
        /** The JVM is shutting down and the hook is draining (or has drained). */
        RUNNING,
        /** Removed by {@link #uninstall()} or {@link #close()}; the JVM will not run it. */
        CLOSED
    }

    /** A registration; {@link #close()} removes the component from the hook. */
    @FunctionalInterface
    public interface Registration extends AutoCloseable {
        /** Removes the component; idempotent. */
        @Override
        void close();
    }

    /** Where hooks are added and removed; the JVM's {@link Runtime} outside tests. */
    interface HookRegistry {
        void add(Thread hook);

        /** @throws IllegalStateException if the JVM is already shutting down */
        boolean remove(Thread hook);
    }

    private static final HookRegistry JVM = new HookRegistry() {
        @Override
        public void add(Thread hook) {
            Runtime.getRuntime().addShutdownHook(hook);
        }

        @Override
        public boolean remove(Thread hook) {
            return Runtime.getRuntime().removeShutdownHook(hook);
        }
    };

    private static final Object GLOBAL = new Object();
    /** The installed process-wide instance; guarded by {@link #GLOBAL}. */
    private static ShutdownHooks installed;

    private final Duration budget;
    private final HookRegistry registry;
    private final Supplier<PrintStream> err;
    private final Ticker ticker;
    private final Thread hook;
    private final AtomicReference<State> state = new AtomicReference<>(State.INSTALLED);
    private final List<ShutdownPhases.Entry> entries = new CopyOnWriteArrayList<>();

    ShutdownHooks(Duration budget, Ticker ticker, HookRegistry registry, Supplier<PrintStream> err) {
        this.budget = budget;
        this.ticker = ticker;
        this.registry = registry;
        this.err = err;
        this.hook = new Thread(this::runAsHook, "memlife-shutdown-hook");
    }

    /**
     * {@link #install(Duration)} with the default budget of 20 s.
     *
     * @return the installed hook (an earlier installation, unchanged, if there is one)
     * @throws IllegalStateException if the JVM is already shutting down
     */
    public static ShutdownHooks install() {
        return install(DEFAULT_BUDGET);
    }

    /**
     * Installs the process-wide hook, once: a later call returns the installed instance unchanged
     * (its budget stays the first one given). After {@link #uninstall()} or {@link #close()}, a
     * call installs a new one.
     *
     * @param budget the shared budget of the whole shutdown drain
     * @return the installed hook: this call's, or the earlier installation, unchanged
     * @throws IllegalArgumentException if {@code budget} is negative
     * @throws IllegalStateException if the JVM is already shutting down
     */
    public static ShutdownHooks install(Duration budget) {
        Checks.nonNegative(budget, "budget");
        synchronized (GLOBAL) {
            if (installed == null) {
                ShutdownHooks hooks = new ShutdownHooks(budget, Ticker.system(), JVM, () -> System.err);
                warmUp();
                JVM.add(hooks.hook);
                installed = hooks;
            }
            return installed;
        }
    }

    /**
     * Runs the hook's own code path once with a no-op component, so that SIGTERM does not pay for
     * loading and linking it (hundreds of milliseconds on a loaded machine, outside any deadline).
     */
    private static void warmUp() {
        ShutdownPhases.run(List.of(new ShutdownPhases.Entry(ShutdownPhases.Group.COMPONENTS, "warm-up", b -> null)),
                Deadline.after(Ticker.system(), Duration.ofSeconds(1)), MANAGER_RESERVE_PERCENT, SLACK)
                .toString();
    }

    /** {@return the installed process-wide hook, or empty if none is installed (or it was closed)} */
    public static Optional<ShutdownHooks> installed() {
        synchronized (GLOBAL) {
            return Optional.ofNullable(installed);
        }
    }

    /**
     * Drains the tracker ({@link SessionCommitTracker#stop}) first, before any manager.
     *
     * @param tracker the tracker; listed as {@code "tracker <name>"}
     * @return the registration, to remove the tracker again
     */
    public Registration register(SessionCommitTracker tracker) {
        requireNonNull(tracker, "tracker");
        return add(ShutdownPhases.Group.TRACKERS, "tracker " + tracker.name(), tracker::stop);
    }

    /**
     * Stops the component after the trackers and before the managers.
     *
     * @param name the component's name in the summary
     * @param component what to stop, such as an {@code AgentGateway} or a write-behind store
     * @return the registration, to remove the component again
     */
    public Registration register(String name, Stoppable<?> component) {
        requireNonNull(name, "name");
        requireNonNull(component, "component");
        return add(ShutdownPhases.Group.COMPONENTS, name, component::stop);
    }

    /**
     * Shuts the manager down ({@link MemoryManager#stop(Duration)}) last, with what is left.
     *
     * @param manager the manager; listed as {@code "manager <name>"}
     * @return the registration, to remove the manager again (when its agent is closed by other means)
     */
    public Registration register(MemoryManager manager) {
        requireNonNull(manager, "manager");
        return add(ShutdownPhases.Group.MANAGERS, "manager " + manager.name(), manager::stop);
    }

    /**
     * Closes the resource last, after every tracker, component and manager has drained: a store
     * the agents share, a connection pool. The groups before it run at once within a group, so a
     * store registered as a component could close under a gateway still flushing into it; here it
     * cannot. Resources close one at a time, the last registered first (register a pool before the
     * store that uses it), within what is left of the deadline.
     *
     * @param name the resource's name in the summary
     * @param resource what to close, such as the application's {@code JdbcMemoryProvider}
     * @return the registration, to remove the resource again
     */
    public Registration closeLast(String name, AutoCloseable resource) {
        requireNonNull(name, "name");
        requireNonNull(resource, "resource");
        return add(ShutdownPhases.Group.RESOURCES, name, budget -> {
            resource.close();
            return null;
        });
    }

    private Registration add(ShutdownPhases.Group group, String name, ShutdownPhases.Step step) {
        ShutdownPhases.Entry entry = new ShutdownPhases.Entry(group, name, step);
        entries.add(entry);
        return () -> entries.removeIf(e -> e == entry); // identity: two registrations may be equal records
    }

    /**
     * Runs the drain the hook runs, now, on this thread: every registered component, under one
     * budget, as the class javadoc describes. Waits at most the budget (plus thread start-up); an
     * interrupt stops the waiting early (components not waited for are reported as timed out) and
     * the interrupt flag is restored. Does not print, and leaves the hook installed: the JVM's
     * shutdown runs it again, and the components' own stops are idempotent.
     *
     * @param budget the shared budget of this drain
     * @return the report of every registered component, group by group
     */
    @Override
    public ShutdownReport stop(Duration budget) {
        requireNonNull(budget, "budget");
        return ShutdownPhases.run(List.copyOf(entries), Deadline.after(ticker, budget), MANAGER_RESERVE_PERCENT,
                SLACK);
    }

    private void runAsHook() {
        if (!state.compareAndSet(State.INSTALLED, State.RUNNING)) {
            return; // closed while the JVM was already starting the hooks
        }
        String summary;
        try {
            summary = stop(budget).toString();
        } catch (Throwable t) {
            summary = "memlife shutdown drain failed: " + t;
        }
        try {
            PrintStream out = err.get();
            out.println(summary);
            out.flush();
        } catch (Throwable ignored) {
            // stderr may itself be gone this late in the JVM's life; there is nowhere left to report
        }
    }

    /**
     * Removes the hook from the runtime (for an application that drains on its own); idempotent.
     * Tolerates a JVM that is already shutting down: the hook then either ran or does nothing.
     *
     * @return true if the hook was removed from the runtime by this call
     */
    public boolean uninstall() {
        if (!state.compareAndSet(State.INSTALLED, State.CLOSED)) {
            return false;
        }
        synchronized (GLOBAL) {
            if (installed == this) {
                installed = null;
            }
        }
        try {
            return registry.remove(hook);
        } catch (IllegalStateException shutdownInProgress) {
            return false;
        }
    }

    /**
     * The orderly end of an application that drains on its own terms: {@linkplain #uninstall()
     * removes the hook} and, if this call removed it, runs the drain now on this thread ({@link
     * #stop(Duration)}, bounded by the hook's budget), so the registered components are drained exactly
     * once, here rather than at JVM exit. Does nothing if the hook was already removed or the JVM's
     * shutdown has started it. Idempotent.
     */
    @Override
    public void close() {
        if (uninstall()) {
            stop(budget);
        }
    }

    /** {@return where this hook is in its lifecycle} */
    public State state() {
        return state.get();
    }

    /** {@return the shared budget of the drain} */
    public Duration budget() {
        return budget;
    }

    /** {@return the registered components' names, in drain order} */
    public List<String> registered() {
        List<String> names = new ArrayList<>();
        for (ShutdownPhases.Group g : ShutdownPhases.Group.values()) {
            entries.stream().filter(e -> e.group() == g).forEach(e -> names.add(e.name()));
        }
        return names;
    }

    /** The hook thread; for tests in this package. */
    Thread hookThread() {
        return hook;
    }

    @Override
    public String toString() {
        return "ShutdownHooks[" + state.get() + ", budget=" + budget.toMillis() + "ms, registered=" + registered()
                + "]";
    }
}
