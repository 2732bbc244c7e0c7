package dev.memlife.session;

import dev.memlife.StopReport;
import dev.memlife.Ticker;
import dev.memlife.internal.Checks;
import dev.memlife.internal.Deadline;
import dev.memlife.internal.Threads;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The shutdown drain itself: the registered components group by group, each group's components
 * at once on daemon threads, the waiting bounded by the shared deadline. Stateless.
 */
final class ShutdownPhases {

    /** The groups, in drain order. */
    enum Group {
        /** Session commit trackers: commit while the managers still accept work. */
        TRACKERS,
        /** Other components, such as a gateway closing its agents. */
        COMPONENTS,
        /** Memory managers: drain their queues and shut their providers down. */
        MANAGERS,
        /**
         * What the application owns and everything above uses, such as a shared store and its
         * connection pool: closed one at a time, the last registered first, after everything else.
         */
        RESOURCES
    }

    /** What the hook runs for one registered component: a stop within a budget, or a plain close. */
    @FunctionalInterface
    interface Step {
        /** Runs the component's stop; its report, or null for a resource that was only closed. */
        StopReport run(Duration budget) throws Exception;
    }

    record Entry(Group group, String name, Step step) {}

    /** One component's drain on its own daemon thread. Fields are written before {@code ended}. */
    private static final class Run {
        final Entry entry;
        final CountDownLatch ended = new CountDownLatch(1);
        final Ticker ticker;
        final long startNanos;
        volatile StopReport report;
        volatile Throwable failure;
        volatile long endNanos;

        Run(Entry entry, Duration budget, Ticker ticker) {
            this.entry = entry;
            this.ticker = ticker;
            this.startNanos = ticker.read();
            Threads.named("memlife-shutdown-" + entry.name()).newThread(() -> {
                try {
                    report = entry.step().run(budget);
                } catch (Throwable e) {
                    failure = e;
                } finally {
                    endNanos = ticker.read();
                    ended.countDown();
                }
            }).start();
        }

        ShutdownReport.Component result() {
            if (ended.getCount() > 0) {
                return new ShutdownReport.Component(entry.name(), ShutdownReport.Status.TIMED_OUT, null, null,
                        Duration.ofNanos(ticker.read() - startNanos));
            }
            Duration took = Duration.ofNanos(endNanos - startNanos);
            return failure == null
                    ? new ShutdownReport.Component(entry.name(), ShutdownReport.Status.DONE, report, null, took)
                    : new ShutdownReport.Component(entry.name(), ShutdownReport.Status.FAILED, null, failure, took);
        }
    }

    private ShutdownPhases() {}

    static ShutdownReport run(List<Entry> entries, Deadline deadline, int managerReservePercent, Duration slack) {
        Deadline early = deadline.reserving(deadline.budget().multipliedBy(managerReservePercent).dividedBy(100));
        List<ShutdownReport.Component> out = new ArrayList<>();
        for (Group group : Group.values()) {
            List<Entry> members = entries.stream().filter(e -> e.group() == group).toList();
            if (group == Group.RESOURCES) {
                for (int i = members.size() - 1; i >= 0; i--) { // one at a time, the last registered first
                    runGroup(List.of(members.get(i)), deadline, slack, out);
                }
            } else if (!members.isEmpty()) {
                runGroup(members, group == Group.MANAGERS ? deadline : early, slack, out);
            }
        }
        return new ShutdownReport(out, deadline.budget(), deadline.elapsed());
    }

    private static void runGroup(List<Entry> members, Deadline until, Duration slack, List<ShutdownReport.Component> out) {
        long remaining = Math.max(0, until.remainingNanos());
        Duration budget = Duration.ofNanos(remaining - Math.min(Checks.saturatedNanos(slack), remaining / 10));
        List<Run> runs = new ArrayList<>();
        for (Entry e : members) {
            runs.add(new Run(e, budget, until.ticker()));
        }
        boolean interrupted = false;
        for (Run r : runs) {
            try {
                if (!interrupted) {
                    until.await(r.ended);
                }
            } catch (InterruptedException e) {
                interrupted = true;
            }
            out.add(r.result());
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
