package dev.memlife.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.Message;
import dev.memlife.Turn;
import dev.memlife.session.SessionCommitTracker;
import dev.memlife.session.SessionDrainReport;
import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Bugs the fault matrix led to that a single (fault, path) cell does not show: each test states
 * the contract it holds the code to. The first three failed on the code the matrix was written
 * against and were fixed on main (8df661d); they now guard those fixes. {@link
 * #sessionDrainWithAFailingThreadFactoryStillReports} still fails. Kept out of {@link
 * FaultMatrixTest} so the matrix stays a green regression suite; nothing here is disabled.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FaultFindingsTest {

    /**
     * {@code stop(d)} returns within {@code d} even if a provider misbehaves in {@code
     * shutdown()}, and concurrent calls share one report. When no shutdown thread can be made,
     * {@code ProviderShutdown.shutDownNow} runs the providers' {@code shutdown()} on the caller's
     * thread; a provider that calls {@code stop} from there (SHUTDOWN_FROM_SHUTDOWN crossed
     * with a failing factory) makes {@code MemoryManager.shutDown} join {@code first.report} — the
     * future that this very thread completes only after the provider returns. It never returns.
     *
     * <p>Had it deadlocked, the stuck call would run on a daemon thread of the test's own, which
     * cannot be freed from outside.
     */
    @Test
    void stopCalledFromAProvidersShutdownReturnsWhenNoThreadCanBeMade() throws Exception {
        MemoryManager m = MemoryManager.builder().name("findings-self-join")
                .threadFactory(r -> {
                    throw new OutOfMemoryError("unable to create native thread (test)");
                }).build();
        CompletableFuture<DrainReport> inner = new CompletableFuture<>();
        m.addProvider(new RecordingProvider("calls-back") {
            @Override
            public void shutdown() {
                inner.complete(m.stop(Duration.ofSeconds(1)));
                super.shutdown();
            }
        });
        CompletableFuture<DrainReport> outer = new CompletableFuture<>();
        Thread caller = new Thread(() -> outer.complete(m.stop(Duration.ofSeconds(1))), "findings-caller");
        caller.setDaemon(true);
        caller.start();

        DrainReport report;
        try {
            report = outer.get(1_000 + FaultMatrixTest.MARGIN.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError("stop(1s) had not returned after 3 s: the provider's own stop, on "
                    + "the caller's thread, joins the report that thread has yet to complete. Caller:"
                    + stack(caller), e);
        }
        // From inside its own shutdown() the provider gets the report as it stood before the providers' shutdown.
        DrainReport fromInside = inner.getNow(null);
        assertThat(fromInside).isNotNull();
        assertThat(fromInside.providersNotShutDown()).containsExactly("calls-back");
        assertThat(report.providersNotShutDown()).isEmpty();
    }

    /**
     * {@code stop}'s contract (and {@code ProviderShutdown}'s) is "every provider's {@code
     * shutdown()} once, in reverse registration order". A provider whose shutdown is deferred
     * because the writer still holds it (a write past the deadline) is shut down by {@code
     * Writer.releaseLeases()}, which walks the providers in registration order: first, second,
     * third.
     */
    @Test
    void providersShutDownAfterAWritePastTheDeadlineAreShutDownInReverseRegistrationOrder() throws Exception {
        List<String> order = new CopyOnWriteArrayList<>();
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        MemoryManager m = MemoryManager.builder().name("findings-order").build();
        m.addProvider(new RecordingProvider("first") {
            @Override
            public void syncTurn(Turn turn) {
                held.countDown();
                try {
                    release.await(20, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }

            @Override
            public void shutdown() {
                order.add(name());
            }
        });
        for (String name : List.of("second", "third")) {
            m.addProvider(new RecordingProvider(name) {
                @Override
                public void shutdown() {
                    order.add(name());
                }
            });
        }
        DrainReport report;
        try {
            assertThat(m.syncAll("u", "held past the deadline", "s")).isTrue();
            assertThat(held.await(10, TimeUnit.SECONDS)).isTrue();
            report = m.stop(Duration.ofMillis(100));
        } finally {
            release.countDown();
        }
        assertThat(report.providersShutDownLater()).containsExactlyInAnyOrder("first", "second", "third");
        FaultMatrixTest.eventually().until(() -> order.size() == 3);

        assertThat(order).as("shutdown order").containsExactly("third", "second", "first");
    }

    /**
     * Whatever a provider does in a hook is that provider's business: the write path clears an
     * interrupt flag a provider leaves set and counts it, "so it cannot fail the next provider's
     * I/O". The caller-thread hooks ({@code MemoryManager.forEachProvider}: {@code onSessionEnd},
     * {@code initializeAll}; likewise {@code callLeased}) do not: the next provider's extraction
     * starts interrupted (a JDBC or NIO call in it then fails), and so does the caller's next
     * blocking call — e.g. the {@code stop()} that follows extraction in a teardown, whose
     * drain then ends at once and abandons what it had the budget to deliver.
     */
    @Test
    void anInterruptAProviderLeavesInOnSessionEndReachesNeitherTheNextProviderNorTheCaller() {
        List<Boolean> nextSawInterrupt = new CopyOnWriteArrayList<>();
        MemoryManager m = MemoryManager.builder().name("findings-interrupt").build();
        m.addProvider(new RecordingProvider("interrupts") {
            @Override
            public void onSessionEnd(List<Message> messages) {
                Thread.currentThread().interrupt();
            }
        });
        m.addProvider(new RecordingProvider("next") {
            @Override
            public void onSessionEnd(List<Message> messages) {
                nextSawInterrupt.add(Thread.currentThread().isInterrupted());
            }
        });
        boolean callerInterrupted;
        try {
            m.onSessionEnd(List.of(Message.user("bye")));
        } finally {
            callerInterrupted = Thread.interrupted(); // clears it: this thread runs JUnit's next step
            m.stop(Duration.ofSeconds(1));
        }

        assertThat(nextSawInterrupt).as("the next provider's extraction started interrupted").containsExactly(false);
        assertThat(callerInterrupted).as("the caller's thread came back interrupted").isFalse();
    }

    /**
     * {@code SessionCommitTracker.stop} promises "the sessions left dirty and why" by the
     * deadline. With a thread factory that fails, {@code SessionDrain.startPass} calls {@code
     * tracker.newThread(..).start()} outside any try: the factory's exception leaves {@code
     * stop}, no report is made, the session is never attempted, and the tracker stays draining
     * for good (every later background commit is refused). The manager and the agent fall back to
     * the caller's thread when no thread can be made; the tracker could commit there too, or at
     * least report the session {@code NOT_ATTEMPTED}.
     */
    @Test
    void sessionDrainWithAFailingThreadFactoryStillReports() {
        SessionCommitTracker tracker = SessionCommitTracker.builder().name("findings-tracker").threadFactory(r -> {
            throw new IllegalStateException("thread factory refuses on purpose");
        }).build();
        List<String> commits = new CopyOnWriteArrayList<>();
        tracker.markTurnCompleted("s", () -> commits.add("s"));

        SessionDrainReport report;
        try {
            report = tracker.stop(Duration.ofSeconds(1));
        } catch (RuntimeException e) {
            throw new AssertionError("stop threw instead of reporting; session 's' dirty="
                    + tracker.hasUncommittedWork("s") + ", tracker draining=" + tracker.isDraining(), e);
        }
        assertThat(report.complete() || report.leftDirtyIds().contains("s")).as("%s", report).isTrue();
    }

    private static String stack(Thread t) {
        StringBuilder out = new StringBuilder();
        for (StackTraceElement e : t.getStackTrace()) {
            out.append("\n    at ").append(e);
        }
        return out.toString();
    }
}
