package dev.memlife.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.memlife.MemoryManager;
import dev.memlife.Message;
import dev.memlife.agent.SessionCommitter;
import dev.memlife.testing.HangingProvider;
import dev.memlife.testing.Hook;
import dev.memlife.testing.ManualTicker;
import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link SessionCommitTracker#stop}: what it commits, in which order, and how it keeps its deadline. */
@Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SessionDrainTest {

    private static final Duration WAIT = Duration.ofSeconds(10);
    /**
     * Deadline margin for the tests that are not the 100 ms measurement: on a loaded 2-core machine
     * (load average 12) a timed wait was seen to wake up 170 ms late.
     */
    private static final long LOADED_MACHINE_MARGIN_MILLIS = 500;

    /**
     * The drain's deadline is measured on the tracker's ticker: real time passing does not end it,
     * the ticker passing it does, while a provider never returns.
     */
    @Test
    void drainHoldsItsDeadlineOnItsTickerWhenAProviderNeverReturns() {
        ManualTicker ticker = new ManualTicker();
        SessionCommitTracker tracker = SessionCommitTracker.builder().name("deadline").ticker(ticker).build();
        HangingProvider wedged = new HangingProvider("wedged", Hook.ON_SESSION_END);
        MemoryManager hung = MemoryManager.builder().name("hung").build();
        hung.addProvider(wedged);
        RecordingProvider fine = new RecordingProvider("fine");
        MemoryManager healthy = MemoryManager.builder().name("healthy").build();
        healthy.addProvider(fine);
        SessionCommitter hungAgent = () -> hung.onSessionEnd(List.of(Message.user("a")));
        SessionCommitter healthyAgent = () -> healthy.onSessionEnd(List.of(Message.user("b")));
        tracker.markTurnCompleted("hung", hungAgent);
        tracker.markTurnCompleted("healthy", healthyAgent);
        Duration deadline = Duration.ofMillis(400);
        try {
            CompletableFuture<SessionDrainReport> draining = CompletableFuture.supplyAsync(() -> tracker.stop(deadline));
            assertThat(wedged.awaitHanging(Duration.ofSeconds(10))).isTrue();
            await().atMost(Duration.ofSeconds(10)).until(() -> fine.count("on_session_end") == 1);
            await().during(Duration.ofMillis(600)).atMost(Duration.ofSeconds(5)).until(() -> !draining.isDone());
            ticker.advance(deadline);
            SessionDrainReport report = draining.join();

            assertThat(report.elapsed()).as("measured on the ticker").isEqualTo(deadline);
            assertThat(wedged.hangingCount()).isEqualTo(1);
            assertThat(report.leftDirty()).containsExactly(
                    new SessionDrainReport.LeftDirty("hung", SessionDrainReport.Reason.TIMED_OUT, null));
            assertThat(fine.count("on_session_end")).as("the other session is drained in parallel").isEqualTo(1);
            assertThat(report.commits()).isEqualTo(1);
        } finally {
            wedged.release();
        }
    }

    @Test
    void drainCommitsEverySegmentThroughItsOwnerOldestFirst() {
        SessionCommitTracker tracker = SessionCommitTracker.create();
        List<String> log = Collections.synchronizedList(new ArrayList<>());
        BlockingOwner first = new BlockingOwner("first", log);
        BlockingOwner second = new BlockingOwner("second", log);
        first.release();
        second.release();
        tracker.markTurnCompleted("s", first);
        tracker.markTurnCompleted("s", first);
        tracker.markTurnCompleted("s", second);
        tracker.markTurnCompleted("s", first);

        SessionDrainReport report = tracker.stop(WAIT);

        assertThat(log).containsExactly("commit:first", "commit:second", "commit:first");
        assertThat(report.complete()).isTrue();
        assertThat(report.commits()).isEqualTo(3);
        assertThat(report.sessionsCommitted()).isEqualTo(1);
        assertThat(report.passes()).isEqualTo(1);
        assertThat(tracker.hasUncommittedWork("s")).isFalse();
    }

    @Test
    void drainNamesAFailedSessionWithItsExceptionAndStopsWhenAPassMakesNoProgress() {
        SessionCommitTracker tracker = SessionCommitTracker.create();
        IllegalStateException boom = new IllegalStateException("extraction failed");
        SessionCommitter failing = () -> {
            throw boom;
        };
        tracker.markTurnCompleted("bad", failing);
        tracker.markTurnCompleted("good", BlockingOwner.released("good"));

        SessionDrainReport report = tracker.stop(Duration.ofSeconds(20));

        assertThat(report.leftDirty()).containsExactly(
                new SessionDrainReport.LeftDirty("bad", SessionDrainReport.Reason.FAILED, boom));
        assertThat(report.passes()).as("retried once after a pass with progress, then gave up").isEqualTo(2);
        assertThat(report.elapsed()).as("no waiting out the deadline").isLessThan(Duration.ofSeconds(10));
        assertThat(tracker.hasUncommittedWork("good")).isFalse();
    }

    @Test
    void drainCommitsInParallelWithAtMostTheConfiguredWorkers() {
        SessionCommitTracker tracker = SessionCommitTracker.builder().drainParallelism(2).build();
        BlockingOwner shared = new BlockingOwner("shared");
        for (int i = 0; i < 5; i++) {
            tracker.markTurnCompleted("s" + i, shared);
        }
        AtomicInteger drainThreads = new AtomicInteger();
        Thread drain = new Thread(() -> tracker.stop(WAIT));
        drain.setDaemon(true);
        drain.start();
        try {
            await().atMost(WAIT).until(() -> shared.running() == 2);
            await().during(Duration.ofMillis(200)).atMost(WAIT).until(() -> shared.running() == 2);
            Thread.getAllStackTraces().keySet().forEach(t -> {
                if (t.getName().startsWith("memlife-drain-" + tracker.name())) {
                    drainThreads.incrementAndGet();
                    assertThat(t.isDaemon()).isTrue();
                }
            });
        } finally {
            shared.release();
        }
        await().atMost(WAIT).until(() -> !drain.isAlive());
        assertThat(shared.maxRunning()).isEqualTo(2);
        assertThat(drainThreads.get()).isEqualTo(2);
        assertThat(tracker.dirtySessions()).isEmpty();
    }

    @Test
    void aSessionTheDrainNeverReachedIsReportedNotAttempted() {
        SessionCommitTracker tracker = SessionCommitTracker.builder().drainParallelism(1).build();
        BlockingOwner wedged = new BlockingOwner("wedged");
        tracker.markTurnCompleted("a-wedged", wedged);
        tracker.markTurnCompleted("b-waiting", BlockingOwner.released("b"));
        try {
            SessionDrainReport report = tracker.stop(Duration.ofMillis(300));

            assertThat(report.leftDirty()).containsExactly(
                    new SessionDrainReport.LeftDirty("a-wedged", SessionDrainReport.Reason.TIMED_OUT, null),
                    new SessionDrainReport.LeftDirty("b-waiting", SessionDrainReport.Reason.NOT_ATTEMPTED, null));
            assertThat(report.elapsed()).isLessThan(Duration.ofMillis(300 + LOADED_MACHINE_MARGIN_MILLIS));
        } finally {
            wedged.release();
        }
    }

    @Test
    void aRegisteredWorkerWedgedPastTheDeadlineIsReportedStillRunning() throws InterruptedException {
        SessionCommitTracker tracker = SessionCommitTracker.create();
        BlockingOwner wedged = new BlockingOwner("wedged");
        tracker.markTurnCompleted("s", wedged);
        BackgroundCommit background = tracker.commitInBackground("s");
        try {
            assertThat(wedged.awaitEntered(WAIT)).isTrue();

            SessionDrainReport report = tracker.stop(Duration.ofMillis(300));

            assertThat(report.workersStillRunning()).isEqualTo(1);
            assertThat(report.workersJoined()).isZero();
            assertThat(report.leftDirty()).containsExactly(
                    new SessionDrainReport.LeftDirty("s", SessionDrainReport.Reason.IN_FLIGHT_ELSEWHERE, null));
            assertThat(report.elapsed()).isLessThan(Duration.ofMillis(300 + LOADED_MACHINE_MARGIN_MILLIS));
        } finally {
            wedged.release();
        }
        assertThat(background.awaitDone(WAIT)).isTrue();
        assertThat(tracker.hasUncommittedWork("s")).as("the detached worker still records its commit").isFalse();
    }

    @Test
    void turnsCompletedDuringTheDrainAreCommittedInALaterPass() {
        SessionCommitTracker tracker = SessionCommitTracker.create();
        BlockingOwner late = BlockingOwner.released("late");
        SessionCommitter first = () -> tracker.markTurnCompleted("late", late);
        tracker.markTurnCompleted("first", first);

        SessionDrainReport report = tracker.stop(WAIT);

        assertThat(report.complete()).isTrue();
        assertThat(report.passes()).isEqualTo(2);
        assertThat(report.commits()).isEqualTo(2);
        assertThat(late.calls()).isEqualTo(1);
    }

    @Test
    void backgroundCommitsAreRefusedOnceDrainingAndTheNextDrainCommitsTheWork() {
        SessionCommitTracker tracker = SessionCommitTracker.create();
        tracker.stop(WAIT);
        BlockingOwner agent = BlockingOwner.released("agent");
        tracker.markTurnCompleted("s", agent);

        BackgroundCommit refused = tracker.commitInBackground("s");

        assertThat(refused.status()).isEqualTo(BackgroundCommit.Status.REFUSED_DRAINING);
        assertThat(refused.awaitDone(Duration.ZERO)).isTrue();
        assertThat(agent.calls()).isZero();
        assertThat(tracker.stop(WAIT).commits()).isEqualTo(1);
        assertThat(tracker.hasUncommittedWork("s")).isFalse();
    }

    @Test
    void theBackgroundRegistryIsBounded() {
        SessionCommitTracker tracker = SessionCommitTracker.builder().maxBackgroundCommits(2).build();
        BlockingOwner wedged = new BlockingOwner("wedged");
        List<BackgroundCommit> commits = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                tracker.markTurnCompleted("s" + i, wedged);
                commits.add(tracker.commitInBackground("s" + i));
            }
            assertThat(commits).extracting(BackgroundCommit::status).containsExactly(BackgroundCommit.Status.STARTED,
                    BackgroundCommit.Status.STARTED, BackgroundCommit.Status.REFUSED_FULL);
            assertThat(tracker.backgroundCommits()).hasSize(2);
            assertThat(tracker.commitInBackground("clean").status())
                    .isEqualTo(BackgroundCommit.Status.NOTHING_TO_COMMIT);
        } finally {
            wedged.release();
        }
        commits.forEach(c -> assertThat(c.awaitDone(WAIT)).isTrue());
        assertThat(tracker.backgroundCommits()).isEmpty();
        assertThat(tracker.dirtySessions()).containsExactly("s2");
    }

    @Test
    void workerThreadsComeFromTheInjectedFactoryAndAreDaemons() {
        AtomicInteger made = new AtomicInteger();
        SessionCommitTracker tracker = SessionCommitTracker.builder().threadFactory(r -> {
            Thread t = new Thread(r, "custom-" + made.incrementAndGet());
            t.setDaemon(false);
            return t;
        }).build();
        BlockingOwner agent = new BlockingOwner("agent");
        tracker.markTurnCompleted("s", agent);
        BackgroundCommit commit = tracker.commitInBackground("s");
        try {
            assertThat(commit.worker().getName()).isEqualTo("custom-1");
            assertThat(commit.worker().isDaemon()).as("forced to daemon: never pins the JVM").isTrue();
        } finally {
            agent.release();
        }
        assertThat(commit.awaitDone(WAIT)).isTrue();
        tracker.markTurnCompleted("t", agent);
        tracker.stop(WAIT);
        assertThat(made.get()).as("the drain worker too").isEqualTo(2);
    }
}
