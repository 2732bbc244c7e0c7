package dev.memlife.cli;

import dev.memlife.spool.SharedLog;
import dev.memlife.store.JdbcBuilder;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.function.Function;

/**
 * {@code memlife shared-log}: every agent of a {@link SharedLog}, read from its tables with
 * {@link SharedLog#inspect}: who holds or last held its lease, at which epoch, whether the lease is
 * live, expired or released and when it ends or ended, and the writes not yet delivered. Reads
 * only, in one read-only transaction, so every lease is judged live or expired by the database's
 * clock at one instant, the clock the replicas' leases run on.
 */
final class SharedLogCommand {

    static final String COMMAND = "shared-log";

    static final String USAGE = """
            Usage: memlife shared-log --jdbc URL [--user U] [--password P | --password-env VAR]
                                      [--table-prefix X]
            """;

    static final String HELP = USAGE + """

            Lists every agent of the shared log (dev.memlife.spool.SharedLog) in the
            PostgreSQL database at URL, one line each:
              AGENT      the agent's key
              OWNER      the replica that holds its lease, or held it last
              EPOCH      the lease's epoch: one more at every claim
              LEASE      live (and how long it has left), expired (its replica died, froze
                         or lost the database without letting it go: the next claim takes
                         it over), or released (let go by a manager's shutdown)
              EXPIRES AT when the lease ends, or ended (UTC, the database's clock)
              DELIVERED  the position up to which its writes were delivered
              LAST       the position of its last write
              BACKLOG    writes appended and not yet marked delivered
              KEPT ROWS  rows of writes a provider failed, delivered again at the next claim
            then the totals, and the agents whose writes wait for a holder: writes
            undelivered under a lease that is not live. A replica whose shared log has an
            adopter takes such an agent over within a sweep interval; without an adopter
            they wait for the agent's next acquire.

            Reads only, in one transaction: safe while the replicas run.

            Options:
              --jdbc URL            the shared log's database: jdbc:postgresql://HOST[:PORT]/DB
                                    (required; the postgresql driver must be on the class path)
              --user U              database user
              --password P          database password (other users may see it in the
                                    process list: prefer --password-env)
              --password-env VAR    read the database password from environment variable VAR
              --table-prefix X      the shared log's table prefix (default memlife_)

            Exit codes: 0 no writes wait for a holder; 1 an agent has writes undelivered
                        and no live lease; 2 usage error; 3 could not run (database
                        unreachable, no shared log with that table prefix).
            """;

    static final Set<String> OPTIONS = Set.of("--jdbc", "--user", "--password", "--password-env", "--table-prefix");

    /** How long the tool waits to connect, and for an answer, in seconds. */
    private static final String CONNECT_TIMEOUT = "10";
    private static final String SOCKET_TIMEOUT = "60";

    private static final String LABEL = "  %-24s %s%n";
    private static final String[] HEADERS = {
        "AGENT", "OWNER", "EPOCH", "LEASE", "EXPIRES AT", "DELIVERED", "LAST", "BACKLOG", "KEPT ROWS"
    };
    /** The columns printed right-aligned: the numbers. */
    private static final Set<Integer> NUMERIC = Set.of(2, 5, 6, 7, 8);

    private final PrintStream out;
    private final Function<String, String> env;

    SharedLogCommand(PrintStream out, Function<String, String> env) {
        this.out = out;
        this.env = env;
    }

    /** What {@link SharedLog#inspect} read, and the database's time when it read it. */
    private record Seen(List<SharedLog.Lease> leases, Instant now) {}

    int run(Arguments p) {
        String url = p.options.get("--jdbc");
        if (url == null) {
            throw p.usage("missing --jdbc URL (the shared log's database, e.g. jdbc:postgresql://db/app)");
        }
        if (!url.startsWith("jdbc:postgresql:")) {
            throw p.usage("invalid --jdbc '" + Main.maskUrl(url) + "': a shared log lives in PostgreSQL "
                    + "(jdbc:postgresql://HOST[:PORT]/DB expected)");
        }
        String prefix = p.options.getOrDefault("--table-prefix", JdbcBuilder.DEFAULT_TABLE_PREFIX);
        try {
            JdbcBuilder.checkTablePrefix(prefix);
        } catch (IllegalArgumentException e) {
            throw p.usage("invalid --table-prefix '" + prefix + "': letters, digits and '_', starting with a letter "
                    + "or '_', at most 40; or empty");
        }
        Properties connection = new Properties();
        String user = p.options.get("--user");
        if (user != null) {
            connection.setProperty("user", user);
        }
        String password = p.password(env);
        if (password != null) {
            connection.setProperty("password", password);
        }
        connection.setProperty("connectTimeout", CONNECT_TIMEOUT);
        connection.setProperty("socketTimeout", SOCKET_TIMEOUT);
        connection.setProperty("ApplicationName", "memlife shared-log");

        Seen seen = read(url, connection, prefix);
        print(Main.maskUrl(url), prefix, seen);
        return result(seen);
    }

    private static Seen read(String url, Properties properties, String prefix) {
        String where = Main.maskUrl(url);
        try (Connection c = DriverManager.getConnection(url, properties)) {
            c.setAutoCommit(false);
            c.setReadOnly(true);
            try {
                Instant now; // now() is the transaction's start: the instant inspect judges every lease at
                try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT now()")) {
                    r.next();
                    now = r.getTimestamp(1).toInstant();
                }
                return new Seen(SharedLog.inspect(c, prefix), now);
            } finally {
                c.rollback();
            }
        } catch (SQLException e) {
            String why = Main.describe(e);
            if ("42P01".equals(e.getSQLState())) { // undefined_table; the next lines say where in the query
                throw new Main.CannotRunException(COMMAND, "no shared log with table prefix '" + prefix + "' in "
                        + where + ": " + why.lines().findFirst().orElse(why) + "\nIts tables are " + prefix + "shared_log and " + prefix
                        + "shared_log_leases, created by the first replica that opens it; check --table-prefix.");
            }
            String at = why.contains(where) ? "" : " in " + where;
            String hint = why.contains("No suitable driver")
                    ? "\nPut the PostgreSQL JDBC driver (postgresql.jar) on the class path." : "";
            throw new Main.CannotRunException(COMMAND, "could not read the shared log" + at + ": " + why + hint);
        }
    }

    private void print(String where, String prefix, Seen seen) {
        out.println("shared log " + prefix + "shared_log in " + where + ", read at "
                + seen.now().truncatedTo(ChronoUnit.MILLIS) + " (the database's clock)");
        out.println();
        if (seen.leases().isEmpty()) {
            out.println("no agents: no replica has claimed one yet");
        } else {
            List<String[]> rows = new ArrayList<>();
            rows.add(HEADERS);
            for (SharedLog.Lease lease : seen.leases()) {
                rows.add(row(lease, seen.now()));
            }
            table(rows);
        }
        out.println();
        long live = 0;
        long expired = 0;
        long released = 0;
        long backlog = 0;
        long backlogAgents = 0;
        long kept = 0;
        for (SharedLog.Lease lease : seen.leases()) {
            switch (state(lease)) {
                case "live" -> live++;
                case "expired" -> expired++;
                default -> released++;
            }
            backlog += lease.backlog();
            backlogAgents += lease.backlog() > 0 ? 1 : 0;
            kept += lease.keptRows();
        }
        List<SharedLog.Lease> waiting = waiting(seen);
        long waitingWrites = waiting.stream().mapToLong(SharedLog.Lease::backlog).sum();
        long waitingKept = waiting.stream().mapToLong(SharedLog.Lease::keptRows).sum();
        out.println("totals");
        out.printf(LABEL, "agents:", seen.leases().size());
        out.printf(LABEL, "live leases:", live);
        out.printf(LABEL, "expired leases:", expired + (expired == 0 ? ""
                : " (their replica died, froze or lost the database; the next claim takes them over)"));
        out.printf(LABEL, "released leases:", released);
        out.printf(LABEL, "backlog:", Main.count(backlog, "write", "writes")
                + (backlog == 0 ? "" : " undelivered, of " + Main.count(backlogAgents, "agent", "agents")));
        out.printf(LABEL, "kept rows:", kept + (kept == 0 ? "" : " (writes a provider failed; delivered again at the "
                + "agent's next claim)"));
        out.printf(LABEL, "waiting for a holder:", Main.count(waiting.size(), "agent", "agents") + ", "
                + Main.count(waitingWrites, "write", "writes") + ", " + Main.count(waitingKept, "kept row",
                        "kept rows"));
        out.println();
    }

    private int result(Seen seen) {
        List<SharedLog.Lease> waiting = waiting(seen);
        if (waiting.isEmpty()) {
            out.println("result: no writes wait for a holder");
            return Main.EXIT_OK;
        }
        out.println("result: " + Main.count(waiting.size(), "agent has", "agents have") + " writes undelivered and no "
                + "live lease: a replica whose shared log has an adopter takes each over within a sweep interval; "
                + "without an adopter they wait for the agent's next acquire");
        return Main.EXIT_PROBLEMS;
    }

    /** The agents with writes undelivered (a backlog, or kept rows) under a lease that is not live. */
    private static List<SharedLog.Lease> waiting(Seen seen) {
        return seen.leases().stream().filter(l -> !state(l).equals("live") && (l.backlog() > 0 || l.keptRows() > 0))
                .toList();
    }

    /** {@code live}, {@code expired} or {@code released}: a released lease is never live. */
    private static String state(SharedLog.Lease lease) {
        if (lease.released()) {
            return "released";
        }
        return lease.live() ? "live" : "expired";
    }

    private static String[] row(SharedLog.Lease lease, Instant now) {
        String state = state(lease);
        String when = state.equals("live") ? Main.human(positive(Duration.between(now, lease.expiresAt()))) + " left"
                : Main.human(positive(Duration.between(lease.expiresAt(), now))) + " ago";
        // Rows of delivered writes are deleted: the last position is then the delivered one.
        long last = Math.max(lease.lastPosition(), lease.deliveredPosition());
        return new String[] {
            lease.agent(), lease.owner(), Long.toString(lease.epoch()), state + " (" + when + ")",
            lease.expiresAt().truncatedTo(ChronoUnit.MILLIS).toString(), Long.toString(lease.deliveredPosition()),
            Long.toString(last), Long.toString(lease.backlog()), Long.toString(lease.keptRows())
        };
    }

    private static Duration positive(Duration d) {
        return d.isNegative() ? Duration.ZERO : d;
    }

    /** Prints rows in columns two spaces apart; text left-aligned, numbers right-aligned. */
    private void table(List<String[]> rows) {
        int[] width = new int[HEADERS.length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                width[i] = Math.max(width[i], row[i].length());
            }
        }
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.length; i++) {
                if (i > 0) {
                    line.append("  ");
                }
                String pad = " ".repeat(width[i] - row[i].length());
                line.append(NUMERIC.contains(i) ? pad + row[i] : row[i] + pad);
            }
            out.println(line.toString().stripTrailing());
        }
    }
}
