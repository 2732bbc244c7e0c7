package dev.memlife.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.memlife.agent.SessionCommitter;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The generation bookkeeping of {@link SessionCommitTracker}: the cases a re-implementer gets wrong. */
@Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SessionCommitTrackerTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final SessionCommitTracker tracker = SessionCommitTracker.create();

    private CompletableFuture<CommitResult> commitAsync(String sid, SessionCommitter owner, boolean wait,
            Duration timeout) {
        CompletableFuture<CommitResult> result = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                result.complete(tracker.commit(sid, owner, wait, timeout));
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        }, "commit-" + sid);
        t.setDaemon(true);
        t.start();
        return result;
    }

    @Test
    void turnMarkedWhileCommitInFlightStaysDirtyAfterThatCommit() throws Exception {
        BlockingOwner agent = new BlockingOwner("agent");
        tracker.markTurnCompleted("s", agent);
        CompletableFuture<CommitResult> first = commitAsync("s", agent, false, Duration.ZERO);
        assertThat(agent.awaitEntered(WAIT)).isTrue();

        assertThat(tracker.markTurnCompleted("s", agent)).as("generation").isEqualTo(2);
        agent.release();
        CommitResult r = first.get(10, TimeUnit.SECONDS);

        assertThat(r.status()).isEqualTo(CommitResult.Status.COMMITTED);
        assertThat(r.committedGeneration()).as("only what was captured when the commit began").isEqualTo(1);
        assertThat(r.generation()).isEqualTo(2);
        assertThat(r.stillDirty()).isTrue();
        assertThat(tracker.hasUncommittedWork("s")).isTrue();

        CommitResult second = tracker.commit("s", agent, false, Duration.ZERO);
        assertThat(second.status()).isEqualTo(CommitResult.Status.COMMITTED);
        assertThat(second.committedGeneration()).isEqualTo(2);
        assertThat(tracker.hasUncommittedWork("s")).isFalse();
        assertThat(agent.calls()).isEqualTo(2);
    }

    @Test
    void failedCommitKeepsBothTheWorkAndTheOwnerForARetry() {
        IllegalStateException boom = new IllegalStateException("provider down");
        BlockingOwner agent = BlockingOwner.released("agent").failNextWith(boom);
        BlockingOwner other = BlockingOwner.released("other");
        tracker.markTurnCompleted("s", agent);

        CommitResult failed = tracker.commit("s", agent, false, Duration.ZERO);

        assertThat(failed.status()).isEqualTo(CommitResult.Status.FAILED);
        assertThat(failed.failure()).isSameAs(boom);
        assertThat(failed.committedGeneration()).isZero();
        assertThat(tracker.hasUncommittedWork("s")).isTrue();
        assertThat(tracker.commit("s", other, false, Duration.ZERO).status())
                .as("the work still belongs to the owner that failed").isEqualTo(CommitResult.Status.NOT_OWNER);
        assertThat(other.calls()).isZero();

        CommitResult retry = tracker.commit("s", agent, false, Duration.ZERO);
        assertThat(retry.status()).isEqualTo(CommitResult.Status.COMMITTED);
        assertThat(retry.committedGeneration()).isEqualTo(1);
        assertThat(tracker.hasUncommittedWork("s")).isFalse();
    }

    @Test
    void inFlightIsClearedWhateverTheOwnerThrows() {
        OutOfMemoryError fatal = new OutOfMemoryError("test: fatal");
        BlockingOwner agent = BlockingOwner.released("agent")
                .failNextWith(new AssertionError("an Error"), new InterruptedException("test"), fatal);
        tracker.markTurnCompleted("s", agent);

        assertThat(tracker.commit("s", agent, false, Duration.ZERO).status()).isEqualTo(CommitResult.Status.FAILED);
        CommitResult interrupted = tracker.commit("s", agent, false, Duration.ZERO);
        assertThat(interrupted.status()).isEqualTo(CommitResult.Status.FAILED);
        assertThat(Thread.interrupted()).as("an owner's InterruptedException restores the flag").isTrue();
        assertThatThrownBy(() -> tracker.commit("s", agent, false, Duration.ZERO)).isSameAs(fatal);

        CommitResult after = tracker.commit("s", agent, false, Duration.ZERO);
        assertThat(after.status()).as("not left in flight").isEqualTo(CommitResult.Status.COMMITTED);
        assertThat(agent.calls()).isEqualTo(4);
    }

    @Test
    void aReplacementOwnersCommitRunsTheOlderOwnersSegmentThroughItFirst() {
        BlockingOwner oldAgent = BlockingOwner.released("old");
        BlockingOwner newAgent = BlockingOwner.released("new");
        tracker.registerOwner("s", oldAgent);
        tracker.markTurnCompleted("s", oldAgent);
        assertThat(tracker.registerOwner("s", newAgent)).isSameAs(oldAgent);
        tracker.markTurnCompleted("s", newAgent);

        CommitResult old = tracker.commit("s", newAgent, false, Duration.ZERO);
        assertThat(old.status()).isEqualTo(CommitResult.Status.COMMITTED);
        assertThat(old.owner()).containsSame(oldAgent);
        assertThat(oldAgent.calls()).isEqualTo(1);
        assertThat(newAgent.calls()).isZero();
        assertThat(old.committedGeneration()).as("not the replacement's work").isEqualTo(1);
        assertThat(tracker.commit("s", oldAgent, false, Duration.ZERO).status())
                .as("replaced, and its work committed: no longer one of the session's owners")
                .isEqualTo(CommitResult.Status.NOT_OWNER);

        CommitResult fresh = tracker.commit("s", newAgent, false, Duration.ZERO);
        assertThat(fresh.status()).isEqualTo(CommitResult.Status.COMMITTED);
        assertThat(fresh.owner()).containsSame(newAgent);
        assertThat(fresh.committedGeneration()).isEqualTo(2);
    }

    @Test
    void ownersAreComparedByIdentityNotEquality() {
        SessionCommitter a = new EqualOwner();
        SessionCommitter b = new EqualOwner();
        SessionCommitter c = new EqualOwner();
        assertThat(a).isEqualTo(b).isEqualTo(c);
        tracker.markTurnCompleted("s", a);
        tracker.markTurnCompleted("s", b);

        assertThat(tracker.commit("s", c, false, Duration.ZERO).status()).as("equal, but not an owner")
                .isEqualTo(CommitResult.Status.NOT_OWNER);
        CommitResult first = tracker.commit("s", b, false, Duration.ZERO);
        assertThat(first.owner()).as("the oldest segment's owner, by identity").containsSame(a);
        assertThat(first.committedGeneration()).isEqualTo(1);
    }

    /** Equal to every other instance: only identity tells two apart. */
    private static final class EqualOwner implements SessionCommitter {
        @Override
        public void commitSession() {}

        @Override
        public boolean equals(Object o) {
            return o instanceof EqualOwner;
        }

        @Override
        public int hashCode() {
            return 1;
        }
    }

    @Test
    void threeTurnsByOneOwnerCoalesceIntoOneCommit() {
        BlockingOwner agent = BlockingOwner.released("agent");
        tracker.markTurnCompleted("s", agent);
        tracker.markTurnCompleted("s", agent);
        tracker.markTurnCompleted("s", agent);

        CommitResult r = tracker.commit("s", agent, false, Duration.ZERO);

        assertThat(r.status()).isEqualTo(CommitResult.Status.COMMITTED);
        assertThat(r.committedGeneration()).isEqualTo(3);
        assertThat(agent.calls()).isEqualTo(1);
        assertThat(tracker.commit("s", agent, false, Duration.ZERO).status())
                .isEqualTo(CommitResult.Status.NOTHING_TO_COMMIT);
        assertThat(agent.calls()).isEqualTo(1);
    }

    @Test
    void discardRefusesDirtyAndInFlightSessions() throws Exception {
        BlockingOwner agent = new BlockingOwner("agent");
        tracker.registerOwner("s", agent);
        assertThat(tracker.discard("unknown")).isEqualTo(DiscardResult.NO_SESSION);
        tracker.markTurnCompleted("s", agent);
        assertThat(tracker.discard("s")).isEqualTo(DiscardResult.REFUSED_DIRTY);

        CompletableFuture<CommitResult> commit = commitAsync("s", agent, false, Duration.ZERO);
        assertThat(agent.awaitEntered(WAIT)).isTrue();
        assertThat(tracker.discard("s")).isEqualTo(DiscardResult.REFUSED_IN_FLIGHT);
        agent.release();
        assertThat(commit.get(10, TimeUnit.SECONDS).committed()).isTrue();

        assertThat(tracker.discard("s")).isEqualTo(DiscardResult.DISCARDED);
        assertThat(tracker.registeredOwner("s")).isEmpty();
        assertThat(tracker.discard("s")).isEqualTo(DiscardResult.NO_SESSION);
    }

    @Test
    void nullAndBlankSessionIdsAreSafeNoOps() {
        BlockingOwner agent = BlockingOwner.released("agent");
        for (String sid : new String[] {null, "", "  "}) {
            assertThat(tracker.registerOwner(sid, agent)).isNull();
            assertThat(tracker.markTurnCompleted(sid, agent)).isZero();
            assertThat(tracker.hasUncommittedWork(sid)).isFalse();
            assertThat(tracker.commit(sid, agent, true, WAIT).status())
                    .isEqualTo(CommitResult.Status.NOTHING_TO_COMMIT);
            assertThat(tracker.commitInBackground(sid).status())
                    .isEqualTo(BackgroundCommit.Status.NOTHING_TO_COMMIT);
            assertThat(tracker.unregisterOwner(sid, agent)).isFalse();
            assertThat(tracker.registeredOwner(sid)).isEmpty();
            assertThat(tracker.discard(sid)).isEqualTo(DiscardResult.NO_SESSION);
        }
        assertThat(tracker.dirtySessions()).isEmpty();
        assertThat(agent.calls()).isZero();
    }

    @Test
    void nullArgumentsAreRejectedByName() {
        assertThatNullPointerException().isThrownBy(() -> tracker.markTurnCompleted("s", null)).withMessage("owner");
        assertThatNullPointerException().isThrownBy(() -> tracker.commit("s", null, false, WAIT)).withMessage("owner");
        assertThatNullPointerException().isThrownBy(() -> tracker.commit("s", () -> { }, false, null))
                .withMessage("timeout");
        assertThatNullPointerException().isThrownBy(() -> tracker.stop(null)).withMessage("budget");
        assertThatThrownBy(() -> SessionCommitTracker.builder().drainParallelism(0))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("drainParallelism must be at least 1, was 0");
    }

    @Test
    void commitWithoutWaitReportsAnInFlightCommitAtOnce() throws Exception {
        BlockingOwner agent = new BlockingOwner("agent");
        tracker.markTurnCompleted("s", agent);
        CompletableFuture<CommitResult> first = commitAsync("s", agent, false, Duration.ZERO);
        try {
            assertThat(agent.awaitEntered(WAIT)).isTrue();
            assertThat(tracker.commit("s", agent, false, Duration.ZERO).status())
                    .isEqualTo(CommitResult.Status.IN_FLIGHT);
            assertThat(tracker.commit("s", agent, true, Duration.ofMillis(50)).status())
                    .as("the wait times out").isEqualTo(CommitResult.Status.IN_FLIGHT);
        } finally {
            agent.release();
        }
        assertThat(first.get(10, TimeUnit.SECONDS).committed()).isTrue();
        assertThat(agent.calls()).isEqualTo(1);
    }

    @Test
    void commitWithWaitWaitsForTheInFlightCommitThenCommitsWhatIsLeft() throws Exception {
        BlockingOwner agent = new BlockingOwner("agent");
        tracker.markTurnCompleted("s", agent);
        CompletableFuture<CommitResult> first = commitAsync("s", agent, false, Duration.ZERO);
        assertThat(agent.awaitEntered(WAIT)).isTrue();
        tracker.markTurnCompleted("s", agent);

        CompletableFuture<CommitResult> second = commitAsync("s", agent, true, WAIT);
        await().atMost(WAIT).until(() -> tracker.commit("s", agent, false, Duration.ZERO).status()
                == CommitResult.Status.IN_FLIGHT && agent.calls() == 1);
        assertThat(second).isNotDone();
        agent.release();

        assertThat(first.get(10, TimeUnit.SECONDS).committedGeneration()).isEqualTo(1);
        CommitResult r = second.get(10, TimeUnit.SECONDS);
        assertThat(r.status()).isEqualTo(CommitResult.Status.COMMITTED);
        assertThat(r.committedGeneration()).isEqualTo(2);
        assertThat(agent.calls()).isEqualTo(2);
    }

    @Test
    void anInterruptWhileWaitingReturnsInterruptedWithTheFlagRestored() throws Exception {
        BlockingOwner agent = new BlockingOwner("agent");
        tracker.markTurnCompleted("s", agent);
        CompletableFuture<CommitResult> first = commitAsync("s", agent, false, Duration.ZERO);
        try {
            assertThat(agent.awaitEntered(WAIT)).isTrue();
            Thread.currentThread().interrupt();
            CommitResult r = tracker.commit("s", agent, true, WAIT);
            assertThat(r.status()).isEqualTo(CommitResult.Status.INTERRUPTED);
            assertThat(Thread.interrupted()).isTrue();
        } finally {
            agent.release();
        }
        assertThat(first.get(10, TimeUnit.SECONDS).committed()).isTrue();
    }

    @Test
    void noOwnerIsCalledUnderTheTrackersLock() {
        CompletableFuture<Boolean> otherThreadGotThrough = new CompletableFuture<>();
        SessionCommitter agent = () -> {
            // Another thread must be able to use the tracker while this commit runs.
            CompletableFuture.runAsync(() -> tracker.markTurnCompleted("other", () -> { }))
                    .thenRun(() -> otherThreadGotThrough.complete(true))
                    .get(10, TimeUnit.SECONDS);
        };
        tracker.markTurnCompleted("s", agent);

        assertThat(tracker.commit("s", agent, false, Duration.ZERO).committed()).isTrue();
        assertThat(otherThreadGotThrough).isCompletedWithValue(true);
        assertThat(tracker.dirtySessions()).containsExactly("other");
    }

    @Test
    void aCleanSessionWithoutARegisteredOwnerIsForgotten() {
        BlockingOwner agent = BlockingOwner.released("agent");
        tracker.registerOwner("kept", agent);
        tracker.markTurnCompleted("kept", agent);
        tracker.markTurnCompleted("transient", agent);

        tracker.commit("kept", agent, false, Duration.ZERO);
        tracker.commit("transient", agent, false, Duration.ZERO);

        assertThat(tracker.registeredOwner("kept")).containsSame(agent);
        assertThat(tracker.discard("transient")).as("already forgotten").isEqualTo(DiscardResult.NO_SESSION);
        assertThat(tracker.unregisterOwner("kept", BlockingOwner.released("stranger"))).isFalse();
        assertThat(tracker.unregisterOwner("kept", agent)).isTrue();
        assertThat(tracker.discard("kept")).as("forgotten once clean and unowned").isEqualTo(DiscardResult.NO_SESSION);
    }
}
