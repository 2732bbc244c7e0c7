package dev.memlife.bench;

import dev.memlife.agent.SessionCommitter;
import dev.memlife.session.CommitResult;
import dev.memlife.session.SessionCommitTracker;
import dev.memlife.session.SessionDrainReport;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * The shutdown drain of many dirty sessions whose commit (an extraction) takes a few milliseconds:
 * memlife's parallel {@code stop} against committing one session at a time, which is what the
 * reference web UI's drain does.
 */
final class SessionDrainRace {

    /** A committer whose commit takes {@code millis} of waiting, like a remote extraction. */
    static SessionCommitter slowCommit(long millis) {
        return () -> LockSupport.parkNanos(millis * 1_000_000);
    }

    private SessionDrainRace() {}

    /** Seconds memlife's drain took to commit {@code sessions} dirty sessions; fails if any stayed dirty. */
    static double parallel(int sessions, long commitMillis) {
        SessionCommitTracker tracker = dirtyTracker(sessions, commitMillis);
        long start = System.nanoTime();
        SessionDrainReport report = tracker.stop(Duration.ofMinutes(5));
        double seconds = (System.nanoTime() - start) / 1e9;
        if (!report.complete()) {
            throw new IllegalStateException("drain left sessions dirty: " + report);
        }
        return seconds;
    }

    /** Seconds a one-at-a-time drain took for the same work. */
    static double oneAtATime(int sessions, long commitMillis) {
        SessionCommitTracker tracker = dirtyTracker(sessions, commitMillis);
        long start = System.nanoTime();
        for (String sid : tracker.dirtySessions()) {
            CommitResult result = tracker.commit(sid, tracker.registeredOwner(sid).orElseThrow(), true,
                    Duration.ofMinutes(1));
            if (!result.committed()) {
                throw new IllegalStateException("commit of " + sid + " failed: " + result);
            }
        }
        return (System.nanoTime() - start) / 1e9;
    }

    private static SessionCommitTracker dirtyTracker(int sessions, long commitMillis) {
        SessionCommitTracker tracker = SessionCommitTracker.builder().name("bench").build();
        for (int i = 0; i < sessions; i++) {
            String sid = "session-" + i;
            SessionCommitter owner = slowCommit(commitMillis);
            tracker.registerOwner(sid, owner);
            tracker.markTurnCompleted(sid, owner);
        }
        return tracker;
    }
}
