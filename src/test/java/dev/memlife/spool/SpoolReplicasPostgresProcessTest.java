package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.memlife.store.PostgresAvailability;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two gateway replicas on one PostgreSQL database, one of them SIGKILLed mid-stream: each replica
 * is a child JVM ({@link SpoolReplicaChildMain}) running a real {@link
 * dev.memlife.gateway.AgentGateway} whose agents each have a spool of their own, and both write
 * into the same tables through {@link dev.memlife.store.JdbcMemoryProvider}. Replica {@code a} is
 * killed after a random number of confirmed writes, while {@code b} goes on writing; {@code a} is
 * restarted on the same spool directories (its agents re-created, each replaying its spool) and
 * both finish and stop cleanly. Checked with plain SQL: every write either replica confirmed
 * durable is stored exactly once (none lost by the kill, none doubled by the replay or by the
 * other replica), write ids are unique, and every agent's spool is empty at the end.
 *
 * <p>Runs when {@link PostgresAvailability} finds a server (CI starts one); skipped otherwise, or
 * failed when {@code MEMLIFE_REQUIRE_PG=1}. The tables have a prefix of their own per run, dropped
 * at the end. The kill point comes from a seeded {@link Random}, printed; {@code
 * -Dmemlife.crash.seed=<seed>} draws it again.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SpoolReplicasPostgresProcessTest {

    private static final int AGENTS = 3;
    /** Confirmed writes the restarted replica and the other one make, at least, before they are told to finish. */
    private static final int WRITES_BEFORE_FINISH = 3 * AGENTS * SpoolCrashChildMain.GROUP;
    /** Bounds each wait for a child: start, confirmations, exit. */
    private static final Duration WAIT = Duration.ofSeconds(45);
    /** A marker as the replicas write it: {@code <life>-<agent>-<n>}. */
    private static final Pattern MARKER = Pattern.compile("(a1|a2|b1)-agent\\d-\\d+");

    @TempDir
    Path tmp;

    private final String tablePrefix = "spool_crash_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12)
            + "_";
    /** Every write confirmed durable, by marker, with where it was confirmed. */
    private final Map<String, String> confirmed = new LinkedHashMap<>();

    /** Skips the test with a message saying how to run it, or fails it when PostgreSQL is required. */
    @BeforeEach
    void requirePostgres() {
        PostgresAvailability.require();
    }

    @AfterEach
    void dropTables() throws Exception {
        PostgresAvailability.dropTables(tablePrefix, "turns", "session_ends", "schema_version");
    }

    @Test
    void twoReplicasKeepEveryConfirmedWriteOnceThroughAKillAndARestartOnTheSameSpools() throws Exception {
        long seed = Long.getLong("memlife.crash.seed", System.nanoTime());
        int killAfter = 1 + new Random(seed).nextInt(4_000);
        Path spoolsA = tmp.resolve("replica-a");
        Path spoolsB = tmp.resolve("replica-b");
        Files.createDirectories(tmp.resolve("stderr"));
        long replayedByRestart;
        String stoppedA;
        String stoppedB;
        long started = System.nanoTime();
        try (ChildJvm a1 = replica("a1", spoolsA); ChildJvm b1 = replica("b1", spoolsB)) {
            a1.awaitLine("READY", WAIT);
            b1.awaitLine("READY", WAIT);
            a1.awaitDurable(killAfter, WAIT);
            b1.awaitDurable(1, WAIT); // b writes too when a is killed
            a1.kill(WAIT);
            record(a1, "killed after " + killAfter + " confirmations");

            try (ChildJvm a2 = replica("a2", spoolsA)) {
                replayedByRestart = Long.parseLong(a2.awaitLine("READY", WAIT).substring("READY replayed=".length()));
                a2.awaitDurable(WRITES_BEFORE_FINISH, WAIT);
                b1.awaitDurable(b1.durableCount() + WRITES_BEFORE_FINISH, WAIT); // b still writing beside a2
                a2.finish();
                b1.finish();
                stoppedA = awaitCleanStop(a2);
                stoppedB = awaitCleanStop(b1);
                record(a2, "restarted on a1's spools");
                record(b1, "ran beside a1 and a2");
            }
        }
        long tookMs = (System.nanoTime() - started) / 1_000_000;
        System.out.println("SpoolReplicasPostgresProcessTest seed=" + seed + " (replay: -Dmemlife.crash.seed=" + seed
                + "): a1 killed after " + killAfter + " confirmations, a2 replayed " + replayedByRestart + ", "
                + confirmed.size() + " writes confirmed, " + tookMs + " ms\n  a2: " + stoppedA + "\n  b1: " + stoppedB);

        try (Connection c = PostgresAvailability.connect()) {
            StoredMarkers.read(c, tablePrefix).assertEveryConfirmedWriteStoredOnce(confirmed.keySet(),
                    marker -> confirmed.getOrDefault(marker, "not confirmed") + ", seed " + seed, MARKER);
        }
        assertThat(segmentsUnder(spoolsA)).as("seed %d: segments left in replica a's spools", seed).isEmpty();
        assertThat(segmentsUnder(spoolsB)).as("segments left in replica b's spools").isEmpty();
    }

    private ChildJvm replica(String life, Path spoolRoot) throws IOException {
        return ChildJvm.start(life, tmp.resolve("stderr"), SpoolReplicaChildMain.class, life, spoolRoot.toString(),
                tablePrefix, Integer.toString(AGENTS));
    }

    /** Waits for the child's clean stop and exit 0. {@return its STOPPED line} */
    private static String awaitCleanStop(ChildJvm child) throws InterruptedException {
        String stopped = child.awaitLine("STOPPED", WAIT);
        assertThat(child.awaitExit(WAIT)).as("%s's exit; stderr:\n%s", child, child.stderr()).isZero();
        assertThat(stopped).as("%s's gateway stop", child).contains("complete=true", "closed=" + AGENTS, " failed=0 ",
                " abandoned=0 ");
        return stopped;
    }

    private void record(ChildJvm child, String how) {
        List<String> durable = child.durable();
        for (String marker : durable) {
            confirmed.put(marker, child + " " + how + ", " + durable.size() + " confirmed");
        }
    }

    private static List<Path> segmentsUnder(Path root) throws IOException {
        List<Path> out = new ArrayList<>();
        try (Stream<Path> files = Files.walk(root)) {
            files.filter(f -> f.getFileName().toString().endsWith(SpoolFiles.SEGMENT_SUFFIX)).forEach(out::add);
        }
        return out;
    }
}
