package dev.memlife.spring;

import static java.util.Objects.requireNonNull;

import dev.memlife.SpoolFigures;
import dev.memlife.StopReport;
import dev.memlife.WriteFigures;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.gateway.GatewayStopReport;
import dev.memlife.session.SessionCommitTracker;
import dev.memlife.session.SessionDrainReport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Drains memlife when the Spring context closes: the session commit tracker first (its commits
 * need live agents), then the gateway's stop (refuse new leases, wait for the open ones, close
 * every agent), under one budget.
 *
 * <p>It stops in {@link #PHASE}, just below the web server's graceful shutdown ({@code
 * WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE}, {@code Integer.MAX_VALUE - 1024} in
 * Boot 3.5 and 4.0). Spring stops the higher phase first, so the graceful shutdown has let every
 * request in flight finish, and queue its turn, before the gateway stops; and every lifecycle stops
 * before any bean is destroyed, so the {@code DataSource} the store writes to is still open. The
 * drain runs on a thread of its own ({@link #stop(Runnable)}) and tells Spring it is done within
 * its {@linkplain #budget() budget}, even if a provider hangs: what has not finished by then goes
 * on detached and is named in the logged reports.
 *
 * <p>Thread-safe.
 */
public final class MemlifeLifecycle implements SmartLifecycle {

    /** The phase of Boot's graceful web-server shutdown, in Boot 3.5 and 4.0. */
    public static final int WEB_SERVER_GRACEFUL_SHUTDOWN_PHASE = SmartLifecycle.DEFAULT_PHASE - 1024;
    /** This lifecycle's phase: just below the web server's graceful shutdown, so it stops right after it. */
    public static final int PHASE = WEB_SERVER_GRACEFUL_SHUTDOWN_PHASE - 1;
    /** Spring's default of {@code spring.lifecycle.timeout-per-shutdown-phase}. */
    public static final Duration DEFAULT_PHASE_TIMEOUT = Duration.ofSeconds(30);

    private static final Logger LOG = LoggerFactory.getLogger(MemlifeLifecycle.class);
    /** Time Spring is told the drain is over after its budget at the latest, beyond the budget. */
    private static final Duration CALLBACK_SLACK = Duration.ofMillis(100);

    private final AgentGateway gateway;
    private final SessionCommitTracker tracker;
    private final Duration budget;
    private final AtomicReference<State> state = new AtomicReference<>(State.NEW);
    private final CompletableFuture<Report> report = new CompletableFuture<>();

    private enum State { NEW, RUNNING, STOPPED }

    /**
     * What the drain did.
     *
     * @param sessions the tracker's drain, or null without a tracker
     * @param gateway the gateway's stop
     * @param writes every write the gateway's agents took while the application ran, by outcome,
     *     as the drain left them (each agent counted once)
     * @param budget the drain's budget
     * @param elapsed how long the drain took
     */
    public record Report(SessionDrainReport sessions, GatewayStopReport gateway, WriteFigures writes, Duration budget,
            Duration elapsed) implements StopReport {

        /**
         * {@return the writes' totals, by outcome: accepted = delivered + failed + abandoned + still
         * running; with spools, how many of them the spools hold for the next start}
         */
        public String writeTotals() {
            long stillRunning = writes.accepted() - writes.delivered() - writes.failed() - writes.abandoned();
            String line = "writes accepted " + writes.accepted() + ": delivered " + writes.delivered() + ", failed "
                    + writes.failed() + ", abandoned " + writes.abandoned() + ", still running " + stillRunning
                    + "; rejected " + writes.rejected();
            SpoolFigures spool = writes.spool();
            return spool.equals(SpoolFigures.NONE) ? line
                    : line + "; kept in spools for the next start " + (spool.backlog() + spool.failedKept());
        }

        /** {@return whether the sessions were committed and the gateway closed every agent in time} */
        @Override
        public boolean complete() {
            return (sessions == null || sessions.complete()) && gateway.complete();
        }

        /** {@return the sessions left dirty, then the agents not closed} */
        @Override
        public List<String> unfinished() {
            List<String> ids = new ArrayList<>(sessions == null ? List.of() : sessions.unfinished());
            ids.addAll(gateway.unfinished());
            return List.copyOf(ids);
        }
    }

    /**
     * A lifecycle that drains {@code tracker} (if any), then stops {@code gateway}, within {@link
     * #budget(Duration, Duration)} of the two durations.
     *
     * @param gateway the gateway to stop
     * @param tracker the tracker to drain first; null for none
     * @param drainTimeout the most the drain may take ({@code memlife.drain-timeout})
     * @param phaseTimeout Spring's {@code spring.lifecycle.timeout-per-shutdown-phase}
     */
    public MemlifeLifecycle(AgentGateway gateway, SessionCommitTracker tracker, Duration drainTimeout,
            Duration phaseTimeout) {
        this.gateway = requireNonNull(gateway, "gateway");
        this.tracker = tracker;
        this.budget = budget(drainTimeout, phaseTimeout);
    }

    /**
     * The drain's budget: {@code drainTimeout}, cut to nine tenths of {@code phaseTimeout} when that
     * is shorter, so the drain reports before Spring stops waiting for this phase.
     *
     * @param drainTimeout the drain timeout asked for
     * @param phaseTimeout Spring's timeout per shutdown phase
     * @return the budget
     */
    public static Duration budget(Duration drainTimeout, Duration phaseTimeout) {
        requireNonNull(drainTimeout, "drainTimeout");
        requireNonNull(phaseTimeout, "phaseTimeout");
        if (drainTimeout.isNegative() || phaseTimeout.isNegative()) {
            throw new IllegalArgumentException("negative timeout: drain " + drainTimeout + ", phase " + phaseTimeout);
        }
        Duration fits = phaseTimeout.multipliedBy(9).dividedBy(10);
        return drainTimeout.compareTo(fits) <= 0 ? drainTimeout : fits;
    }

    /** {@return the drain's budget} */
    public Duration budget() {
        return budget;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }

    @Override
    public void start() {
        state.compareAndSet(State.NEW, State.RUNNING);
    }

    @Override
    public boolean isRunning() {
        return state.get() == State.RUNNING;
    }

    /** Drains on this thread; returns within the budget (plus a little), like {@link #stop(Runnable)}. */
    @Override
    public void stop() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        stop(() -> done.complete(null));
        done.join();
    }

    /**
     * Starts the drain on a daemon thread of its own and runs {@code callback} when it is over, or
     * at the budget (plus 100 ms) if it is not, whichever comes first. Once only: a later call runs
     * the callback at once.
     */
    @Override
    public void stop(Runnable callback) {
        requireNonNull(callback, "callback");
        if (!state.compareAndSet(State.RUNNING, State.STOPPED)) {
            state.set(State.STOPPED);
            callback.run();
            return;
        }
        Thread worker = new Thread(() -> {
            try {
                Report r = drain();
                LOG.info("memlife drained in {} ms of {} ms: {}; {}{}", r.elapsed().toMillis(), budget.toMillis(),
                        r.writeTotals(), r.sessions() == null ? "" : r.sessions() + "; ", r.gateway());
                report.complete(r);
            } catch (Throwable t) {
                LOG.error("memlife drain failed", t);
                report.completeExceptionally(t);
            }
        }, "memlife-spring-drain");
        worker.setDaemon(true);
        // Registered before the drain can end; runs once the report is there, or at the budget.
        report.thenApply(r -> (Object) r)
                .completeOnTimeout(null, budget.plus(CALLBACK_SLACK).toNanos(), TimeUnit.NANOSECONDS)
                .whenComplete((r, failure) -> callback.run());
        worker.start();
    }

    private Report drain() {
        long start = System.nanoTime();
        SessionDrainReport sessions = null;
        if (tracker != null) {
            sessions = tracker.stop(budget.dividedBy(2)); // at most half: the agents' close needs the rest
        }
        Duration left = budget.minusNanos(System.nanoTime() - start);
        GatewayStopReport stop = gateway.stop(left.isNegative() ? Duration.ZERO : left);
        return new Report(sessions, stop, gateway.figures().writes(), budget, Duration.ofNanos(System.nanoTime() - start));
    }

    /**
     * The drain's report, once it is over; empty before the context closed or while the drain is
     * still running (a drain past its budget finishes detached).
     *
     * @return the report, when the drain has finished
     */
    public Optional<Report> report() {
        return report.isDone() && !report.isCompletedExceptionally() ? Optional.of(report.join()) : Optional.empty();
    }

    @Override
    public String toString() {
        return "MemlifeLifecycle[" + state.get() + ", phase=" + PHASE + ", budget=" + budget.toMillis() + "ms]";
    }
}
