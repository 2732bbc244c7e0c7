package dev.memlife;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownMode;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.gateway.AgentLease;
import dev.memlife.gateway.ResetResult;
import dev.memlife.internal.Events;
import dev.memlife.spool.Spool;
import dev.memlife.testing.FailingProvider;
import dev.memlife.testing.GatedProvider;
import dev.memlife.testing.RecordingProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import jdk.jfr.Configuration;
import jdk.jfr.EventType;
import jdk.jfr.Recording;
import jdk.jfr.SettingDescriptor;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * memlife's flight-recorder events ({@link Events}), read back from a real recording file: each is
 * emitted where the operation happens, with its figures, and the default settings keep the slow
 * ones and leave the fast ones out. Events are told apart from other tests' by the unique manager,
 * agent or gateway name each test uses.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FlightRecorderEventsTest {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final List<String> EVENTS = List.of("dev.memlife.Flush", "dev.memlife.Drain", "dev.memlife.Batch",
            "dev.memlife.Teardown", "dev.memlife.Reset", "dev.memlife.SpoolCommit");

    @TempDir
    Path dir;

    private Recording recording;

    @AfterEach
    void closeRecording() {
        if (recording != null) {
            recording.close();
        }
    }

    /** Starts a recording of every memlife event, whatever it took. */
    private void recordEverything() {
        recording = new Recording();
        for (String name : EVENTS) {
            recording.enable(name).withThreshold(Duration.ZERO);
        }
        recording.start();
    }

    /** Stops the recording and reads back the events of {@code type} whose {@code field} is {@code value}. */
    private List<RecordedEvent> recorded(String type, String field, String value) throws IOException {
        recording.stop();
        Path file = Files.createTempFile(dir, "memlife", ".jfr");
        recording.dump(file);
        return RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals(type))
                .filter(e -> value.equals(e.getString(field)))
                // by start: a recording is read in the order threads' buffers were written out, not in
                // the order events began (two flushes on two threads came out the wrong way round)
                .sorted(Comparator.comparing(RecordedEvent::getStartTime))
                .collect(Collectors.toList());
    }

    @Test
    void aFlushThatWaitsIsRecordedWithItsFiguresAndOneThatReturnsAtOnceIsNot() throws Exception {
        GatedProvider gate = new GatedProvider("gate");
        MemoryManager memory = MemoryManager.builder().name("jfr-flush").build();
        memory.addProvider(gate);
        recordEverything();

        memory.syncAll("u1", "a", "s");
        assertThat(gate.awaitHeld(WAIT)).isTrue();
        memory.syncAll("u2", "a", "s");
        memory.syncAll("u3", "a", "s");
        boolean timedOut = memory.flushPending(Duration.ofMillis(30));
        CompletableFuture<Boolean> waiting = CompletableFuture.supplyAsync(() -> memory.flushPending(WAIT));
        await().atMost(WAIT).until(() -> memory.figures().flushWaits() == 2); // the second flush waits
        gate.open();
        boolean met = waiting.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        boolean idle = memory.flushPending(WAIT); // nothing pending: returns at once, records nothing
        memory.stop();

        assertThat(timedOut).isFalse();
        assertThat(met).isTrue();
        assertThat(idle).isTrue();
        List<RecordedEvent> flushes = recorded("dev.memlife.Flush", "manager", "jfr-flush");
        assertThat(flushes).hasSize(2);
        RecordedEvent first = flushes.get(0);
        assertThat(first.getLong("writes")).isEqualTo(3);
        assertThat(first.getBoolean("met")).isFalse();
        assertThat(first.getDuration("timeout")).isEqualTo(Duration.ofMillis(30));
        assertThat(first.getDuration()).isGreaterThanOrEqualTo(Duration.ofMillis(25));
        assertThat(first.getStackTrace()).as("the caller's stack, to find who waited").isNotNull();
        RecordedEvent second = flushes.get(1);
        assertThat(second.getBoolean("met")).isTrue();
        assertThat(second.getLong("writes")).isEqualTo(3);
        assertThat(second.getDuration("timeout")).isEqualTo(WAIT);
    }

    /**
     * The flush a teardown and every commit start with usually finds nothing pending: it returns
     * before any event exists, so it allocates nothing, even while a recording runs. (The JVM
     * itself may allocate a few kilobytes on the thread now and then, e.g. while it compiles; an
     * event per flush would be over a megabyte here.)
     */
    @Test
    void aFlushThatReturnsAtOnceAllocatesNothing() {
        MemoryManager memory = MemoryManager.builder().name("jfr-idle-flush").build();
        memory.addProvider(new RecordingProvider("store"));
        memory.syncAll("u", "a", "s");
        assertThat(memory.flushPending(WAIT)).isTrue();
        recordEverything();
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        int flushes = 100_000;
        idleFlushes(memory, flushes); // warm up

        long before = threads.getCurrentThreadAllocatedBytes();
        int met = idleFlushes(memory, flushes);
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;

        assertThat(met).isEqualTo(flushes);
        assertThat(allocated).as("bytes allocated by " + flushes + " idle flushes").isLessThan(flushes / 10);
        memory.stop();
    }

    private static int idleFlushes(MemoryManager memory, int n) {
        int met = 0;
        for (int i = 0; i < n; i++) {
            met += memory.flushPending(WAIT) ? 1 : 0;
        }
        return met;
    }

    @Test
    void aDrainThatMissesItsDeadlineIsRecordedWithWhatItLeft() throws Exception {
        GatedProvider gate = new GatedProvider("gate");
        MemoryManager memory = MemoryManager.builder().name("jfr-drain").build();
        memory.addProvider(gate);
        memory.syncAll("held", "a", "s");
        assertThat(gate.awaitHeld(WAIT)).isTrue();
        for (int i = 0; i < 4; i++) {
            memory.syncAll("queued-" + i, "a", "s");
        }
        recordEverything();

        DrainReport report = memory.stop(Duration.ofMillis(200));
        gate.open();

        assertThat(report.abandoned()).isEqualTo(4);
        assertThat(report.stillRunning()).isEqualTo(1);
        List<RecordedEvent> drains = recorded("dev.memlife.Drain", "manager", "jfr-drain");
        assertThat(drains).hasSize(1);
        RecordedEvent drain = drains.get(0);
        assertThat(drain.getLong("pending")).isEqualTo(5);
        assertThat(drain.getLong("delivered")).isZero();
        assertThat(drain.getLong("failed")).isZero();
        assertThat(drain.getLong("abandoned")).isEqualTo(4);
        assertThat(drain.getLong("stillRunning")).isEqualTo(1);
        // stop(200 ms) keeps a tenth for the providers' shutdown: the drain gets what is left of 180 ms.
        assertThat(drain.getDuration("budget")).isBetween(Duration.ofMillis(100), Duration.ofMillis(180));
        assertThat(drain.getDuration()).isGreaterThanOrEqualTo(Duration.ofMillis(100));
    }

    @Test
    void aBatchIsRecordedWithItsWritesAndFailures() throws Exception {
        GatedProvider gate = new GatedProvider("gate", t -> t.userContent().equals("hold"));
        FailingProvider failing = FailingProvider.failingWrites("failing", t -> t.userContent().equals("bad"));
        MemoryManager memory = MemoryManager.builder().name("jfr-batch").build();
        memory.addProvider(gate);
        memory.addProvider(failing);
        recordEverything();

        memory.syncAll("hold", "a", "s");
        assertThat(gate.awaitHeld(WAIT)).isTrue();
        memory.syncAll("ok", "a", "s");
        memory.syncAll("bad", "a", "s");
        memory.syncAll("ok again", "a", "s");
        gate.open(); // the writer finishes "hold", then takes the three queued writes as one batch
        assertThat(memory.flushPending(WAIT)).isTrue();
        Thread writer = memory.writerThread();
        memory.stop();
        // The writer records a batch after publishing its last write: the flush may return first.
        writer.join(WAIT.toMillis());
        assertThat(writer.isAlive()).as("the writer of a shut-down manager ends").isFalse();

        List<RecordedEvent> batches = recorded("dev.memlife.Batch", "manager", "jfr-batch");
        assertThat(batches).extracting(e -> e.getLong("writes")).containsExactly(1L, 3L);
        assertThat(batches).extracting(e -> e.getLong("failed")).containsExactly(0L, 1L);
        assertThat(batches).extracting(e -> e.getLong("abandoned")).containsExactly(0L, 0L);
        assertThat(batches.get(0).getStackTrace()).as("the writer's stack says nothing").isNull();
    }

    @Test
    void aTeardownThatRanIsRecordedWithItsModeAndFiguresAndOneThatLostTheClaimIsNot() throws Exception {
        FailingProvider failing = FailingProvider.failingWrites("failing", t -> t.userContent().equals("bad"));
        MemoryManager memory = MemoryManager.builder().name("jfr-teardown").build();
        memory.addProvider(failing);
        AgentMemory agent = AgentMemory.create(memory);
        memory.syncAll("good", "a", "s");
        memory.syncAll("bad", "a", "s");
        recordEverything();

        agent.release();
        agent.close(); // the release owns the agent: this call does nothing

        List<RecordedEvent> teardowns = recorded("dev.memlife.Teardown", "agent", "jfr-teardown");
        assertThat(teardowns).hasSize(1);
        RecordedEvent t = teardowns.get(0);
        assertThat(t.getString("mode")).isEqualTo("RELEASE");
        assertThat(t.getBoolean("flushed")).isTrue();
        assertThat(t.getString("extraction")).isEqualTo("NOT_RUN");
        assertThat(t.getLong("delivered")).isEqualTo(1);
        assertThat(t.getLong("failed")).isEqualTo(1);
        assertThat(t.getLong("abandoned")).isZero();
        assertThat(t.getLong("stillRunning")).isZero();
        assertThat(t.getInt("providersNotShutDown")).isZero();
        assertThat(t.getString("failure")).isNull();
    }

    @Test
    void aResetOfACachedAgentIsRecordedAndOneOfAnUnknownKeyIsNot() throws Exception {
        AgentGateway gateway = AgentGateway.builder().name("jfr-gateway").build();
        RecordingProvider store = new RecordingProvider("store");
        try (AgentLease lease = gateway.acquire("chat-1", key -> {
            MemoryManager m = MemoryManager.builder().name("jfr-agent-" + key).build();
            m.useProvider(store);
            return AgentMemory.create(m);
        })) {
            lease.agent().memory().syncAll("u", "a", "chat-1");
        }
        recordEverything();

        ResetResult reset = gateway.reset("chat-1");
        ResetResult unknown = gateway.reset("chat-2");
        gateway.stop(WAIT);

        assertThat(reset.status()).isEqualTo(ResetResult.Status.CLOSED);
        assertThat(unknown.status()).isEqualTo(ResetResult.Status.NOT_CACHED);
        List<RecordedEvent> resets = recorded("dev.memlife.Reset", "gateway", "jfr-gateway");
        assertThat(resets).hasSize(1);
        assertThat(resets.get(0).getString("key")).isEqualTo("chat-1");
        assertThat(resets.get(0).getString("agent")).isEqualTo("jfr-agent-chat-1");
        assertThat(resets.get(0).getString("status")).isEqualTo("CLOSED");
    }

    @Test
    void aSpoolGroupCommitIsRecordedWithTheWritesAndBytesItForced() throws Exception {
        Path spoolDir = dir.resolve("spool");
        MemoryManager memory = MemoryManager.builder().name("jfr-spool").spool(Spool.open(spoolDir)).build();
        memory.addProvider(new RecordingProvider("store"));
        recordEverything();

        for (int i = 0; i < 3; i++) {
            assertThat(memory.syncAllDurable("u" + i, "a", "s", List.of(), WAIT)).isEqualTo(Durability.DURABLE);
        }
        memory.stop();

        List<RecordedEvent> commits = recorded("dev.memlife.SpoolCommit", "manager", "jfr-spool");
        assertThat(commits).isNotEmpty();
        assertThat(commits.stream().mapToLong(e -> e.getLong("writes")).sum()).isEqualTo(3);
        assertThat(commits).allSatisfy(e -> {
            assertThat(e.getLong("bytes")).isPositive();
            assertThat(e.getString("directory")).isEqualTo(spoolDir.toString());
            assertThat(e.getBoolean("failed")).isFalse();
            assertThat(e.getInt("segmentsStarted")).isZero();
        });
    }

    /**
     * One commit that forces several writes counts them all: the three writes a provider failed
     * in one run are carried into the next run's segment by one commit when the next manager
     * attaches the spool.
     */
    @Test
    void aGroupCommitOfSeveralWritesCountsThemAll() throws Exception {
        Path spoolDir = dir.resolve("carried");
        FailingProvider down = FailingProvider.failingWrites("store", t -> true);
        MemoryManager first = MemoryManager.builder().name("jfr-carry").spool(Spool.open(spoolDir)).build();
        first.addProvider(down);
        for (int i = 0; i < 3; i++) {
            first.syncAll("u" + i, "a", "s");
        }
        assertThat(first.stop().failed()).isEqualTo(3);
        recordEverything();

        MemoryManager second = MemoryManager.builder().name("jfr-carry-next").spool(Spool.open(spoolDir)).build();
        second.stop(); // no write: the three stay in the spool for the next start

        List<RecordedEvent> commits = recorded("dev.memlife.SpoolCommit", "manager", "jfr-carry-next");
        assertThat(commits).hasSize(1);
        assertThat(commits.get(0).getLong("writes")).isEqualTo(3);
        assertThat(commits.get(0).getString("directory")).isEqualTo(spoolDir.toString());
        assertThat(commits.get(0).getBoolean("closing")).isFalse();
    }

    @Test
    void everyEventIsOnByDefaultAtATenMillisecondThreshold() {
        for (Class<? extends jdk.jfr.Event> type : List.of(Events.Flush.class, Events.Drain.class, Events.Batch.class,
                Events.Teardown.class, Events.Reset.class, Events.SpoolCommit.class)) {
            EventType eventType = EventType.getEventType(type);
            Map<String, String> defaults = eventType.getSettingDescriptors().stream()
                    .collect(Collectors.toMap(SettingDescriptor::getName, SettingDescriptor::getDefaultValue));
            assertThat(EVENTS).contains(eventType.getName());
            assertThat(eventType.getCategoryNames()).containsExactly("memlife");
            assertThat(eventType.getLabel()).isNotBlank();
            assertThat(eventType.getDescription()).isNotBlank();
            assertThat(defaults).as(eventType.getName()).containsEntry("enabled", "true")
                    .containsEntry("threshold", "10 ms");
        }
    }

    /**
     * With the JDK's default recording settings (which do not name memlife's events), a slow flush
     * is recorded and fast teardowns are left out. A teardown of an idle agent takes well under a
     * millisecond, but a busy machine may stall one past 10 ms now and then: the test asks that
     * most are left out, and would fail if none were.
     */
    @Test
    void theDefaultSettingsKeepASlowFlushAndLeaveFastTeardownsOut() throws Exception {
        recording = new Recording(Configuration.getConfiguration("default"));
        recording.start();

        GatedProvider gate = new GatedProvider("gate");
        MemoryManager slow = MemoryManager.builder().name("jfr-default").build();
        slow.addProvider(gate);
        slow.syncAll("u", "a", "s");
        assertThat(gate.awaitHeld(WAIT)).isTrue();
        assertThat(slow.flushPending(Duration.ofMillis(50))).isFalse();
        gate.open();
        slow.stop();
        int fast = 20;
        for (int i = 0; i < fast; i++) {
            AgentMemory.create(MemoryManager.builder().name("jfr-default").build()).release();
        }

        recording.stop();
        Path file = dir.resolve("default.jfr");
        recording.dump(file);
        List<RecordedEvent> mine = RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().startsWith("dev.memlife."))
                .filter(e -> "jfr-default".equals(e.getString(e.hasField("agent") ? "agent" : "manager")))
                .collect(Collectors.toList());
        assertThat(mine).filteredOn(e -> e.getEventType().getName().equals("dev.memlife.Flush")).hasSize(1);
        assertThat(mine).filteredOn(e -> e.getEventType().getName().equals("dev.memlife.Teardown"))
                .hasSizeLessThanOrEqualTo(fast / 2);
    }
}
