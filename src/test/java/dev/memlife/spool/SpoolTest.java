package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.Message;
import dev.memlife.SpoolFigures;
import dev.memlife.Turn;
import dev.memlife.spool.SegmentBytes.Contents;
import dev.memlife.testing.FailingProvider;
import dev.memlife.testing.GatedProvider;
import dev.memlife.testing.RecordingProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Spool} under a {@link MemoryManager}: what a crash leaves is replayed in order with its
 * ids, delivered segments are deleted, the bound is kept, damage is reported and skipped. A crash
 * is played in process by copying the spool's files while its manager runs: that is what {@code
 * kill -9} leaves on disk (the page cache survives it); the child-JVM tests kill for real.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SpoolTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path tmp;

    /** The spool's files as a crash would leave them: everything but the lock, copied now. */
    static void crashImage(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                if (!f.getFileName().toString().equals(SpoolFiles.LOCK_FILE)) {
                    Files.copy(f, to.resolve(f.getFileName()));
                }
            }
        }
    }

    static List<String> ids(List<Turn> turns) {
        return turns.stream().map(Turn::writeId).collect(Collectors.toList());
    }

    static List<String> users(List<Turn> turns) {
        return turns.stream().map(Turn::userContent).collect(Collectors.toList());
    }

    private static List<String> expectedIds(String prefix, int fromSeq, int toSeq) {
        return IntStream.rangeClosed(fromSeq, toSeq).mapToObj(i -> prefix + ':' + i).collect(Collectors.toList());
    }

    private static String prefixOf(Turn t) {
        return t.writeId().substring(0, t.writeId().lastIndexOf(':'));
    }

    @Test
    void undeliveredWritesAreReplayedInOrderWithTheirIdsContentsAndMessages() throws Exception {
        Path dir = tmp.resolve("a");
        Spool spool = Spool.open(dir);
        GatedProvider held = new GatedProvider("store", t -> Integer.parseInt(t.userContent().substring(1)) >= 50);
        MemoryManager first = MemoryManager.builder().name("first").spool(spool).build();
        first.addProvider(held);
        for (int i = 0; i < 100; i++) {
            List<Message> messages = i % 3 == 0 ? List.of(Message.user("u" + i), Message.assistant("é✓ " + i)) : List.of();
            assertThat(first.syncAll("u" + i, "a" + i, "s" + (i % 4), messages)).isTrue();
        }
        assertThat(first.awaitDurable(WAIT)).isTrue();
        assertThat(held.awaitHeld(WAIT)).isTrue(); // u0..u49 delivered, u50 held
        await().atMost(WAIT).until(() -> spool.log().markWritten() == spool.log().deliveredPosition());
        String prefix = prefixOf(held.turns().get(0));
        Path image = tmp.resolve("crash");
        crashImage(dir, image);

        RecordingProvider store = new RecordingProvider("store");
        MemoryManager second = MemoryManager.builder().name("second").spool(Spool.open(image)).build();
        second.addProvider(store);
        assertThat(second.figures().spool().backlog()).isEqualTo(50);
        assertThat(second.replaySpool()).isEqualTo(50);
        assertThat(second.flushPending(WAIT)).isTrue();
        assertThat(ids(store.turns())).isEqualTo(expectedIds(prefix, 51, 100));
        assertThat(users(store.turns())).isEqualTo(IntStream.range(50, 100).mapToObj(i -> "u" + i).toList());
        Turn u51 = store.turns().get(1);
        assertThat(u51.sessionId()).isEqualTo("s3");
        assertThat(u51.assistantContent()).isEqualTo("a51");
        assertThat(u51.messages()).containsExactly(Message.user("u51"), Message.assistant("é✓ 51"));
        // New writes come after the replayed ones, under the new run's ids.
        second.syncAll("new", "a", "s0");
        assertThat(second.flushPending(WAIT)).isTrue();
        assertThat(store.turns()).hasSize(51);
        assertThat(store.turns().get(50).writeId()).doesNotStartWith(prefix);
        SpoolFigures figures = second.figures().spool();
        assertThat(figures.replayed()).isEqualTo(50);
        assertThat(figures.appended()).isEqualTo(1);
        assertThat(figures.backlog()).isZero();
        DrainReport report = second.stop();
        assertThat(report.delivered()).isEqualTo(51);
        assertThat(segments(image)).as("every write delivered: no segment left").isEmpty();

        held.open();
        first.stop();
        assertThat(held.turns()).hasSize(100);
        assertThat(segments(dir)).isEmpty();
    }

    @Test
    void writesFillSegmentsOfAtMostTheirSizeInNumberOrderAndAreReplayedAcrossThem() throws Exception {
        // Many writes a commit, so one commit's records start several segments: each is sealed at
        // its bound, and the next one numbered after it.
        int segmentBytes = 4096;
        List<String> replies = IntStream.range(0, 300).mapToObj(i -> i == 150 ? "r".repeat(3 * segmentBytes) // larger than a segment
                : "r" + i + "x".repeat(i % 250)).toList();
        FirstDelivered run = FirstDelivered.write(tmp, Spool.builder(tmp.resolve("rolls")).segmentBytes(segmentBytes),
                replies);

        SpoolInspection inspection = SpoolInspection.of(run.image());
        assertThat(inspection.segments()).hasSizeGreaterThan(10);
        long number = inspection.segments().get(0).number();
        for (SpoolInspection.Segment s : inspection.segments()) {
            assertThat(s.number()).as("segments numbered one after another").isEqualTo(number++);
            assertThat(s.damage()).isEmpty();
            if (s.records() > 1) {
                assertThat(s.bytes()).as("%s", s).isLessThanOrEqualTo(segmentBytes);
            }
        }
        assertThat(inspection.records()).isEqualTo(300);
        run.assertReplaysAllButTheFirst(replies);
    }

    @Test
    @Timeout(60)
    void aReplayQueuesAtMostTwoBatchesAheadOfTheWriterThoughTheQueueHasRoomForAll() throws Exception {
        Path dir = tmp.resolve("ahead");
        HeldRun crashed = HeldRun.write(dir, 5_000, "u");
        Path image = tmp.resolve("ahead-crash");
        crashImage(dir, image);
        GatedProvider store = new GatedProvider("store", t -> t.userContent().equals("u0"));
        MemoryManager second = MemoryManager.builder().name("second").spool(Spool.open(image)).queueCapacity(20_000)
                .maxBatchSize(100).build();
        second.addProvider(store);
        AtomicLong replayed = new AtomicLong(-1);
        Thread replay = new Thread(() -> replayed.set(second.replaySpool()), "replay");
        replay.start();
        assertThat(store.awaitHeld(WAIT)).isTrue(); // the writer holds its first batch of 100, u0 at the gate
        // The replay thread then waits for the writer (timed waits on the queue's condition), or,
        // were the read-ahead bounded by the queue's capacity only, has queued all 5,000 and ended.
        await().atMost(WAIT).until(() -> replay.getState() == Thread.State.TIMED_WAITING
                || replay.getState() == Thread.State.TERMINATED);
        assertThat(second.pendingWrites()).as("two batches queued, and the batch at the gate (at most 100)")
                .isBetween(201L, 300L);

        store.open();
        replay.join(WAIT.toMillis());
        assertThat(replayed).hasValue(5_000);
        assertThat(second.flushPending(WAIT)).isTrue();
        assertThat(users(store.turns())).isEqualTo(IntStream.range(0, 5_000).mapToObj(i -> "u" + i).toList());
        second.stop();
        crashed.store().open();
        crashed.manager().stop(Duration.ZERO);
    }

    @Test
    @Timeout(60)
    void aProviderThatWritesBackDuringTheReplayIsNotHeldBehindItAndCannotStartItAgain() throws Exception {
        // The provider's write runs on the writer thread, while the replay waits for that thread to
        // take what it queued: waiting for the replay there would wait for itself.
        Path dir = tmp.resolve("echo");
        HeldRun crashed = HeldRun.write(dir, 5_000, "u");
        Path image = tmp.resolve("echo-crash");
        crashImage(dir, image);
        AtomicReference<MemoryManager> manager = new AtomicReference<>();
        AtomicReference<Throwable> replayFromProvider = new AtomicReference<>();
        RecordingProvider store = new RecordingProvider("store") {
            @Override
            public void syncTurn(Turn turn) {
                super.syncTurn(turn);
                if (turn.userContent().equals("u10")) {
                    manager.get().syncAll("echo", "of u10", "s");
                    replayFromProvider.set(catchThrowable(() -> manager.get().replaySpool()));
                }
            }
        };
        manager.set(MemoryManager.builder().name("second").spool(Spool.open(image)).maxBatchSize(100).build());
        manager.get().addProvider(store);
        AtomicLong replayed = new AtomicLong(-1);
        Thread replay = new Thread(() -> replayed.set(manager.get().replaySpool()), "replay");
        replay.start();
        replay.join(WAIT.toMillis());

        assertThat(replay.isAlive()).as("the replay finished").isFalse();
        assertThat(replayed).hasValue(5_000);
        assertThat(manager.get().flushPending(WAIT)).isTrue();
        List<String> users = users(store.turns());
        assertThat(users).filteredOn(u -> !u.equals("echo"))
                .isEqualTo(IntStream.range(0, 5_000).mapToObj(i -> "u" + i).toList());
        assertThat(users).containsOnlyOnce("echo");
        assertThat(users.indexOf("echo")).isGreaterThan(users.indexOf("u10"));
        assertThat(replayFromProvider.get()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("called by a provider, on the writer thread, while the replay runs");
        manager.get().stop();
        crashed.store().open();
        crashed.manager().stop(Duration.ZERO);
    }

    @Test
    void aSegmentLargerThanAReadChunkIsReplayedWholeWithRecordsLargerThanAChunk() throws Exception {
        // Open and replay read a segment a chunk at a time (SegmentWindow.CHUNK, 1 MiB): these
        // writes fill a 4 MiB segment with records that straddle chunks, and two larger than one.
        List<String> replies = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            int length = i == 100 || i == 300 ? SegmentWindow.CHUNK + 12_345 : 5_000 + 37 * i;
            replies.add(i + ":" + "é".repeat(length / 2));
        }
        FirstDelivered run = FirstDelivered.write(tmp, Spool.builder(tmp.resolve("big")).segmentBytes(16 << 20),
                replies);
        assertThat(segments(run.image())).singleElement().satisfies(
                segment -> assertThat(Files.size(segment)).isGreaterThan(4L * SegmentWindow.CHUNK));

        run.assertReplaysAllButTheFirst(replies);
        assertThat(SpoolInspection.of(run.image()).pending()).as("every replayed write delivered").isZero();
    }

    @Test
    void theFirstWriteReplaysBeforeItIsQueued() throws Exception {
        Path dir = tmp.resolve("a");
        HeldRun run = HeldRun.write(dir, 10, "old");
        GatedProvider held = run.store();
        MemoryManager first = run.manager();
        crashImage(dir, tmp.resolve("crash"));

        RecordingProvider store = new RecordingProvider("store");
        MemoryManager second = MemoryManager.builder().spool(Spool.open(tmp.resolve("crash"))).build();
        second.addProvider(store);
        second.syncAll("new", "a", "s");
        assertThat(second.flushPending(WAIT)).isTrue();
        assertThat(users(store.turns())).containsExactly("old0", "old1", "old2", "old3", "old4", "old5", "old6",
                "old7", "old8", "old9", "new");
        assertThat(second.replaySpool()).as("the replay runs once").isZero();
        second.stop();
        held.open();
        first.stop();
    }

    @Test
    void deliveredSegmentsAreDeletedAndTheSpoolStaysSmall() throws Exception {
        Path dir = tmp.resolve("a");
        Spool spool = Spool.builder(dir).segmentBytes(4096).open();
        RecordingProvider store = new RecordingProvider("store");
        MemoryManager manager = MemoryManager.builder().spool(spool).build();
        manager.addProvider(store);
        for (int i = 0; i < 2_000; i++) {
            manager.syncAll("turn " + i, "reply " + i, "s");
            if (i % 100 == 99) {
                assertThat(manager.awaitDurable(WAIT)).isTrue();
            }
        }
        assertThat(manager.flushPending(WAIT)).isTrue();
        await().atMost(WAIT).untilAsserted(() -> {
            SpoolFigures f = manager.figures().spool();
            assertThat(f.backlog()).isZero();
            assertThat(f.segments()).as("%s, files %s", f, segments(dir)).isLessThanOrEqualTo(2);
            assertThat(segments(dir).size()).isLessThanOrEqualTo(2);
        });
        SpoolFigures f = manager.figures().spool();
        assertThat(f.appended()).isEqualTo(2_000);
        assertThat(f.groupCommits()).isPositive().isLessThan(2_000);
        assertThat(f.bytes()).isLessThan(3 * 4096);
        manager.stop();
        assertThat(segments(dir)).isEmpty();
        assertThat(users(store.turns())).isEqualTo(IntStream.range(0, 2_000).mapToObj(i -> "turn " + i).toList());
    }

    @Test
    void aFullSpoolRefusesTheWriteWithAClearErrorAndCountsIt() {
        Path dir = tmp.resolve("a");
        GatedProvider held = new GatedProvider("store", t -> true);
        MemoryManager manager = MemoryManager.builder().spool(Spool.builder(dir).maxBytes(4096).open()).build();
        manager.addProvider(held);
        List<Integer> accepted = new ArrayList<>();
        SpoolFullException full = null;
        for (int i = 0; i < 1_000 && full == null; i++) {
            try {
                manager.syncAll("turn " + i + " " + "x".repeat(100), "a", "s");
                accepted.add(i);
            } catch (SpoolFullException e) {
                full = e;
            }
        }
        assertThat(full).isNotNull();
        assertThat(full.getMessage()).contains("is full", dir.toString(), "4096", "counted as rejected");
        assertThat(full.maxBytes()).isEqualTo(4096);
        assertThat(accepted).isNotEmpty().hasSizeLessThan(40);
        assertThat(manager.figures().spool().rejectedFull()).isEqualTo(1);
        assertThat(manager.figures().rejected()).isEqualTo(1);
        held.open();
        assertThat(manager.flushPending(WAIT)).isTrue();
        assertThat(users(held.turns())).isEqualTo(accepted.stream().map(i -> "turn " + i + " " + "x".repeat(100))
                .toList());
        manager.stop();
    }

    /**
     * Writes nobody waits for are forced on their own: the pages the appends filled, and the page
     * they were filling once they pause (the committer leaves that one alone while they write into
     * it, since a force would make the next store fault).
     */
    @Test
    void writesNobodyWaitsForAreForcedOnceTheAppendsPause() {
        Path dir = tmp.resolve("a");
        Spool spool = Spool.open(dir);
        GatedProvider held = new GatedProvider("store", t -> true);
        MemoryManager manager = MemoryManager.builder().spool(spool).build();
        manager.addProvider(held);
        for (int i = 0; i < 100; i++) { // some pages of records, the last one partly filled
            manager.syncAll("u" + i + " " + "x".repeat(50), "a", "s");
        }
        long appended = spool.log().appended();
        assertThat(SpoolFiles.offset(appended) % SpoolLog.PAGE).as("the last page is partly filled").isNotZero();

        await().atMost(WAIT).until(() -> spool.log().durablePosition() >= appended);

        held.open();
        manager.stop();
    }

    @Test
    void aTornTailIsCutAndACorruptRecordInTheMiddleIsSkippedKeepingTheOthers() throws Exception {
        Path dir = tmp.resolve("a");
        GatedProvider held = new GatedProvider("store", t -> true);
        MemoryManager first = MemoryManager.builder().spool(Spool.open(dir)).build();
        first.addProvider(held);
        for (int i = 0; i < 20; i++) {
            first.syncAll("u" + i, "a" + i, "s");
        }
        assertThat(first.awaitDurable(WAIT)).isTrue();
        Path image = tmp.resolve("crash");
        crashImage(dir, image);
        Path segment = segments(image).get(0);
        byte[] bytes = Files.readAllBytes(segment);
        Contents contents = SegmentBytes.read(segment);
        long tenth = contents.entries().get(10).offset();
        bytes[(int) tenth + SegmentFormat.RECORD_OVERHEAD + 3] ^= 0x40; // a flipped bit in the 11th write
        byte[] torn = {0, 0, 1, 0, 7, 7}; // a record cut short as it was stored, the mapping's zeros after it
        System.arraycopy(torn, 0, bytes, (int) contents.validLength(), torn.length);
        Files.write(segment, bytes);

        SpoolInspection seen = SpoolInspection.of(image);
        assertThat(seen.records()).isEqualTo(19);
        assertThat(seen.pending()).isEqualTo(19);
        assertThat(seen.segments().get(0).damage()).singleElement().satisfies(d -> {
            assertThat(d.offset()).isEqualTo(tenth);
            assertThat(d.reason()).contains("checksum");
        });
        assertThat(seen.tornTailBytes()).isEqualTo(6);

        RecordingProvider store = new RecordingProvider("store");
        MemoryManager second = MemoryManager.builder().spool(Spool.open(image)).build();
        second.addProvider(store);
        assertThat(Files.size(segment)).as("the torn tail is cut at open, with the zeros after it")
                .isEqualTo(contents.validLength());
        assertThat(second.replaySpool()).isEqualTo(19);
        assertThat(second.flushPending(WAIT)).isTrue();
        List<String> expected = IntStream.range(0, 20).filter(i -> i != 10).mapToObj(i -> "u" + i).toList();
        assertThat(users(store.turns())).isEqualTo(expected);
        SpoolFigures figures = second.figures().spool();
        assertThat(figures.corruptRecords()).isEqualTo(1);
        assertThat(figures.tornTailBytes()).isEqualTo(6);
        second.stop();
        held.open();
        first.stop();
    }

    @Test
    void aRunThatOnlyReplaysOrWritesNothingLeavesNoSegmentBehind() throws Exception {
        Path dir = tmp.resolve("a");
        HeldRun run = HeldRun.write(dir, 10, "u");
        GatedProvider held = run.store();
        MemoryManager first = run.manager();
        Path image = tmp.resolve("crash");
        crashImage(dir, image);

        RecordingProvider store = new RecordingProvider("store");
        MemoryManager replayOnly = MemoryManager.builder().spool(Spool.open(image)).build();
        replayOnly.addProvider(store);
        assertThat(replayOnly.replaySpool()).isEqualTo(10);
        assertThat(replayOnly.stop().delivered()).isEqualTo(10);
        assertThat(segments(image)).as("every replayed write delivered, none written: no segment left").isEmpty();

        MemoryManager idle = MemoryManager.builder().spool(Spool.open(image)).build();
        idle.addProvider(store);
        assertThat(idle.replaySpool()).isZero();
        idle.stop();
        assertThat(segments(image)).as("a run that wrote nothing leaves no segment").isEmpty();
        assertThat(users(store.turns())).isEqualTo(IntStream.range(0, 10).mapToObj(i -> "u" + i).toList());
        held.open();
        first.stop();
    }

    /**
     * A kill between a segment's creation and its header's write (or power loss before the header
     * reached the disk) leaves a segment empty or with part of its header: no write can be in it.
     * The next open must delete it, not refuse the spool forever.
     */
    @Test
    void aNewestSegmentWhoseHeaderACrashCutShortIsDeletedAndTheRestReplayed() throws Exception {
        Path dir = tmp.resolve("a");
        HeldRun run = HeldRun.write(dir, 10, "u");
        GatedProvider held = run.store();
        MemoryManager first = run.manager();
        byte[] header = SegmentFormat.header("0f3c-prefix");
        for (int cut : new int[] {0, 3, SegmentFormat.HEADER_FIXED_BYTES, header.length - 1}) {
            Path image = tmp.resolve("crash-" + cut);
            crashImage(dir, image);
            Path interrupted = SpoolFiles.segmentPath(image, 2);
            Files.write(interrupted, java.util.Arrays.copyOf(header, cut));

            RecordingProvider store = new RecordingProvider("store");
            MemoryManager second = MemoryManager.builder().spool(Spool.open(image)).build();
            second.addProvider(store);
            assertThat(interrupted).as("a header cut at %d bytes", cut).doesNotExist();
            assertThat(second.replaySpool()).isEqualTo(10);
            second.syncAll("new", "a", "s");
            assertThat(second.flushPending(WAIT)).isTrue();
            assertThat(users(store.turns())).endsWith("u9", "new").hasSize(11);
            second.stop();
            assertThat(segments(image)).isEmpty();
        }

        // Not a header's start: not an interrupted creation, refused as before.
        Path foreign = tmp.resolve("foreign");
        crashImage(dir, foreign);
        Files.write(SpoolFiles.segmentPath(foreign, 2), new byte[] {'M', 'L', 'x'});
        assertThatThrownBy(() -> Spool.open(foreign)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("00000000000000000002.seg");
        held.open();
        first.stop();
    }

    @Test
    void aSpoolOfANewerFormatIsRefusedByName() throws Exception {
        Path dir = tmp.resolve("a");
        Files.createDirectories(dir);
        byte[] header = SegmentFormat.header("p");
        header[7] = (byte) (SegmentFormat.VERSION + 1);
        Files.write(SpoolFiles.segmentPath(dir, 1), header);
        assertThatThrownBy(() -> Spool.open(dir)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("newer memlife").hasMessageContaining("00000000000000000001.seg");
        assertThat(SpoolInspection.of(dir).unreadable()).isEqualTo(1);
        // The refusal released the lock: the spool can be opened once the segment is dealt with.
        Files.delete(SpoolFiles.segmentPath(dir, 1));
        Spool.open(dir).close();
    }

    @Test
    void aSegmentWhoseHeaderACrashCutShortIsDeletedNotRefused() throws Exception {
        Path dir = tmp.resolve("a");
        Files.createDirectories(dir);
        byte[] header = SegmentFormat.header("p");
        Files.write(SpoolFiles.segmentPath(dir, 1), Arrays.copyOf(header, 6)); // the crash came mid-header
        Files.write(SpoolFiles.segmentPath(dir, 2), new byte[0]);                // or before it
        Files.write(SpoolFiles.segmentPath(dir, 3), new byte[header.length]);    // or its size reached the disk, not its data
        assertThat(SpoolInspection.of(dir).tornTailBytes()).isEqualTo(6 + header.length);
        RecordingProvider store = new RecordingProvider("store");
        MemoryManager manager = MemoryManager.builder().spool(Spool.open(dir)).build();
        manager.addProvider(store);
        assertThat(manager.figures().spool().tornTailBytes()).isEqualTo(6 + header.length);
        manager.syncAll("u", "a", "s");
        manager.stop();
        assertThat(store.turns()).hasSize(1);
        assertThat(segments(dir)).isEmpty();
        Files.writeString(SpoolFiles.segmentPath(dir, 7), "not a segment at all");
        assertThatThrownBy(() -> Spool.open(dir)).hasMessageContaining("not a memlife spool segment");
    }

    @Test
    void aWriteAProviderFailedIsKeptAndRetriedAtTheNextStartBeforeNewWrites() throws Exception {
        Path dir = tmp.resolve("a");
        FailingProvider store = FailingProvider.failingWrites("store", t -> t.userContent().startsWith("poison"));
        MemoryManager first = MemoryManager.builder().spool(Spool.open(dir)).build();
        first.addProvider(store);
        first.syncAll("ok0", "a", "s");
        first.syncAll("poison1", "a", "s");
        first.syncAll("ok2", "a", "s");
        DrainReport report = first.stop();
        assertThat(report.failedWriteIds()).hasSize(1);
        String failedId = report.failedWriteIds().get(0);
        assertThat(first.figures().spool().failedKept()).isEqualTo(1);
        SpoolInspection seen = SpoolInspection.of(dir);
        assertThat(seen.failedKept()).isEqualTo(1);
        assertThat(seen.pending()).isEqualTo(1);

        RecordingProvider healed = new RecordingProvider("store");
        MemoryManager second = MemoryManager.builder().spool(Spool.open(dir)).build();
        second.addProvider(healed);
        second.syncAll("new", "a", "s");
        assertThat(second.flushPending(WAIT)).isTrue();
        assertThat(users(healed.turns())).containsExactly("poison1", "new");
        assertThat(healed.turns().get(0).writeId()).isEqualTo(failedId);
        second.stop();
        assertThat(SpoolInspection.of(dir).pending()).isZero();
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.map(f -> f.getFileName().toString())).noneMatch(n -> n.endsWith(SpoolFiles.FAILED_SUFFIX));
        }
    }

    @Test
    void aSpoolServesOneManagerAndOneProcess() {
        Path dir = tmp.resolve("a");
        Spool spool = Spool.open(dir);
        assertThatThrownBy(() -> Spool.open(dir)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("in use");
        MemoryManager one = MemoryManager.builder().name("one").spool(spool).build();
        assertThatThrownBy(() -> MemoryManager.builder().name("two").spool(spool).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("already serves memory manager 'one'");
        one.stop();
        Spool.open(dir).close(); // closed with its manager: the directory is free again
    }

    @Test
    void withoutASpoolTheDurableCallsSaySo() {
        MemoryManager plain = MemoryManager.create();
        assertThatThrownBy(() -> plain.awaitDurable(WAIT)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("has no spool");
        assertThatThrownBy(plain::replaySpool).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("has no spool");
        assertThat(plain.figures().spool()).isEqualTo(SpoolFigures.NONE);
        plain.stop();
        MemoryManager spooled = MemoryManager.builder().spool(Spool.open(tmp.resolve("b"))).build();
        assertThatThrownBy(spooled::replaySpool).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no provider registered");
        spooled.stop();
    }

    @Test
    void everyWriteReportedDurableSurvivesLosingThePageCacheTail() throws Exception {
        Path dir = tmp.resolve("a");
        Spool spool = Spool.open(dir);
        GatedProvider held = new GatedProvider("store", t -> true);
        MemoryManager manager = MemoryManager.builder().spool(spool).build();
        manager.addProvider(held);
        List<String> durable = new ArrayList<>();
        long forcedTo = 0;
        for (int i = 0; i < 300; i++) {
            manager.syncAll("u" + i, "a", "s");
            if (i % 7 == 6) {
                assertThat(manager.awaitDurable(WAIT)).isTrue();
                forcedTo = spool.log().durablePosition();
                for (int j = durable.size(); j <= i; j++) {
                    durable.add("u" + j);
                }
            }
        }
        // Power fails: the disk keeps what the last force covered, at least; the rest of the page
        // cache is lost. Later writes may have been forced too by the committer: cut them anyway.
        Path image = tmp.resolve("power-loss");
        crashImage(dir, image);
        Path last = segments(image).get(segments(image).size() - 1);
        assertThat(SpoolFiles.segment(forcedTo)).isEqualTo(Long.parseLong(last.getFileName().toString().substring(0, 20)));
        try (var ch = java.nio.channels.FileChannel.open(last, StandardOpenOption.WRITE)) {
            ch.truncate(SpoolFiles.offset(forcedTo));
        }
        RecordingProvider store = new RecordingProvider("store");
        MemoryManager after = MemoryManager.builder().spool(Spool.open(image)).build();
        after.addProvider(store);
        after.replaySpool();
        assertThat(after.flushPending(WAIT)).isTrue();
        assertThat(users(store.turns())).isEqualTo(durable);
        after.stop();
        held.open();
        manager.stop();
    }

    @Test
    void concurrentWaitersShareForcesAndReturnOnlyOnceTheirWritesAreForced() throws Exception {
        Path dir = tmp.resolve("a");
        Spool spool = Spool.open(dir);
        MemoryManager manager = MemoryManager.builder().spool(spool).queueCapacity(100_000).build();
        RecordingProvider store = new RecordingProvider("store");
        manager.addProvider(store);
        int threads = 8;
        int rounds = 40;
        List<Throwable> failures = new ArrayList<>();
        List<Thread> producers = new ArrayList<>();
        java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(threads);
        for (int t = 0; t < threads; t++) {
            int index = t;
            Thread producer = new Thread(() -> {
                try {
                    start.await();
                    for (int r = 0; r < rounds; r++) {
                        for (int i = 0; i < 5; i++) {
                            manager.syncAll("u" + index + "-" + r + "-" + i, "a", "s" + index);
                        }
                        long mine = spool.log().appended(); // at least this producer's last write
                        assertThat(manager.awaitDurable(WAIT)).isTrue();
                        assertThat(spool.log().durablePosition()).isGreaterThanOrEqualTo(mine);
                    }
                } catch (Throwable e) {
                    synchronized (failures) {
                        failures.add(e);
                    }
                }
            });
            producers.add(producer);
            producer.start();
        }
        for (Thread producer : producers) {
            producer.join();
        }
        assertThat(failures).isEmpty();
        long commits = manager.figures().spool().groupCommits();
        assertThat(commits).as("waiters share forces").isLessThan((long) threads * rounds);
        // An interrupted waiter returns false at once, its flag kept.
        Thread.currentThread().interrupt();
        try {
            assertThat(spool.log().awaitDurable(spool.log().appended() + 1, TimeUnit.SECONDS.toNanos(10))).isFalse();
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(manager.flushPending(WAIT)).isTrue();
        assertThat(store.turns()).hasSize(threads * rounds * 5);
        manager.stop();
    }

    /**
     * A manager on the spool in {@code dir} whose store holds every write it gets, so none is
     * delivered: {@code writes} writes ({@code user0}, {@code user1}, ...), durable, as a crash
     * would find them. The test opens the store and shuts the manager down at its end.
     */
    private record HeldRun(MemoryManager manager, GatedProvider store) {
        static HeldRun write(Path dir, int writes, String user) {
            GatedProvider store = new GatedProvider("store", t -> true);
            MemoryManager manager = MemoryManager.builder().spool(Spool.open(dir)).build();
            manager.addProvider(store);
            for (int i = 0; i < writes; i++) {
                manager.syncAll(user + i, "a", "s");
            }
            assertThat(manager.awaitDurable(WAIT)).isTrue();
            return new HeldRun(manager, store);
        }
    }

    /**
     * A run that wrote {@code u0, u1, ...} with the given replies through a manager on a spool
     * whose store took {@code u0} and held the rest, and the image of its spool as a crash leaves
     * it ({@code <spool>-crash}), its delivery mark past {@code u0}.
     */
    private record FirstDelivered(MemoryManager manager, GatedProvider store, String prefix, Path image) {
        static FirstDelivered write(Path tmp, Spool.Builder spoolOf, List<String> replies) throws IOException {
            Spool spool = spoolOf.open();
            GatedProvider held = new GatedProvider("store", t -> !t.userContent().equals("u0"));
            MemoryManager first = MemoryManager.builder().name("first").spool(spool).build();
            first.addProvider(held);
            for (int i = 0; i < replies.size(); i++) {
                assertThat(first.syncAll("u" + i, replies.get(i), "s")).isTrue();
            }
            assertThat(first.awaitDurable(WAIT)).isTrue();
            assertThat(held.awaitHeld(WAIT)).isTrue(); // u0 delivered, u1 held
            await().atMost(WAIT).until(() -> spool.log().markWritten() == spool.log().deliveredPosition());
            Path image = tmp.resolve(spool.directory().getFileName() + "-crash");
            crashImage(spool.directory(), image);
            return new FirstDelivered(first, held, prefixOf(held.turns().get(0)), image);
        }

        /** A new manager on the image replays every write but {@code u0}, in order, with its id and reply; then both stop. */
        void assertReplaysAllButTheFirst(List<String> replies) {
            int n = replies.size();
            RecordingProvider replayedTo = new RecordingProvider("store");
            MemoryManager second = MemoryManager.builder().name("second").spool(Spool.open(image)).build();
            second.addProvider(replayedTo);
            assertThat(second.replaySpool()).isEqualTo(n - 1);
            assertThat(second.flushPending(WAIT)).isTrue();
            assertThat(ids(replayedTo.turns())).isEqualTo(expectedIds(prefix, 2, n));
            assertThat(replayedTo.turns()).extracting(Turn::assistantContent)
                    .containsExactlyElementsOf(replies.subList(1, n));
            second.stop();
            store.open();
            manager.stop(Duration.ZERO);
        }
    }

    static List<Path> segments(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().endsWith(SpoolFiles.SEGMENT_SUFFIX)).sorted().toList();
        }
    }
}
