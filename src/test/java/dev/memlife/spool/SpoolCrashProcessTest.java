package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.memlife.Turn;
import dev.memlife.spool.SegmentBytes.Contents;
import dev.memlife.spool.SegmentBytes.Entry;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The spool against real crashes: a child JVM ({@link SpoolCrashChildMain}) writes turns through
 * a spooled {@link dev.memlife.MemoryManager} into a SQLite store as fast as it can and prints each
 * write the spool confirmed durable; the test SIGKILLs it at a random point, starts it again on
 * the same spool and database (it replays, then writes on), and so on; at the end a last run only
 * replays and shuts down cleanly. Checked from outside with plain SQL on the SQLite file:
 *
 * <ul>
 *   <li>every write confirmed durable before a kill is stored, exactly once: nothing lost, none
 *       stored twice by the replay, no marker under two write ids, write ids unique;
 *   <li>after the clean run the spool holds no segment: every write was delivered;
 *   <li>a torn tail (the last segment truncated after its last confirmed record and filled with
 *       garbage) is cut at the next start, reported to the byte, never half-read, and costs no
 *       confirmed write.
 * </ul>
 *
 * <p>The kill points are drawn from a seeded {@link Random}; the seed is printed, and {@code
 * -Dmemlife.crash.seed=<seed>} replays a failing run's kill points (their timing is the machine's).
 * Nothing waits by sleeping: the test moves on the child's stdout lines and its exit.
 */
@Timeout(value = 150, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SpoolCrashProcessTest {

    private static final int KILLS = 20;
    private static final int TORN_TAIL_ROUNDS = 3;
    /** The most confirmations a kill waits for: a few seconds of writing at most. */
    private static final int MAX_CONFIRMATIONS = 4_000;
    /** The small segments of half the runs: about 230 writes each. */
    private static final long SMALL_SEGMENT = 16 * 1024;
    /** Bounds each wait for a child: start, confirmations, exit. */
    private static final Duration WAIT = Duration.ofSeconds(30);
    /** A marker as the child writes it: {@code <run>-<n>}. */
    private static final Pattern MARKER = Pattern.compile("(k\\d\\d|t\\d\\d)-\\d+");
    private static final Pattern READY = Pattern.compile(
            "READY replayed=(\\d+) tornTailBytes=(\\d+) corruptRecords=(\\d+)");

    @TempDir
    Path tmp;

    private Path spoolDir;
    private Path db;
    /** Every write confirmed durable, by marker, with where it was confirmed (for the messages). */
    private final Map<String, String> confirmed = new LinkedHashMap<>();

    /**
     * One run's kill point: as the child starts ({@code STARTING}, before it opened anything), or
     * once it has confirmed {@code confirmations} writes after its replay (0: at {@code READY},
     * right after it). And the spool's segment size for the run: 0 for {@code Spool.open}'s 64
     * MiB, else {@link #SMALL_SEGMENT}, so the run rolls segments and the kill may land around a
     * roll, and the next replay spans segments.
     */
    private record KillPoint(boolean atStart, int confirmations, long segmentBytes) {

        /** Mostly after 1..{@link #MAX_CONFIRMATIONS} confirmations, log-uniform; sometimes very early. */
        static KillPoint random(Random rnd) {
            long segmentBytes = rnd.nextBoolean() ? SMALL_SEGMENT : 0;
            int kind = rnd.nextInt(10);
            if (kind == 0) {
                return new KillPoint(true, 0, segmentBytes);
            }
            if (kind == 1) {
                return new KillPoint(false, 0, segmentBytes);
            }
            int confirmations = (int) Math.round(Math.exp(rnd.nextDouble() * Math.log(MAX_CONFIRMATIONS)));
            return new KillPoint(false, confirmations, segmentBytes);
        }

        KillPoint movedToStart() {
            return new KillPoint(true, 0, segmentBytes);
        }

        KillPoint movedToReady() {
            return new KillPoint(false, 0, segmentBytes);
        }

        String name() {
            String when = atStart ? "at STARTING" : confirmations == 0 ? "at READY"
                    : "after " + confirmations + " confirmations";
            return when + (segmentBytes == 0 ? "" : " (" + segmentBytes / 1024 + " KiB segments)");
        }
    }

    /**
     * What one child run said and did, for the summary: what it replayed, where it was killed,
     * how many writes it confirmed, and how many writes confirmed so far the store lacked after
     * the kill (only the spool held them).
     */
    private record Run(String tag, KillPoint kill, int confirmed, long replayed, long onlyInSpool) {
        @Override
        public String toString() {
            return tag + ": replayed " + replayed + ", killed " + kill.name() + ", " + confirmed + " confirmed; "
                    + onlyInSpool + " confirmed writes only in the spool";
        }
    }

    @Test
    void everyWriteConfirmedDurableIsStoredExactlyOnceAcrossTwentyRandomKills() throws Exception {
        long seed = seed();
        Random rnd = new Random(seed);
        setUp("kills");
        List<KillPoint> points = new ArrayList<>();
        for (int i = 0; i < KILLS; i++) {
            points.add(KillPoint.random(rnd));
        }
        // Whatever the draw, one kill as the child starts and one right after its replay.
        int start = rnd.nextInt(KILLS / 2);
        points.set(start, points.get(start).movedToStart());
        int ready = KILLS / 2 + rnd.nextInt(KILLS / 2);
        points.set(ready, points.get(ready).movedToReady());

        List<Run> runs = new ArrayList<>();
        long started = System.nanoTime();
        for (int i = 0; i < KILLS; i++) {
            runs.add(writeAndKill(String.format("k%02d", i), points.get(i)));
        }
        long replayedByLastRun = replayAndShutDownCleanly(String.format("k%02d", KILLS));
        long tookMs = (System.nanoTime() - started) / 1_000_000;

        System.out.println("SpoolCrashProcessTest seed=" + seed + " (replay: -Dmemlife.crash.seed=" + seed + "), "
                + KILLS + " kills in " + tookMs + " ms, " + confirmed.size() + " writes confirmed; last run replayed "
                + replayedByLastRun + "\n  " + String.join("\n  ", runs.stream().map(Run::toString).toList()));
        assertStoredExactlyOnceAndSpoolEmpty(seed);
        assertThat(runs.stream().mapToLong(Run::onlyInSpool).max().orElse(0))
                .as("seed %d: confirmed writes the store lacked after a kill (else the replay went untested)", seed)
                .isPositive();
    }

    @Test
    void aTornTailFilledWithGarbageIsCutAtTheNextStartAndNoConfirmedWriteIsLost() throws Exception {
        long seed = seed();
        Random rnd = new Random(seed);
        setUp("torn");
        List<String> damage = new ArrayList<>();
        long expectedTorn = 0;
        for (int i = 0; i < TORN_TAIL_ROUNDS; i++) {
            int confirmations = 1 + rnd.nextInt(MAX_CONFIRMATIONS / 2);
            String tag = String.format("t%02d", i);
            int confirmedBeforeKill;
            try (ChildJvm child = startChild("write", tag)) {
                Matcher ready = ready(child);
                assertThat(Long.parseLong(ready.group(2))).as("seed %d, %s: torn bytes cut at its start, after %s",
                        seed, tag, damage).isEqualTo(expectedTorn);
                assertThat(Long.parseLong(ready.group(3))).as("corrupt records").isZero();
                child.awaitDurable(confirmations, WAIT);
                child.kill(WAIT);
                record(tag, "killed after " + confirmations + " confirmations", child);
                confirmedBeforeKill = child.durableCount();
            }
            Tear tear = tearTheLastSegment(rnd);
            damage.add(tag + " (killed, " + confirmedBeforeKill + " confirmed): " + tear);
            expectedTorn = tear.tornBytes();
        }
        try (ChildJvm last = startChild("replay", String.format("t%02d", TORN_TAIL_ROUNDS))) {
            Matcher ready = ready(last);
            assertThat(Long.parseLong(ready.group(2))).as("seed %d: torn bytes cut at the last start, after %s", seed,
                    damage).isEqualTo(expectedTorn);
            assertThat(Long.parseLong(ready.group(3))).as("corrupt records").isZero();
            assertCleanExit(last);
        }
        System.out.println("SpoolCrashProcessTest seed=" + seed + " torn tails: " + damage + "; " + confirmed.size()
                + " writes confirmed");
        assertStoredExactlyOnceAndSpoolEmpty(seed);
    }

    // ---- the children ---------------------------------------------------------------------------

    private void setUp(String name) throws IOException {
        spoolDir = tmp.resolve(name + "-spool");
        db = tmp.resolve(name + ".db");
        Files.createDirectories(tmp.resolve("stderr"));
    }

    private ChildJvm startChild(String mode, String tag) throws IOException {
        return ChildJvm.start(tag, tmp.resolve("stderr"), SpoolCrashChildMain.class, mode, spoolDir.toString(),
                db.toString(), tag);
    }

    private ChildJvm startChild(String mode, String tag, long segmentBytes) throws IOException {
        if (segmentBytes == 0) {
            return startChild(mode, tag);
        }
        return ChildJvm.start(tag, tmp.resolve("stderr"), SpoolCrashChildMain.class, mode, spoolDir.toString(),
                db.toString(), tag, Long.toString(segmentBytes));
    }

    /** One run: start the child, let it replay and write, SIGKILL it at {@code kill}. */
    private Run writeAndKill(String tag, KillPoint kill) throws Exception {
        try (ChildJvm child = startChild("write", tag, kill.segmentBytes())) {
            long replayed = -1; // killed before it said
            if (kill.atStart()) {
                child.awaitLine("STARTING", WAIT);
            } else {
                replayed = Long.parseLong(ready(child).group(1));
                child.awaitDurable(kill.confirmations(), WAIT);
            }
            child.kill(WAIT);
            record(tag, "killed " + kill.name(), child);
            return new Run(tag, kill, child.durableCount(), replayed, confirmedButNotStored());
        }
    }

    /** {@return how many writes confirmed so far the store does not hold: the spool must replay them} */
    private long confirmedButNotStored() throws Exception {
        if (confirmed.isEmpty()) {
            return 0; // perhaps killed before the store made its tables
        }
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db.toAbsolutePath())) {
            return StoredMarkers.read(c, "memlife_").missing(confirmed.keySet());
        }
    }

    /** The last run: replays, drains, shuts down, exits 0. {@return how many writes it replayed} */
    private long replayAndShutDownCleanly(String tag) throws Exception {
        try (ChildJvm last = startChild("replay", tag)) {
            long replayed = Long.parseLong(ready(last).group(1));
            assertCleanExit(last);
            return replayed;
        }
    }

    private static void assertCleanExit(ChildJvm child) throws InterruptedException {
        String drained = child.awaitLine("DRAINED", WAIT);
        assertThat(child.awaitExit(WAIT)).as("%s's exit; stderr:\n%s", child, child.stderr()).isZero();
        assertThat(drained).as("the clean run's drain").contains(" failed=0 ", " abandoned=0 ", " stillRunning=0 ",
                "complete=true");
    }

    private static Matcher ready(ChildJvm child) throws InterruptedException {
        String line = child.awaitLine("READY", WAIT);
        Matcher m = READY.matcher(line);
        assertThat(m.matches()).as("%s's READY line: %s", child, line).isTrue();
        return m;
    }

    private void record(String tag, String how, ChildJvm child) {
        List<String> durable = child.durable();
        for (String marker : durable) {
            assertThat(marker).as("%s confirmed a marker of another run", tag).startsWith(tag + "-");
            confirmed.put(marker, tag + " " + how + ", " + durable.size() + " confirmed");
        }
    }

    // ---- the torn tail --------------------------------------------------------------------------

    /**
     * How the last segment was torn: where it was cut, the garbage appended, and the bytes at its
     * end that are not a whole record (what the next open must cut).
     */
    private record Tear(String segment, long lastConfirmedEnd, long size, long cutAt, int garbage, long tornBytes) {
        @Override
        public String toString() {
            return segment + " (" + size + " bytes, last confirmed record ends at " + lastConfirmedEnd + ") cut at "
                    + cutAt + " + " + garbage + " bytes of garbage = " + tornBytes + " torn bytes";
        }
    }

    /**
     * Tears the spool's last segment as a crash mid-write would: cut at a random point between
     * the end of its last confirmed record and its end (never losing a confirmed record), then
     * random garbage appended. {@return the tear, with the torn bytes the next open must cut}
     */
    private Tear tearTheLastSegment(Random rnd) throws IOException {
        List<Path> segments = SpoolTest.segments(spoolDir);
        assertThat(segments).as("segments after the kill").isNotEmpty();
        Path last = segments.get(segments.size() - 1);
        Contents contents = SegmentBytes.read(last);
        long lastConfirmedEnd = contents.headerLength();
        for (Entry e : contents.entries()) {
            Turn turn = SpoolRecord.decode(contents.idPrefix(), contents.payload(e));
            if (confirmed.containsKey(turn.userContent())) {
                lastConfirmedEnd = Math.max(lastConfirmedEnd, end(e));
            }
        }
        long size = Files.size(last);
        long cutAt = lastConfirmedEnd + (long) (rnd.nextDouble() * (size - lastConfirmedEnd + 1));
        long lastWholeRecordEnd = contents.headerLength();
        for (Entry e : contents.entries()) {
            if (end(e) <= cutAt) {
                lastWholeRecordEnd = Math.max(lastWholeRecordEnd, end(e));
            }
        }
        byte[] garbage = new byte[1 + rnd.nextInt(512)];
        rnd.nextBytes(garbage);
        try (FileChannel ch = FileChannel.open(last, StandardOpenOption.WRITE)) {
            ch.truncate(cutAt);
        }
        Files.write(last, garbage, StandardOpenOption.APPEND);
        return new Tear(last.getFileName().toString(), lastConfirmedEnd, size, cutAt, garbage.length,
                cutAt + garbage.length - lastWholeRecordEnd);
    }

    private static long end(Entry e) {
        return e.end();
    }

    // ---- the checks -----------------------------------------------------------------------------

    private void assertStoredExactlyOnceAndSpoolEmpty(long seed) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db.toAbsolutePath())) {
            StoredMarkers stored = StoredMarkers.read(c, "memlife_");
            stored.assertEveryConfirmedWriteStoredOnce(confirmed.keySet(),
                    marker -> confirmed.getOrDefault(marker, "not confirmed") + ", seed " + seed, MARKER);
            assertThat(stored.rows()).as("rows stored").isGreaterThanOrEqualTo(confirmed.size());
        }
        assertThat(SpoolTest.segments(spoolDir)).as("seed %d: segments left after the clean run", seed).isEmpty();
    }

    private static long seed() {
        return Long.getLong("memlife.crash.seed", System.nanoTime());
    }
}
