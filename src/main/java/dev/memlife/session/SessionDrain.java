package dev.memlife.session;

import dev.memlife.agent.SessionCommitter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One run of {@link SessionCommitTracker#drainAll}: join the background workers, then commit the
 * dirty sessions pass after pass, each pass on at most {@code parallelism} daemon drain workers.
 * The coordinating thread never calls an owner; it only waits — bounded by the shared deadline —
 * for the workers, so an owner that never returns costs the drain its budget and nothing more.
 * Used by one thread once.
 */
final class SessionDrain {

    /** Where one session's drain attempt is; written by its worker, read by the coordinator. */
    private enum Phase {
        /** Not picked up by a worker yet. */
        QUEUED,
        /** Waiting for another thread's commit of the session to end. */
        WAITING,
        /** Inside an owner's commit. */
        COMMITTING,
        /** The owner threw. */
        FAILED,
        /** Clean when last looked at. */
        CLEAN
    }

    /** One session's attempt in one pass. Fields are volatile: the coordinator reads them racily. */
    private final class Attempt {
        final String sessionId;
        volatile Phase phase = Phase.QUEUED;
        volatile Throwable failure;
        volatile int commits;

        Attempt(String sessionId) {
            this.sessionId = sessionId;
        }

        /** Commits the session's segments in order until it is clean, fails or the budget is spent. */
        void run() {
            while (!deadline.expired()) {
                phase = Phase.WAITING;
                Optional<SessionCommitter> owner = tracker.awaitOldestDirtyOwner(sessionId,
                        System.nanoTime() + deadline.remainingNanos());
                if (owner == null) {
                    return; // still in flight elsewhere at the deadline, or interrupted
                }
                if (owner.isEmpty()) {
                    phase = Phase.CLEAN;
                    return;
                }
                phase = Phase.COMMITTING;
                CommitResult r = tracker.commit(sessionId, owner.get(), false, java.time.Duration.ZERO);
                switch (r.outcome()) {
                    case COMMITTED:
                        commits++;
                        totalCommits.incrementAndGet();
                        break;
                    case NOTHING_TO_COMMIT:
                        phase = Phase.CLEAN;
                        return;
                    case IN_FLIGHT:
                    case NOT_OWNER:
                        break; // another commit slipped in between; look again
                    case FAILED:
                        failure = r.failure();
                        phase = Phase.FAILED;
                        return;
                    case INTERRUPTED:
                        return;
                    default:
                        throw new IllegalStateException("unknown commit outcome " + r.outcome());
                }
            }
        }

        SessionDrainReport.Reason reason() {
            switch (phase) {
                case QUEUED:
                    return SessionDrainReport.Reason.NOT_ATTEMPTED;
                case WAITING:
                    return SessionDrainReport.Reason.IN_FLIGHT_ELSEWHERE;
                case FAILED:
                    return SessionDrainReport.Reason.FAILED;
                case COMMITTING:
                case CLEAN: // dirty again after it was clean, or its next segment ran out of budget
                    return SessionDrainReport.Reason.TIMED_OUT;
                default:
                    throw new IllegalStateException("unknown phase " + phase);
            }
        }
    }

    private final SessionCommitTracker tracker;
    private final Deadline deadline;
    private final int parallelism;
    private final AtomicLong totalCommits = new AtomicLong();
    private int workerCount;

    SessionDrain(SessionCommitTracker tracker, Deadline deadline, int parallelism) {
        this.tracker = tracker;
        this.deadline = deadline;
        this.parallelism = parallelism;
    }

    SessionDrainReport run(List<Thread> backgroundWorkers) {
        boolean interrupted = false;
        int joined = 0;
        for (Thread worker : backgroundWorkers) {
            if (!interrupted && !deadline.expired()) {
                try {
                    TimeUnit.NANOSECONDS.timedJoin(worker, deadline.remainingNanos());
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            joined += worker.isAlive() ? 0 : 1;
        }
        Map<String, Attempt> lastAttempt = new HashMap<>();
        Map<String, Integer> committedBySession = new HashMap<>();
        int passes = 0;
        while (!interrupted && !deadline.expired()) {
            List<String> dirty = tracker.dirtySessions();
            if (dirty.isEmpty()) {
                break;
            }
            passes++;
            Map<String, Attempt> pass = new LinkedHashMap<>();
            dirty.forEach(id -> pass.put(id, new Attempt(id)));
            long before = totalCommits.get();
            boolean finished;
            try {
                finished = runPass(pass);
            } catch (InterruptedException e) {
                interrupted = true;
                finished = false;
            }
            lastAttempt.putAll(pass);
            pass.values().forEach(a -> committedBySession.merge(a.sessionId, a.commits, Integer::sum));
            if (!finished || totalCommits.get() == before) {
                break; // out of budget, or a full pass made no progress
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        List<SessionDrainReport.LeftDirty> leftDirty = new ArrayList<>();
        for (String id : tracker.dirtySessions()) {
            Attempt a = lastAttempt.get(id);
            leftDirty.add(new SessionDrainReport.LeftDirty(id,
                    a == null ? SessionDrainReport.Reason.NOT_ATTEMPTED : a.reason(),
                    a == null || a.reason() != SessionDrainReport.Reason.FAILED ? null : a.failure));
        }
        int sessionsCommitted = (int) committedBySession.values().stream().filter(n -> n > 0).count();
        return new SessionDrainReport(tracker.name(), joined, backgroundWorkers.size() - joined, passes,
                totalCommits.get(), sessionsCommitted, leftDirty, interrupted, deadline.budget(), deadline.elapsed());
    }

    /**
     * Runs one pass on up to {@code parallelism} new daemon workers and waits for it until the
     * deadline.
     *
     * @return true if every attempt of the pass ended before the deadline
     */
    private boolean runPass(Map<String, Attempt> pass) throws InterruptedException {
        ConcurrentLinkedQueue<Attempt> queue = new ConcurrentLinkedQueue<>(pass.values());
        CountDownLatch ended = new CountDownLatch(pass.size());
        Runnable work = () -> {
            Attempt a;
            while ((a = queue.poll()) != null) {
                try {
                    if (!deadline.expired()) {
                        a.run();
                    }
                } finally {
                    ended.countDown();
                }
            }
        };
        for (int i = 0; i < Math.min(parallelism, pass.size()); i++) {
            tracker.newThread(work, "memlife-drain-" + tracker.name() + "-" + ++workerCount).start();
        }
        return ended.await(Math.max(0, deadline.remainingNanos()), TimeUnit.NANOSECONDS) && !deadline.expired();
    }
}
