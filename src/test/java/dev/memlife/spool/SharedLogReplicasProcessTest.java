package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.fail;

import dev.memlife.store.PostgresAvailability;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Three replica JVMs ({@link SharedLogReplicaChildMain}) on one PostgreSQL, each serving two
 * agents under load through the shared log and storing into one store there. R1 is SIGKILLed
 * mid-stream and never restarted; its backlog must be delivered by the survivors' sweepers within
 * the lease plus one sweep, and its agents move to R2 and R3. R2 is then frozen with SIGSTOP past
 * its lease; R3 takes its agents over; R2 is resumed with SIGCONT and must drop them, delivering
 * nothing after R3 took them. Then: every write any replica confirmed is stored exactly once, and
 * each conversation (an agent's session) holds its confirmed writes in the order they were
 * accepted, replica after replica. Run plain, with PostgreSQL restarted mid-run, and with R3's
 * connections cut by a TCP proxy.
 *
 * <p>Set {@code MEMLIFE_TRACE_AGENT=a0} to have the replicas print each delivery of that agent's
 * conversation.
 */
@Timeout(240)
class SharedLogReplicasProcessTest {

    enum Variant {
        PLAIN, POSTGRES_RESTART, PROXY_CUTS
    }

    private static final Duration WAIT = Duration.ofSeconds(60);
    /** The lease, one sweep, and a margin for a busy two-core machine. */
    private static final Duration DELIVERY_BOUND = SharedLogReplicaChildMain.LEASE.plus(SharedLogReplicaChildMain.SWEEP)
            .plusSeconds(3);
    private static final Pattern MARKER = Pattern.compile("([abc]\\d)-(R\\d)-(\\d+)");

    @TempDir
    Path tmp;

    private final String prefix = "slr_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10) + "_";
    private final List<ChildJvm> children = new ArrayList<>();
    private TcpProxy proxy;

    @BeforeEach
    void requirePostgres() {
        PostgresAvailability.require();
    }

    @AfterEach
    void cleanUp() throws Exception {
        children.forEach(ChildJvm::close);
        if (proxy != null) {
            proxy.close();
        }
        PostgresAvailability.dropTables(prefix, "shared_log", "shared_log_leases", "turns", "session_ends",
                "schema_version");
    }

    @ParameterizedTest
    @EnumSource(Variant.class)
    void writesMoveToTheSurvivorsOfAKillAndAFreezeStoredOnceAndInOrder(Variant variant) throws Exception {
        run(variant);
    }

    private void run(Variant variant) throws Exception {
        String url = PostgresAvailability.URL;
        String r3Url = url;
        if (variant == Variant.PROXY_CUTS) {
            URI db = URI.create(url.substring("jdbc:".length()));
            proxy = new TcpProxy(db.getHost(), db.getPort());
            r3Url = "jdbc:postgresql://127.0.0.1:" + proxy.port() + db.getPath();
        }
        if (variant == Variant.POSTGRES_RESTART) {
            requirePgCtl();
        }
        ChildJvm r1 = start("R1", url, "a0,a1", 5); // its store lags: it dies with a backlog
        ChildJvm r2 = start("R2", url, "b0,b1", 0);
        ChildJvm r3 = start("R3", r3Url, "c0,c1", 0);
        for (ChildJvm r : children) {
            r.awaitLine("READY", WAIT);
        }
        awaitMore(List.of(r1, r2, r3), 64);

        if (variant == Variant.POSTGRES_RESTART) {
            restartPostgres();
            awaitMore(List.of(r1, r2, r3), 64); // every replica goes on after the restart
        }
        if (variant == Variant.PROXY_CUTS) {
            for (int cut = 0; cut < 2; cut++) {
                assertThat(proxy.cutAll()).isPositive();
                awaitMore(List.of(r3), 48);
            }
        }

        // R1 dies mid-stream, and its backlog is delivered by the survivors' sweepers
        r1.kill(WAIT);
        long killed = System.nanoTime();
        List<String> r1Confirmed = r1.durable();
        long missingAtKill = stored().missing(r1Confirmed);
        await().atMost(WAIT).pollInterval(Duration.ofMillis(50)).until(() -> stored().missing(r1Confirmed) == 0);
        Duration delivered = Duration.ofNanos(System.nanoTime() - killed);
        assertThat(delivered).as("R1's backlog of %d confirmed writes (of %d) delivered after its death",
                missingAtKill, r1Confirmed.size()).isLessThan(DELIVERY_BOUND);
        assertThat(r1Confirmed).isNotEmpty();
        System.out.printf("shared log, %s: R1 died with %d of its %d confirmed writes not in the store; all stored "
                + "%d ms after its death (bound %d ms)%n", variant, missingAtKill, r1Confirmed.size(), delivered.toMillis(),
                DELIVERY_BOUND.toMillis());

        r2.send("SERVE a0");
        r3.send("SERVE a1");
        r2.awaitLine("CLAIMED a0", WAIT);
        r3.awaitLine("CLAIMED a1", WAIT);
        awaitMarkers(r2, "a0-R2-", 32);
        awaitMarkers(r3, "a1-R3-", 32);

        // R2 freezes past its lease; R3 takes its agents over
        r2.freeze();
        r3.send("SERVE b0,b1,a0");
        Map<String, Long> takenAt = new HashMap<>();
        for (String agent : List.of("b0", "b1", "a0")) {
            takenAt.put(agent, claimedAt(r3, agent));
        }
        awaitMarkers(r3, "b0-R3-", 32);
        awaitMarkers(r3, "a0-R3-", 32);
        r2.resume();
        Set<String> dropped = new HashSet<>();
        while (dropped.size() < 3) {
            dropped.add(r2.awaitLine("DROPPED", WAIT).substring("DROPPED ".length()));
        }
        assertThat(dropped).containsExactlyInAnyOrder("b0", "b1", "a0");
        awaitMore(List.of(r3), 64);

        r2.finish();
        String r2Last = r2.awaitLine("LAST_DELIVERY_BEGAN", WAIT);
        r2.awaitLine("STOPPED", WAIT);
        assertThat(r2.awaitExit(WAIT)).isZero();
        r3.finish();
        r3.awaitLine("STOPPED", WAIT);
        assertThat(r3.awaitExit(WAIT)).isZero();
        // What a stop's drain deadline left in the log (abandoned, reported) is delivered by the next
        // replica whose sweeper finds it: a fourth, serving nothing of its own.
        ChildJvm r4 = start("R4", url, "-", 0);
        r4.awaitLine("READY", WAIT);
        await().atMost(WAIT).pollInterval(Duration.ofMillis(100)).until(() -> backlog() == 0);
        r4.finish();
        r4.awaitLine("STOPPED", WAIT);
        assertThat(r4.awaitExit(WAIT)).isZero();

        Map<String, Long> r2Deliveries = new HashMap<>();
        String map = r2Last.substring("LAST_DELIVERY_BEGAN {".length(), r2Last.length() - 1);
        for (String entry : map.isEmpty() ? new String[0] : map.split(", ")) {
            String[] kv = entry.split("=");
            r2Deliveries.put(kv[0], Long.parseLong(kv[1]));
        }
        takenAt.forEach((agent, taken) -> assertThat(r2Deliveries.getOrDefault(agent, 0L))
                .as("the frozen replica's last delivery of %s began before R3 took its lease (%s)", agent, r2Last)
                .isLessThan(taken));

        List<String> confirmed = new ArrayList<>();
        children.forEach(c -> confirmed.addAll(c.durable()));
        StoredMarkers stored = stored();
        try {
            stored.assertEveryConfirmedWriteStoredOnce(confirmed, this::whose, MARKER);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\n" + diagnosis(), e);
        }
        assertConversationsInOrder(stored, new HashSet<>(confirmed), Map.of(
                "a0", List.of("R1", "R2", "R3"), "a1", List.of("R1", "R3"), "b0", List.of("R2", "R3"),
                "b1", List.of("R2", "R3"), "c0", List.of("R3"), "c1", List.of("R3")));
    }

    /** The leases, each replica's last lines and its warnings: what a failure message needs. */
    private String diagnosis() throws SQLException {
        StringBuilder out = new StringBuilder();
        try (Connection c = PostgresAvailability.connect()) {
            SharedLog.inspect(c, prefix).forEach(l -> out.append(l).append('\n'));
        }
        for (ChildJvm child : children) {
            List<String> lines = child.lines().stream().filter(l -> !l.startsWith(ChildJvm.DURABLE)).toList();
            out.append(child).append(": ").append(lines).append('\n');
            child.stderr().lines().filter(l -> l.contains("WARN") || l.contains("ERROR")).limit(40)
                    .forEach(l -> out.append("  ").append(l).append('\n'));
        }
        return out.toString();
    }

    private ChildJvm start(String life, String url, String agents, long delayMillis) throws IOException {
        ChildJvm c = ChildJvm.start(life, tmp, SharedLogReplicaChildMain.class, life, prefix, url, agents,
                Long.toString(delayMillis));
        children.add(c);
        return c;
    }

    private static void awaitMore(List<ChildJvm> replicas, int more) throws InterruptedException {
        for (ChildJvm r : replicas) {
            r.awaitDurable(r.durableCount() + more, WAIT);
        }
    }

    private static void awaitMarkers(ChildJvm r, String start, int count) {
        try {
            await().atMost(WAIT).until(() -> r.durable().stream().filter(m -> m.startsWith(start)).count() >= count);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            String err = r.stderr();
            fail(r + " did not confirm " + count + " writes " + start + "* within " + WAIT + "; its stderr ends:\n"
                    + err.substring(Math.max(0, err.length() - 4000)), e);
        }
    }

    private static long claimedAt(ChildJvm r, String agent) throws InterruptedException {
        await().atMost(WAIT).until(() -> r.lines().stream().anyMatch(l -> l.startsWith("CLAIMED " + agent + " ")));
        String line = r.lines().stream().filter(l -> l.startsWith("CLAIMED " + agent + " ")).reduce((a, b) -> b)
                .orElseThrow();
        return Long.parseLong(line.split(" ")[3]);
    }

    /** {@return the writes in the log not yet delivered, over every agent} */
    private long backlog() throws SQLException {
        try (Connection c = PostgresAvailability.connect()) {
            return SharedLog.inspect(c, prefix).stream().mapToLong(l -> l.backlog() + l.keptRows()).sum();
        }
    }

    private StoredMarkers stored() throws SQLException {
        try (Connection c = PostgresAvailability.connect()) {
            return StoredMarkers.read(c, prefix);
        }
    }

    private String whose(String marker) {
        Matcher m = MARKER.matcher(marker);
        return m.matches() ? "agent " + m.group(1) + ", accepted by " + m.group(2) : "?";
    }

    /**
     * Checks each conversation's confirmed writes are stored in the order they were accepted: by
     * the replicas in the order the agent moved, each replica's in its own order.
     */
    private static void assertConversationsInOrder(StoredMarkers stored, Set<String> confirmed,
            Map<String, List<String>> moves) {
        Map<String, List<String>> byAgent = new HashMap<>();
        for (String marker : stored.markersInOrder()) {
            Matcher m = MARKER.matcher(marker);
            if (m.matches() && confirmed.contains(marker)) {
                byAgent.computeIfAbsent(m.group(1), k -> new ArrayList<>()).add(marker);
            }
        }
        moves.forEach((agent, lives) -> {
            List<String> inStore = byAgent.getOrDefault(agent, List.of());
            List<String> accepted = new ArrayList<>(inStore);
            accepted.sort(Comparator.comparing((String s) -> lives.indexOf(group(s, 2)))
                    .thenComparingLong(s -> Long.parseLong(group(s, 3))));
            assertThat(inStore).as("conversation %s in the store, against the order of acceptance", agent)
                    .isNotEmpty().containsExactlyElementsOf(accepted);
        });
    }

    private static String group(String marker, int group) {
        Matcher m = MARKER.matcher(marker);
        if (!m.matches()) {
            throw new IllegalArgumentException(marker);
        }
        return m.group(group);
    }

    private static void requirePgCtl() {
        if (System.getenv("MEMLIFE_PG_CTL") != null && System.getenv("MEMLIFE_PG_DATA") != null) {
            return;
        }
        String why = "restarting PostgreSQL needs MEMLIFE_PG_CTL and MEMLIFE_PG_DATA (.ci/postgres.sh exports them)";
        if (PostgresAvailability.REQUIRED) {
            fail(why);
        }
        Assumptions.abort(why);
    }

    /** {@code pg_ctl restart -m fast}, as the cluster's owner: every connection is dropped, the server back in a second or two. */
    private static void restartPostgres() throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        if ("root".equals(System.getProperty("user.name"))) {
            command.addAll(List.of("runuser", "-u", "postgres", "--"));
        }
        command.addAll(List.of(System.getenv("MEMLIFE_PG_CTL"), "-D", System.getenv("MEMLIFE_PG_DATA"), "restart",
                "-m", "fast", "-w", "-t", "60"));
        Process p = new ProcessBuilder(command).directory(Path.of("/tmp").toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertThat(p.waitFor(90, TimeUnit.SECONDS)).as("pg_ctl restart returned").isTrue();
        assertThat(p.exitValue()).as("pg_ctl restart's exit code").isZero();
    }
}
