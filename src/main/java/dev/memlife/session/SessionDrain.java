package dev.memlife.session;

import dev.memlife.agent.SessionCommitter;
import dev.memlife.internal.Deadline;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run of {@link SessionCommitTracker#stop}: join the background workers, and commit the
 * dirty sessions pass after pass, each pass on at most {@code parallelism} daemon drain workers.
 * The coordinating thread never calls an owner; it only waits — bounded by the shared deadline —
 * for the workers, so an owner that never returns costs the drain its budget and nothing more.
 * If no worker thread can be made at all, the pass runs on the coordinating thread instead,
 * without the deadline's bound, rather than leave every session uncommitted; that is logged.
 * Used by one thread once.
 */
final class SessionDrain {

    private static final Logger LOG = LoggerFactory.getLogger(SessionCommitTracker.class);

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
                Optional<SessionCommitter> owner = table.awaitOldestDirtyOwner(sessionId, deadline);
                if (owner == null) {
                    return; // still in flight elsewhere at the deadline, or interrupted
                }
                if (owner.isEmpty()) {
                    phase = Phase.CLEAN;
                    return;
                }
                phase = Phase.COMMITTING;
                CommitResult r = table.commit(sessionId, owner.get(), false, 0);
                switch (r.status()) {
                    case COMMITTED:
                        commits++;
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
                        throw new IllegalStateException("unknown commit outcome " + r.status());
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
    private final SessionTable table;
    private final Deadline deadline;
    private final int parallelism;
    private int workerCount;

    SessionDrain(SessionCommitTracker tracker, SessionTable table, Deadline deadline, int parallelism) {
        this.tracker = tracker;
        this.table = table;
        this.deadline = deadline;
        this.parallelism = parallelism;
    }

    /**
     * Starts the first pass, then joins the background workers while it runs (so a wedged worker
     * cannot starve the other sessions), then runs further passes while they make progress.
     */
    SessionDrainReport run(List<Thread> backgroundWorkers) {
        Pass pass = startPass();
        boolean interrupted = false;
        int joined = 0;
        for (Thread worker : backgroundWorkers) {
            if (!interrupted && !deadline.expired()) {
                try {
                    deadline.join(worker);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            joined += worker.isAlive() ? 0 : 1;
        }
        Map<String, Attempt> lastAttempt = new HashMap<>();
        Map<String, Integer> committedBySession = new HashMap<>();
        int passes = 0;
        while (pass != null && !interrupted) {
            passes++;
            boolean finished;
            try {
                finished = pass.await();
            } catch (InterruptedException e) {
                interrupted = true;
                finished = false;
            }
            lastAttempt.putAll(pass.attempts);
            pass.attempts.values().forEach(a -> committedBySession.merge(a.sessionId, a.commits, Integer::sum));
            if (!finished || pass.attempts.values().stream().allMatch(a -> a.commits == 0)) {
                break; // out of budget, or a full pass made no progress
            }
            pass = startPass();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        List<SessionDrainReport.LeftDirty> leftDirty = new ArrayList<>();
        for (String id : table.dirtySessions()) {
            Attempt a = lastAttempt.get(id);
            SessionDrainReport.Reason reason = a != null ? a.reason()
                    : table.inFlight(id) ? SessionDrainReport.Reason.IN_FLIGHT_ELSEWHERE
                    : SessionDrainReport.Reason.NOT_ATTEMPTED;
            leftDirty.add(new SessionDrainReport.LeftDirty(id, reason,
                    reason == SessionDrainReport.Reason.FAILED ? a.failure : null));
        }
        int sessionsCommitted = (int) committedBySession.values().stream().filter(n -> n > 0).count();
        long commits = committedBySession.values().stream().mapToLong(Integer::longValue).sum();
        return new SessionDrainReport(tracker.name(), joined, backgroundWorkers.size() - joined, passes,
                commits, sessionsCommitted, leftDirty, interrupted, deadline.budget(), deadline.elapsed());
    }

    /** Starts a pass over the sessions dirty now; null when there are none or the budget is spent. */
    private Pass startPass() {
        List<String> dirty = table.dirtySessions();
        if (dirty.isEmpty() || deadline.expired()) {
            return null;
        }
        Pass pass = new Pass(dirty);
        int started = 0;
        for (int i = 0; i < Math.min(parallelism, dirty.size()); i++) {
            int sofar = started;
            Thread worker = tracker.threads("memlife-drain-" + tracker.name() + "-" + ++workerCount).start(pass::work,
                    t -> LOG.warn("session drain of tracker '{}': no drain worker could be started ({}); {}",
                            tracker.name(), t.toString(),
                            sofar == 0 ? "committing on this thread, unbounded" : "going on with " + sofar));
            if (worker == null) { // the factory failed, or the JVM is out of threads
                break;
            }
            started++;
        }
        if (started == 0) {
            pass.work();
        }
        return pass;
    }

    /** One pass: an attempt per dirty session, taken from a queue by up to {@code parallelism} workers. */
    private final class Pass {
        final Map<String, Attempt> attempts = new LinkedHashMap<>();
        final ConcurrentLinkedQueue<Attempt> queue;
        final CountDownLatch ended;

        Pass(List<String> sessionIds) {
            sessionIds.forEach(id -> attempts.put(id, new Attempt(id)));
            queue = new ConcurrentLinkedQueue<>(attempts.values());
            ended = new CountDownLatch(attempts.size());
        }

        /** A drain worker's loop; an attempt taken after the deadline is left as not attempted. */
        void work() {
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
        }

        /** Waits until every attempt has ended, or the deadline. @return true if all ended in time */
        boolean await() throws InterruptedException {
            return deadline.await(ended) && !deadline.expired();
        }
    }
}
