package dev.memlife;

import static dev.memlife.HeldWrites.awaitQuietly;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code stop} called by a provider from inside a write, on the manager that is running that
 * write: it cannot wait for its own write, so it returns at once with that write still running,
 * and a host's {@code stop} running at the same time is not held to its deadline either.
 */
@Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ReentrantStopTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    /**
     * A provider that calls {@code stop(3 s)} on its own manager from inside the write
     * {@code "stop"}, after {@code before} lets it, and records how long that took.
     */
    private static final class ShutsDownFromInside extends RecordingProvider {
        final CountDownLatch inside = new CountDownLatch(1);
        final CountDownLatch before = new CountDownLatch(1);
        final CompletableFuture<DrainReport> report = new CompletableFuture<>();
        volatile long millis = -1;
        volatile MemoryManager manager;

        ShutsDownFromInside(boolean waitFirst) {
            super("reentrant");
            if (!waitFirst) {
                before.countDown();
            }
        }

        @Override
        public void syncTurn(Turn turn) {
            super.syncTurn(turn);
            if (turn.assistantContent().equals("stop")) {
                inside.countDown();
                awaitQuietly(before);
                long start = System.nanoTime();
                report.complete(manager.stop(Duration.ofSeconds(3)));
                millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            }
        }
    }

    /**
     * Regression (reliability issue, defect 8, first half): {@code stop} from inside a write
     * waited for itself for its whole deadline.
     */
    @Test
    void shutdownFromInsideAWriteDoesNotWaitForItself() throws Exception {
        ShutsDownFromInside provider = new ShutsDownFromInside(true);
        MemoryManager m = MemoryManager.create();
        provider.manager = m;
        m.addProvider(provider);
        m.syncAll("u", "stop", "s");
        assertThat(m.syncAll("u", "after", "s")).as("queued behind the write that shuts down").isTrue();
        provider.before.countDown();

        DrainReport report = provider.report.get(10, TimeUnit.SECONDS);

        assertThat(provider.millis).as("a re-entrant stop(3 s)").isLessThan(1_500);
        assertThat(report.stillRunningWriteIds()).as("%s", report).hasSize(1);
        assertThat(report.abandoned()).as("the write behind it, never started: %s", report).isEqualTo(1);
        assertThat(m.stop()).isSameAs(report);
    }

    /**
     * Regression (reliability issue, defect 8, second half): a host's {@code stop} that is
     * running while a provider calls {@code stop} from inside a write used to hold both until the
     * host's deadline; the writer cannot drain while it waits, so the shared deadline becomes now.
     */
    @Test
    void aReentrantShutdownBringsTheHostsDeadlineForward() throws Exception {
        ShutsDownFromInside provider = new ShutsDownFromInside(true);
        MemoryManager m = MemoryManager.create();
        provider.manager = m;
        m.addProvider(provider);
        m.syncAll("u", "stop", "s");
        assertThat(provider.inside.await(10, TimeUnit.SECONDS)).isTrue();

        long start = System.nanoTime();
        CompletableFuture<DrainReport> host = CompletableFuture.supplyAsync(() -> m.stop(Duration.ofSeconds(20)));
        await().atMost(WAIT).until(m::isShutdown);
        provider.before.countDown();
        DrainReport report = host.get(10, TimeUnit.SECONDS);
        long hostMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

        assertThat(hostMillis).as("host shutdown, not held to its 20 s deadline nor the provider's 3 s").isLessThan(2_000);
        assertThat(provider.report.get(10, TimeUnit.SECONDS)).isSameAs(report);
        assertThat(report.stillRunningWriteIds()).hasSize(1);
    }
}
