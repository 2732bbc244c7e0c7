package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.memlife.MemoryManager;
import dev.memlife.SpoolFigures;
import dev.memlife.spool.SegmentBytes.Contents;
import dev.memlife.spool.SegmentBytes.Entry;
import dev.memlife.testing.GatedProvider;
import dev.memlife.testing.RecordingProvider;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The three defects an adversarial check of the spool found (issue 25), each pinned: a refused
 * second open no longer drops the OS lock the first holds (checked from a second process, as
 * {@code spool replay} would see it), a spool whose writes were all delivered never refuses a
 * write for size whatever its segment size, and damage at the end of a sealed segment is reported
 * as damage and kept, never cut as a torn tail.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SpoolDefectsTest {

    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path tmp;

    @Test
    void aRefusedSecondOpenLeavesTheHoldersLockHeldForOtherProcesses() throws Exception {
        Path dir = tmp.resolve("held");
        MemoryManager holder = MemoryManager.builder().name("holder").spool(Spool.open(dir)).build();
        holder.addProvider(new RecordingProvider("store"));
        assertThat(holder.syncAll("u0", "a0", "s")).isTrue();
        assertThat(probe(dir)).as("another process, before the refused open").isEqualTo("HELD");

        assertThatThrownBy(() -> Spool.open(dir)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("in use");
        assertThatThrownBy(() -> Spool.builder(dir).segmentBytes(4096).open())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("in use");
        assertThat(probe(dir)).as("another process, after two refused opens in the holder's JVM").isEqualTo("HELD");

        holder.stop();
        assertThat(probe(dir)).as("after the holder's shutdown").isEqualTo("FREE");
        Spool.open(dir).close(); // and this JVM may open it again
    }

    @Test
    void recoverSkippingALiveAgentsSpoolLeavesItsLockHeld() throws Exception {
        SpoolDirectory spools = SpoolDirectory.open(tmp.resolve("agents"));
        Spool live = spools.newSpool("agent-1");
        MemoryManager agent = MemoryManager.builder().name("agent-1").spool(live).build();
        agent.addProvider(new RecordingProvider("store"));
        assertThat(agent.syncAll("u0", "a0", "s")).isTrue();

        RecordingProvider recovered = new RecordingProvider("recovered");
        SpoolDirectory.Recovery recovery = spools.recover(WAIT, recovered);
        assertThat(recovery.spools()).as("the live spool is skipped").isEmpty();
        assertThat(recovered.turns()).isEmpty();
        assertThat(probe(live.directory())).as("another process, after recover skipped the spool").isEqualTo("HELD");
        agent.stop();
    }

    @Test
    void aSpoolBoundBelowItsSegmentSizeNeverRefusesAWriteOnceEveryEarlierOneWasDelivered() throws Exception {
        Path dir = tmp.resolve("small");
        RecordingProvider store = new RecordingProvider("store");
        MemoryManager manager = MemoryManager.builder().name("small")
                .spool(Spool.builder(dir).maxBytes(256 * 1024).open()).build(); // the default 64 MiB segment
        manager.addProvider(store);
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            String user = "u" + i + " " + "x".repeat(1_000);
            assertThat(manager.syncAll(user, "a", "s")).as("write %d", i).isTrue();
            expected.add(user);
            assertThat(manager.awaitDurable(WAIT)).isTrue();
            assertThat(manager.flushPending(WAIT)).isTrue();
        }
        assertThat(manager.figures().spool().rejectedFull()).isZero();
        await().atMost(WAIT).untilAsserted(() -> assertThat(manager.figures().spool().bytes())
                .as("what the bound counts once the delivered segments are deleted").isLessThanOrEqualTo(256 * 1024));
        assertThat(SpoolTest.users(store.turns())).isEqualTo(expected);
        assertThat(SpoolTest.ids(store.turns())).doesNotHaveDuplicates().hasSize(1_000);
        manager.stop();
        assertThat(SpoolTest.segments(dir)).isEmpty();
    }

    @Test
    void damageInTheLastRecordOfASealedSegmentIsReportedAsDamageAndKeptNotCutAsATornTail() throws Exception {
        Path dir = tmp.resolve("sealed");
        GatedProvider held = new GatedProvider("store", t -> true);
        MemoryManager first = MemoryManager.builder().name("sealed")
                .spool(Spool.builder(dir).segmentBytes(4096).open()).build();
        first.addProvider(held);
        List<String> users = IntStream.range(0, 100).mapToObj(i -> "u" + i + " " + "y".repeat(60)).toList();
        for (String u : users) {
            first.syncAll(u, "a", "s");
        }
        assertThat(first.awaitDurable(WAIT)).as("every write confirmed durable").isTrue();
        Path image = tmp.resolve("image");
        SpoolTest.crashImage(dir, image);
        List<Path> segments = SpoolTest.segments(image);
        assertThat(segments).as("sealed segments before the newest").hasSizeGreaterThan(2);
        Path sealed = segments.get(1);
        byte[] bytes = Files.readAllBytes(sealed);
        Contents contents = SegmentBytes.read(sealed);
        Entry last = contents.entries().get(contents.entries().size() - 1);
        assertThat(last.end()).as("a sealed segment ends where its last record ends").isEqualTo(bytes.length);
        String lost = SpoolRecord.decode(contents.idPrefix(), contents.payload(last)).userContent();
        bytes[last.offset() + SegmentFormat.RECORD_OVERHEAD + 5] ^= 0x01; // one flipped payload byte
        Files.write(sealed, bytes);

        SpoolInspection seen = SpoolInspection.of(image);
        SpoolInspection.Segment s = seen.segments().get(1);
        assertThat(s.tornTailBytes()).as("a sealed segment has no torn tail").isZero();
        assertThat(s.damage()).singleElement().satisfies(d -> {
            assertThat(d.offset()).isEqualTo(last.offset());
            assertThat(d.length()).isEqualTo(bytes.length - last.offset());
        });
        assertThat(seen.damaged()).isEqualTo(1);
        assertThat(seen.tornTailBytes()).isZero();

        RecordingProvider store = new RecordingProvider("store");
        MemoryManager second = MemoryManager.builder().name("sealed-2").spool(Spool.open(image)).build();
        second.addProvider(store);
        assertThat(Files.size(sealed)).as("the damaged record is kept for inspection, not cut").isEqualTo(bytes.length);
        second.replaySpool();
        assertThat(second.flushPending(WAIT)).isTrue();
        SpoolFigures figures = second.figures().spool();
        assertThat(figures.corruptRecords()).isEqualTo(1);
        assertThat(figures.tornTailBytes()).isZero();
        assertThat(SpoolTest.users(store.turns())).isEqualTo(users.stream().filter(u -> !u.equals(lost)).toList());
        second.stop();
        held.open();
        first.stop();
    }

    /** {@return what another process sees of the spool's lock: {@code HELD} or {@code FREE}} */
    private String probe(Path spoolDir) throws IOException, InterruptedException {
        Files.createDirectories(tmp.resolve("stderr"));
        try (ChildJvm child = ChildJvm.start("probe", tmp.resolve("stderr"), LockProbeChildMain.class,
                spoolDir.resolve(SpoolFiles.LOCK_FILE).toString())) {
            String line = child.awaitLine("", WAIT);
            assertThat(child.awaitExit(WAIT)).as("the probe's exit; stderr:\n%s", child.stderr()).isZero();
            return line;
        }
    }
}
