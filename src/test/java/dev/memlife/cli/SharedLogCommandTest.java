package dev.memlife.cli;

import static dev.memlife.cli.CliRun.NO_STACK_TRACE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.memlife.MemoryManager;
import dev.memlife.Turn;
import dev.memlife.spool.AgentLog;
import dev.memlife.spool.SharedLog;
import dev.memlife.store.CuttableDataSource;
import dev.memlife.store.PostgresAvailability;
import dev.memlife.testing.GatedProvider;
import dev.memlife.testing.RecordingProvider;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code memlife shared-log} on a real PostgreSQL: a shared log written by two replicas in this
 * JVM through memory managers, one of which the test cuts off the database (its replica "dies"),
 * then read by the command, whose lines are checked column by column against what the replicas
 * did. Leases of 1 s.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SharedLogCommandTest {

    private static final Duration LEASE = Duration.ofSeconds(1);
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String PASSWORD_VARIABLE = "MEMLIFE_TEST_PG_PASSWORD";

    private final String prefix = "cli_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10) + "_";
    private final List<MemoryManager> managers = new ArrayList<>();
    private final List<GatedProvider> gates = new ArrayList<>();
    private final List<SharedLog> logs = new ArrayList<>();

    private static void requirePostgres() {
        PostgresAvailability.require();
    }

    @AfterEach
    void closeAndDropTables() throws Exception {
        gates.forEach(GatedProvider::open);
        for (MemoryManager m : managers) {
            m.stop(Duration.ofSeconds(2));
        }
        for (SharedLog log : logs) {
            log.close();
        }
        PostgresAvailability.dropTables(prefix, "shared_log", "shared_log_leases");
    }

    // ---- the replicas ------------------------------------------------------------------------------

    /** A replica reaching the database through {@code db}, which the test may cut. */
    private SharedLog replica(String name, CuttableDataSource db) {
        SharedLog log = SharedLog.postgres(db).tablePrefix(prefix).replica(name).lease(LEASE)
                .sweepInterval(Duration.ofMillis(200)).claimTimeout(Duration.ofSeconds(10))
                .closeTimeout(Duration.ofSeconds(1)).open();
        logs.add(log);
        return log;
    }

    /** A replica built from the JDBC URL, user and password, as a service builds it. */
    private SharedLog replicaByUrl(String name) {
        SharedLog log = SharedLog.postgres(PostgresAvailability.URL).user(PostgresAvailability.USER)
                .password(PostgresAvailability.PASSWORD).tablePrefix(prefix).replica(name).lease(LEASE)
                .sweepInterval(Duration.ofMillis(200)).closeTimeout(Duration.ofSeconds(5)).open();
        logs.add(log);
        return log;
    }

    private MemoryManager manager(String name, AgentLog log, RecordingProvider provider) {
        MemoryManager m = MemoryManager.builder().name(name).spool(log).build();
        m.addProvider(provider);
        managers.add(m);
        return m;
    }

    private GatedProvider gate(GatedProvider provider) {
        gates.add(provider);
        return provider;
    }

    private static void write(MemoryManager m, String marker, IntStream writes) {
        writes.forEach(i -> assertThat(m.syncAll(marker + i, "reply " + i, "session-" + marker)).isTrue());
        assertThat(m.awaitDurable(WAIT)).as("committed in PostgreSQL").isTrue();
    }

    /** The lease and backlog of {@code agent} as the shared log's own reader sees them. */
    private SharedLog.Lease lease(String agent) throws SQLException {
        try (Connection c = PostgresAvailability.connect()) {
            return SharedLog.inspect(c, prefix).stream().filter(l -> l.agent().equals(agent)).findFirst()
                    .orElseThrow();
        }
    }

    // ---- running the command -----------------------------------------------------------------------

    private record Result(int exit, String out, String err) {

        /** The table's rows, by agent: every column, split where two spaces or more stand. */
        Map<String, List<String>> rows() {
            Map<String, List<String>> rows = new LinkedHashMap<>();
            String[] lines = out.split("\n");
            int header = -1;
            for (int i = 0; i < lines.length; i++) {
                if (lines[i].startsWith("AGENT ")) {
                    header = i;
                    break;
                }
            }
            assertThat(header).as("the table's header in%n%s", out).isNotNegative();
            assertThat(List.of(lines[header].trim().split("\\s{2,}"))).containsExactly("AGENT", "OWNER", "EPOCH",
                    "LEASE", "EXPIRES AT", "DELIVERED", "LAST", "BACKLOG", "KEPT ROWS");
            for (int i = header + 1; i < lines.length && !lines[i].isBlank(); i++) {
                List<String> columns = List.of(lines[i].split("\\s{2,}"));
                assertThat(columns).as(lines[i]).hasSize(9);
                rows.put(columns.get(0), columns);
            }
            return rows;
        }

        /** The value of the one line {@code "  label: value"}. */
        String value(String label) {
            Matcher m = Pattern.compile("(?m)^ {2}" + Pattern.quote(label) + ":\\s+(.*)$").matcher(out);
            assertThat(m.find()).as("'%s' in%n%s", label, out).isTrue();
            String value = m.group(1);
            assertThat(m.find()).as("a second '%s' in%n%s", label, out).isFalse();
            return value;
        }
    }

    private static Result run(Function<String, String> env, String... args) {
        CliRun run = CliRun.run(env, args);
        return new Result(run.exit(), run.out(), run.err());
    }

    private static Result run(String... args) {
        return run(name -> null, args);
    }

    /** {@code shared-log} on the test's database, the password read from the environment. */
    private Result sharedLog() {
        return run(Map.of(PASSWORD_VARIABLE, PostgresAvailability.PASSWORD)::get, "shared-log", "--jdbc",
                PostgresAvailability.URL, "--user", PostgresAvailability.USER, "--password-env", PASSWORD_VARIABLE,
                "--table-prefix", prefix);
    }

    private static List<String> columns(String agent, String owner, long epoch, String lease, long delivered,
            long last, long backlog, long keptRows) {
        return List.of(agent, owner, Long.toString(epoch), lease, "?", Long.toString(delivered), Long.toString(last),
                Long.toString(backlog), Long.toString(keptRows));
    }

    /** A row with its lease column cut to the state and its expiry left out, to compare with {@link #columns}. */
    private static List<String> comparable(List<String> row) {
        List<String> r = new ArrayList<>(row);
        r.set(3, r.get(3).replaceFirst(" \\(.*\\)$", ""));
        r.set(4, "?");
        return r;
    }

    // ---- the tests ---------------------------------------------------------------------------------

    @Test
    void listsEveryAgentsOwnerEpochLeaseAndBacklogAndExitsWithOneWhileWritesWaitForAHolder() throws Exception {
        requirePostgres();
        CuttableDataSource dbA = new CuttableDataSource();
        SharedLog a = replica("replica-a", dbA);
        SharedLog b = replicaByUrl("replica-b");

        // agent-released: 7 writes on B, all delivered, its manager stopped: the lease let go.
        RecordingProvider releasedStore = new RecordingProvider("store");
        MemoryManager released = manager("b/agent-released", b.agent("agent-released"), releasedStore);
        write(released, "r", IntStream.range(0, 7));
        assertThat(released.stop().delivered()).isEqualTo(7);

        // agent-busy: 20 writes on B, the first 5 delivered and marked, the 6th held in the store.
        GatedProvider busyStore = gate(new GatedProvider("store", t -> Integer.parseInt(t.userContent().substring(1)) >= 5));
        MemoryManager busy = manager("b/agent-busy", b.agent("agent-busy"), busyStore);
        write(busy, "u", IntStream.range(0, 5));
        assertThat(busy.flushPending(WAIT)).isTrue();
        write(busy, "u", IntStream.range(5, 20));
        assertThat(busyStore.awaitHeld(WAIT)).isTrue();

        // agent-dead: 10 writes on A, none delivered (the store holds the first), then A is cut off.
        GatedProvider deadStore = gate(new GatedProvider("store"));
        MemoryManager dead = manager("a/agent-dead", a.agent("agent-dead"), deadStore);
        write(dead, "d", IntStream.range(0, 10));
        assertThat(deadStore.awaitHeld(WAIT)).isTrue();
        dbA.cut();

        await().atMost(WAIT).until(() -> !lease("agent-dead").live() && lease("agent-busy").deliveredPosition() == 5);
        Result r = sharedLog();

        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(Main.EXIT_PROBLEMS);
        assertThat(r.err()).isEmpty();
        assertThat(r.out()).startsWith("shared log " + prefix + "shared_log in " + PostgresAvailability.URL + ", read at ");
        Map<String, List<String>> rows = r.rows();
        assertThat(rows.keySet()).containsExactly("agent-busy", "agent-dead", "agent-released");
        assertThat(comparable(rows.get("agent-busy"))).isEqualTo(columns("agent-busy", "replica-b", 1, "live", 5, 20, 15, 0));
        assertThat(comparable(rows.get("agent-dead"))).isEqualTo(columns("agent-dead", "replica-a", 1, "expired", 0, 10, 10, 0));
        assertThat(comparable(rows.get("agent-released")))
                .isEqualTo(columns("agent-released", "replica-b", 1, "released", 7, 7, 0, 0));
        assertThat(rows.get("agent-busy").get(3)).matches("live \\((\\d+ ms|1 s) left\\)");
        assertThat(rows.get("agent-dead").get(3)).matches("expired \\(.+ ago\\)");
        // The expiries that no longer move are printed as the log holds them.
        assertThat(rows.get("agent-dead").get(4))
                .isEqualTo(lease("agent-dead").expiresAt().truncatedTo(ChronoUnit.MILLIS).toString());
        assertThat(rows.get("agent-released").get(4))
                .isEqualTo(lease("agent-released").expiresAt().truncatedTo(ChronoUnit.MILLIS).toString());

        assertThat(r.value("agents")).isEqualTo("3");
        assertThat(r.value("live leases")).isEqualTo("1");
        assertThat(r.value("expired leases")).startsWith("1 (their replica died");
        assertThat(r.value("released leases")).isEqualTo("1");
        assertThat(r.value("backlog")).isEqualTo("25 writes undelivered, of 2 agents");
        assertThat(r.value("kept rows")).isEqualTo("0");
        assertThat(r.value("waiting for a holder")).isEqualTo("1 agent, 10 writes, 0 kept rows");
        assertThat(r.out()).contains("\nresult: 1 agent has writes undelivered and no live lease");

        // B takes agent-dead over: the next epoch, B's, and its 10 writes delivered there.
        RecordingProvider takenStore = new RecordingProvider("store");
        MemoryManager taken = manager("b/agent-dead", b.agent("agent-dead"), takenStore);
        assertThat(taken.replaySpool()).isEqualTo(10);
        assertThat(taken.flushPending(WAIT)).isTrue();
        assertThat(takenStore.turns()).extracting(Turn::userContent)
                .containsExactlyElementsOf(IntStream.range(0, 10).mapToObj(i -> "d" + i).toList());
        await().atMost(WAIT).until(() -> lease("agent-dead").deliveredPosition() == 10);

        Result after = sharedLog();

        assertThat(after.exit()).as(after.out() + after.err()).isEqualTo(Main.EXIT_OK);
        assertThat(comparable(after.rows().get("agent-dead")))
                .isEqualTo(columns("agent-dead", "replica-b", 2, "live", 10, 10, 0, 0));
        assertThat(comparable(after.rows().get("agent-busy")))
                .isEqualTo(columns("agent-busy", "replica-b", 1, "live", 5, 20, 15, 0));
        assertThat(after.value("live leases")).isEqualTo("2");
        assertThat(after.value("expired leases")).isEqualTo("0");
        assertThat(after.value("backlog")).isEqualTo("15 writes undelivered, of 1 agent");
        assertThat(after.value("waiting for a holder")).isEqualTo("0 agents, 0 writes, 0 kept rows");
        assertThat(after.out()).endsWith("\nresult: no writes wait for a holder\n");
    }

    @Test
    void aLogWithNoAgentYetListsNoneAndExitsWithZero() {
        requirePostgres();
        replicaByUrl("replica-a");

        Result r = sharedLog();

        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(Main.EXIT_OK);
        assertThat(r.out()).contains("\nno agents: no replica has claimed one yet\n").doesNotContain("AGENT");
        assertThat(r.value("agents")).isEqualTo("0");
        assertThat(r.value("waiting for a holder")).isEqualTo("0 agents, 0 writes, 0 kept rows");
    }

    @Test
    void aPrefixWithNoSharedLogCannotRunAndSaysWhichTablesAreMissing() {
        requirePostgres();
        Result missing = sharedLog(); // no replica opened this prefix: no tables

        assertThat(missing.exit()).as(missing.out() + missing.err()).isEqualTo(Main.EXIT_CANNOT_RUN);
        assertThat(missing.out()).isEmpty();
        assertThat(missing.err()).startsWith("memlife shared-log: no shared log with table prefix '" + prefix + "'")
                .contains("relation \"" + prefix + "shared_log_leases\" does not exist")
                .contains("check --table-prefix").doesNotContain("Position:").doesNotContainPattern(NO_STACK_TRACE);
    }

    @Test
    void anUnreachableDatabaseCannotRunAndNeverPrintsThePassword() {
        Result url = run(Map.of("PGPASS", "envsecret")::get, "shared-log", "--jdbc",
                "jdbc:postgresql://127.0.0.1:1/memlife?user=app&password=urlsecret", "--password-env", "PGPASS");
        assertThat(url.exit()).as(url.out() + url.err()).isEqualTo(Main.EXIT_CANNOT_RUN);
        assertThat(url.out()).isEmpty();
        assertThat(url.err()).startsWith("memlife shared-log: could not read the shared log")
                .contains("jdbc:postgresql://127.0.0.1:1/memlife").doesNotContain("urlsecret")
                .doesNotContain("envsecret").doesNotContainPattern(NO_STACK_TRACE);

        Result args = run("shared-log", "--jdbc", "jdbc:postgresql://127.0.0.1:1/memlife", "--user", "app",
                "--password", "argsecret");
        assertThat(args.exit()).isEqualTo(Main.EXIT_CANNOT_RUN);
        assertThat(args.err()).doesNotContain("argsecret");
    }

    @Test
    void usageErrorsExitWithTwoNameTheProblemAndPrintTheSharedLogsUsage() {
        String url = "jdbc:postgresql://127.0.0.1:1/memlife";
        Object[][] cases = {
            {new String[] {"shared-log"}, "missing --jdbc URL"},
            {new String[] {"shared-log", "--jdbc", "jdbc:sqlite:/tmp/x.db"}, "invalid --jdbc 'jdbc:sqlite:/tmp/x.db'"},
            {new String[] {"shared-log", "--jdbc", url, "inspect"}, "unexpected argument 'inspect'"},
            {new String[] {"shared-log", "--jdbc", url, "--timeout", "5s"}, "unknown option '--timeout'"},
            {new String[] {"shared-log", "--jdbc", url, "--table-prefix", "1x"}, "invalid --table-prefix '1x'"},
            {new String[] {"shared-log", "--jdbc", url, "--table-prefix", "x;drop"}, "invalid --table-prefix 'x;drop'"},
            {new String[] {"shared-log", "--jdbc", url, "--password", "p", "--password-env", "P"}, "not both"},
            {new String[] {"shared-log", "--jdbc", url, "--password-env", "NO_SUCH_VARIABLE"},
                "invalid --password-env 'NO_SUCH_VARIABLE'"},
            {new String[] {"shared-log", "--jdbc", url, "--jdbc", url}, "option --jdbc given twice"},
        };
        for (Object[] c : cases) {
            CliRun.run((String[]) c[0]).assertUsageError((String) c[1], "Usage: memlife shared-log --jdbc URL", "'memlife shared-log --help' for more");
        }
        Result unknown = run("frobnicate");
        assertThat(unknown.err()).contains("'spool inspect', 'spool replay' and 'shared-log'");
    }

    @Test
    void helpNamesTheCommandItsColumnsAndItsExitCodes() {
        Result top = run("--help");
        assertThat(top.exit()).isZero();
        assertThat(top.out()).contains("memlife shared-log --jdbc URL", "shared-log          a shared log's agents",
                "shared-log: writes undelivered and no live lease");
        Result help = run("shared-log", "--jdbc", "x", "--bogus", "-h"); // help wins over every error
        assertThat(help.exit()).isZero();
        assertThat(help.err()).isEmpty();
        assertThat(help.out()).startsWith(SharedLogCommand.USAGE).contains("OWNER", "EPOCH", "EXPIRES AT", "BACKLOG",
                "KEPT ROWS", "--table-prefix X", "--password-env VAR", "Exit codes: 0");
    }
}
