package dev.memlife;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.memlife.internal.Threads;
import dev.memlife.internal.ThrottledLog;
import dev.memlife.testing.GatedProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

/**
 * While writes stream in, the writer lingers for a fuller batch after one that was not full
 * ({@link WriteLoop}); a flush, the drain and a caller waiting for room cut the linger short, and
 * a write that comes after a pause is not held back by it. The writers here linger ten minutes
 * (so any write within ten minutes of the last batch counts as streaming in), and a linger that
 * was not cut short fails the test at its ten-second waits instead of passing late.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class WriterLingerTest {

    private static final long LINGER = TimeUnit.MINUTES.toNanos(10);
    private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final Duration WAIT = Duration.ofNanos(WAIT_NANOS);

    /** Holds {@code w1} at its gate until the test opens it; every other write passes. */
    private final GatedProvider provider = new GatedProvider("gated", t -> t.userContent().equals("w1"));
    private final RegisteredProvider[] route = {new RegisteredProvider(provider, provider.name(), true)};

    private final List<Writer> made = new ArrayList<>();

    private Writer writer(int capacity) {
        Writer w = new Writer(new WriterContext("linger", "l", new WriterContext.Settings(capacity, 16, Long.MAX_VALUE, LINGER),
                Threads.named("linger-writer"), Ticker.system(), new ThrottledLog(LoggerFactory.getLogger(WriterLingerTest.class)),
                new ProviderCalls("linger"), () -> route, null));
        made.add(w);
        return w;
    }

    /** Drains each writer a test made, so no writer thread outlives its test, lingering or parked. */
    @AfterEach
    void drainWriters() {
        provider.open();
        for (Writer w : made) {
            w.drain(System.nanoTime() + WAIT_NANOS);
            Thread t = w.workerThread();
            if (t != null) {
                await().atMost(WAIT).until(() -> !t.isAlive());
            }
        }
    }

    private void write(Writer writer, int n) {
        assertThat(writer.enqueue("s", "w" + n, "a", List.of(), route, WAIT_NANOS)).as("write w%d accepted", n).isTrue();
    }

    /**
     * Writes {@code w1} and holds it in the provider, writes {@code w2..w(1+more)} meanwhile, then
     * lets {@code w1} finish: writes came while the writer delivered, so it lingers with them
     * linked. Returns once it does: parked, with only {@code w1} delivered.
     */
    private void lingerWith(Writer writer, int more) throws InterruptedException {
        write(writer, 1);
        assertThat(provider.awaitHeld(WAIT)).isTrue();
        for (int n = 2; n <= 1 + more; n++) {
            write(writer, n);
        }
        provider.open();
        awaitLingering(writer, 1);
        assertThat(writer.queue().hasLinked()).as("the writes it lingers for").isTrue();
        assertThat(provider.turns()).hasSize(1);
    }

    /**
     * Waits until the writer, having finished {@code finished} writes, lingers: parked without
     * announcing it (a writer parked for work announces it, so that callers wake it).
     */
    private static void awaitLingering(Writer writer, long finished) {
        await().atMost(WAIT).until(() -> writer.queue().finished() == finished
                && writer.workerThread().getState() == Thread.State.TIMED_WAITING && !writer.queue().takerParked);
    }

    /** Waits until the writer, having finished {@code finished} writes, is parked for work. */
    private static void awaitParkedForWork(Writer writer, long finished) {
        await().atMost(WAIT).until(() -> writer.queue().finished() == finished
                && writer.workerThread().getState() == Thread.State.TIMED_WAITING && writer.queue().takerParked);
    }

    private List<String> delivered() {
        return provider.turns().stream().map(Turn::userContent).toList();
    }

    private static List<String> writes(int count) {
        return IntStream.rangeClosed(1, count).mapToObj(n -> "w" + n).toList();
    }

    @Test
    void aFlushCutsTheLingerShortAndSeesEveryWrite() throws Exception {
        Writer writer = writer(100);
        lingerWith(writer, 3);

        assertThat(writer.flush(WAIT_NANOS)).as("flushed within 10 s, not after the 10-minute linger").isTrue();
        assertThat(delivered()).containsExactlyElementsOf(writes(4));
    }

    @Test
    void theDrainCutsTheLingerShort() throws Exception {
        Writer writer = writer(100);
        lingerWith(writer, 3);

        Writer.Outcome outcome = writer.drain(System.nanoTime() + WAIT_NANOS);

        assertThat(outcome.delivered()).isEqualTo(4);
        assertThat(outcome.abandonedIds()).isEmpty();
        assertThat(outcome.stillRunning()).isZero();
        assertThat(delivered()).containsExactlyElementsOf(writes(4));
    }

    @Test
    void aCallerWaitingForRoomCutsTheLingerShort() throws Exception {
        Writer writer = writer(4);
        lingerWith(writer, 4);
        assertThat(writer.queue().isFull()).isTrue();

        write(writer, 6); // waits for room: the writer takes w2..w5 now, not in ten minutes

        assertThat(writer.flush(WAIT_NANOS)).isTrue();
        assertThat(delivered()).containsExactlyElementsOf(writes(6));
    }

    @Test
    void aWriteAfterAPauseIsNotHeldBack() {
        Writer writer = writer(100);
        provider.open();
        write(writer, 1); // the first write of a new writer comes after a pause
        // Nothing came while w1 was delivered: the writer parks for work instead of lingering.
        awaitParkedForWork(writer, 1);

        write(writer, 2); // wakes the parked writer; a lingering one would not see it for ten minutes

        await().atMost(WAIT).until(() -> provider.turns().size() == 2);
        assertThat(delivered()).containsExactlyElementsOf(writes(2));
    }

    @Test
    void aWriteSoonAfterTheLastBatchIsAStreamTheWriterLingersFor() {
        Writer writer = writer(100);
        provider.open();
        write(writer, 1);
        awaitParkedForWork(writer, 1);
        write(writer, 2); // within the linger time of w1's batch: writes stream in

        awaitLingering(writer, 2); // though nothing more was linked while w2 was delivered
        write(writer, 3);
        assertThat(writer.queue().takerParked).as("a lingering writer is not woken by a write").isFalse();

        assertThat(writer.flush(WAIT_NANOS)).isTrue();
        assertThat(delivered()).containsExactlyElementsOf(writes(3));
    }
}
