package dev.memlife.bench;

import dev.memlife.agent.SessionCommitter;
import dev.memlife.session.SessionCommitTracker;

/**
 * Bytes the heap retains per dirty tracked session: a million sessions, each with one completed
 * turn by one shared owner, their ids made before the first measurement (the id is the caller's
 * payload), measured as the difference in used heap after full collections.
 */
final class DirtySessionFootprint {

    private DirtySessionFootprint() {}

    static double bytesPerDirtySession(int sessions) {
        String[] ids = new String[sessions];
        for (int i = 0; i < sessions; i++) {
            ids[i] = "session-" + i;
        }
        SessionCommitter owner = () -> { };
        SessionCommitTracker tracker = SessionCommitTracker.builder().name("footprint").build();
        long before = Heap.usedAfterGc();
        for (String id : ids) {
            tracker.markTurnCompleted(id, owner);
        }
        long after = Heap.usedAfterGc();
        if (!tracker.hasUncommittedWork(ids[sessions - 1]) || tracker.dirtySessions().size() != sessions) {
            throw new IllegalStateException("expected " + sessions + " dirty sessions");
        }
        return (after - before) / (double) sessions;
    }
}
