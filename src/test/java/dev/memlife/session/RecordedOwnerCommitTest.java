package dev.memlife.session;

import static org.assertj.core.api.Assertions.assertThat;

import dev.memlife.agent.SessionCommitter;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Committing through the recorded owner. Mirrors hermes-webui {@code api/session_lifecycle.py},
 * {@code commit_session_memory}: the oldest dirty segment is always committed by the agent recorded
 * for it, even one that has since been replaced, also when the commit names the newer agent.
 */
@Timeout(30)
class RecordedOwnerCommitTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final SessionCommitTracker tracker = SessionCommitTracker.create();
    private final List<String> commits = new CopyOnWriteArrayList<>();
    private final SessionCommitter oldAgent = named("old agent");
    private final SessionCommitter newAgent = named("new agent");

    private SessionCommitter named(String name) {
        return new SessionCommitter() {
            @Override
            public void commitSession() {
                commits.add(name);
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }

    /** The web UI replaced the session's agent; the old one's turns are still uncommitted. */
    private void replacedMidSession() {
        tracker.registerOwner("s", oldAgent);
        tracker.markTurnCompleted("s", oldAgent);
        tracker.markTurnCompleted("s", oldAgent);
        tracker.registerOwner("s", newAgent); // the old agent was evicted; only the tracker remembers it
        tracker.markTurnCompleted("s", newAgent);
    }

    @Test
    void anyCallerCommitsTheOldestSegmentThroughTheOwnerRecordedForIt() {
        replacedMidSession();

        CommitResult first = tracker.commit("s", true, WAIT);
        assertThat(first.status()).isEqualTo(CommitResult.Status.COMMITTED);
        assertThat(first.owner()).containsSame(oldAgent);
        assertThat(first.stillDirty()).isTrue();

        CommitResult second = tracker.commit("s", true, WAIT);
        assertThat(second.owner()).containsSame(newAgent);
        assertThat(second.stillDirty()).isFalse();
        assertThat(commits).containsExactly("old agent", "new agent");
        assertThat(tracker.commit("s", true, WAIT).status()).isEqualTo(CommitResult.Status.NOTHING_TO_COMMIT);
    }

    /**
     * test_explicit_new_agent_commit_cannot_clear_old_dirty_segment: a commit called with the
     * session's current agent commits the replaced agent's older segment first, through that agent,
     * and leaves the current agent's work dirty for the next commit.
     */
    @Test
    void anExplicitCommitWithTheCurrentOwnerCommitsTheOlderOwnersSegmentThroughItFirst() {
        replacedMidSession();

        CommitResult first = tracker.commit("s", newAgent, true, WAIT);

        assertThat(first.status()).isEqualTo(CommitResult.Status.COMMITTED);
        assertThat(first.owner()).containsSame(oldAgent);
        assertThat(first.committedGeneration()).as("the old agent's two turns, not the new one's").isEqualTo(2);
        assertThat(commits).containsExactly("old agent");
        assertThat(tracker.hasUncommittedWork("s")).isTrue();

        CommitResult second = tracker.commit("s", newAgent, true, WAIT);
        assertThat(second.owner()).containsSame(newAgent);
        assertThat(commits).containsExactly("old agent", "new agent");
        assertThat(tracker.hasUncommittedWork("s")).isFalse();
    }

    @Test
    void anOwnerTheSessionNeverHadCommitsNothing() {
        replacedMidSession();
        SessionCommitter stranger = named("stranger");

        CommitResult refused = tracker.commit("s", stranger, true, WAIT);

        assertThat(refused.status()).isEqualTo(CommitResult.Status.NOT_OWNER);
        assertThat(refused.owner()).isEmpty();
        assertThat(commits).isEmpty();
        assertThat(tracker.hasUncommittedWork("s")).isTrue();
    }

    /**
     * "+ New Chat" with the new agent at hand: the background commit commits every dirty segment,
     * the replaced agent's included, instead of starting and doing nothing.
     */
    @Test
    void aBackgroundCommitCommitsEverySegmentThroughItsRecordedOwner() {
        replacedMidSession();

        BackgroundCommit background = tracker.commitInBackground("s");

        assertThat(background.status()).isEqualTo(BackgroundCommit.Status.STARTED);
        assertThat(background.awaitDone(WAIT)).isTrue();
        assertThat(commits).containsExactly("old agent", "new agent");
        assertThat(tracker.hasUncommittedWork("s")).isFalse();
    }
}
