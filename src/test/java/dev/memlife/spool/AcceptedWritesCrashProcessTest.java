package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every write {@code syncAll} accepted survives kill -9: a child JVM ({@link AcceptedCrashChildMain})
 * takes writes from four producers on plain {@code syncAll} (no durable wait) and prints each one
 * accepted; it is SIGKILLed at 20 seeded points under load, restarted on the same spool and SQLite
 * store each time, and a last run replays and shuts down cleanly. Then every accepted write must
 * be stored exactly once, and each producer's writes in its order.
 *
 * <p>The kill points are of three kinds. Two are <em>early</em>: the spool's first force is held
 * (a disk that does not answer), and the kill comes after the first few writes, in the first
 * moments of a fresh JVM, before any force returned. Six are <em>held</em>: a later force is
 * held, and the kill comes once the hold began and more writes were accepted behind it. The rest
 * are <em>free</em>: the committer forces as it likes. An accepted write is in the kernel's page
 * cache before {@code syncAll} returns, so none of them may lose one. {@code
 * -Dmemlife.crash.seed=<seed>} replays a run's kill points.
 */
@Timeout(value = 300, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class AcceptedWritesCrashProcessTest {

    private static final int KILLS = 20;
    private static final int MAX_ACCEPTED = 20_000;
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path tmp;

    @Test
    void everyWriteSyncAllAcceptedIsStoredOnceInItsProducersOrderAcrossTwentyKills() throws Exception {
        long seed = Long.getLong("memlife.crash.seed", System.nanoTime());
        Random rnd = new Random(seed);
        Path spool = tmp.resolve("spool");
        Path db = tmp.resolve("store.db");
        Files.createDirectories(tmp.resolve("stderr"));
        Set<String> accepted = new LinkedHashSet<>();
        List<String> runs = new ArrayList<>();
        for (int i = 0; i < KILLS; i++) {
            String tag = String.format("k%02d", i);
            boolean early = i < 2;
            boolean held = i % 3 == 2;
            int killAfter = early ? 1 + rnd.nextInt(20)
                    : (int) Math.round(Math.exp(rnd.nextDouble() * Math.log(MAX_ACCEPTED)));
            int holdFrom = early ? 1 : held ? 1 + rnd.nextInt(50) : 0;
            long startedAt = System.nanoTime();
            try (ChildJvm child = ChildJvm.start(tag, tmp.resolve("stderr"), AcceptedCrashChildMain.class, "write",
                    spool.toString(), db.toString(), tag, Integer.toString(holdFrom))) {
                child.awaitLine("READY", WAIT);
                int before = child.durableCount();
                if (holdFrom > 0) {
                    child.awaitLine("FORCE_HELD", WAIT);
                }
                child.awaitDurable(held ? child.durableCount() + killAfter : killAfter, WAIT);
                child.kill(WAIT);
                long ms = (System.nanoTime() - startedAt) / 1_000_000;
                accepted.addAll(child.durable());
                runs.add(tag + (early ? " early" : held ? " held from force " + holdFrom : " free") + ": killed after "
                        + child.durableCount() + " accepted (" + (child.durableCount() - before) + " after READY), "
                        + ms + " ms after the JVM was started");
            }
        }
        try (ChildJvm last = ChildJvm.start("last", tmp.resolve("stderr"), AcceptedCrashChildMain.class, "replay",
                spool.toString(), db.toString(), "last")) {
            assertThat(last.awaitLine("DRAINED", WAIT)).contains("failed=0", "abandoned=0", "complete=true");
            assertThat(last.awaitExit(WAIT)).isZero();
        }
        List<String> stored = storedInOrder(db);
        Map<String, Integer> times = new HashMap<>();
        stored.forEach(m -> times.merge(m, 1, Integer::sum));
        List<String> lost = accepted.stream().filter(m -> !times.containsKey(m)).toList();
        List<String> twice = times.entrySet().stream().filter(e -> e.getValue() > 1).map(Map.Entry::getKey).toList();
        Map<String, Long> lostByRun = new TreeMap<>();
        lost.forEach(m -> lostByRun.merge(m.substring(0, 3), 1L, Long::sum));
        System.out.println("AcceptedWritesCrashProcessTest seed=" + seed + ": " + accepted.size() + " accepted, "
                + lost.size() + " lost at " + lostByRun.size() + " of " + KILLS + " kills " + lostByRun + ", "
                + twice.size() + " stored twice\n  " + String.join("\n  ", runs));
        assertThat(lost).as("seed %d: accepted writes not stored (of %d accepted)", seed, accepted.size()).isEmpty();
        assertThat(twice).as("seed %d: writes stored twice", seed).isEmpty();
        Map<String, Long> lastSeen = new HashMap<>();
        for (String marker : stored) {
            int at = marker.lastIndexOf('-');
            String producer = marker.substring(0, at);
            long n = Long.parseLong(marker.substring(at + 1));
            Long before = lastSeen.put(producer, n);
            assertThat(before == null || before < n).as("seed %d: %s stored after %s-%d", seed, marker, producer,
                    before).isTrue();
        }
    }

    private static List<String> storedInOrder(Path db) throws Exception {
        List<String> markers = new ArrayList<>();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db.toAbsolutePath());
                PreparedStatement ps = c.prepareStatement("SELECT user_content FROM memlife_turns ORDER BY id");
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                markers.add(rs.getString(1));
            }
        }
        return markers;
    }
}
