package dev.memlife.cli;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.SpoolFigures;
import dev.memlife.WriteFigures;
import dev.memlife.spool.Spool;
import dev.memlife.spool.SpoolInspection;
import dev.memlife.store.JdbcMemoryProvider;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * memlife's command line, for the operator of a service that uses a durable spool or a shared
 * log.
 *
 * <pre>
 * java -cp memlife.jar:slf4j-api.jar[:DRIVER.jar] dev.memlife.cli.Main spool inspect DIR
 * java -cp memlife.jar:slf4j-api.jar:DRIVER.jar dev.memlife.cli.Main spool replay DIR --jdbc URL
 *     [--user U] [--password P | --password-env VAR] [--table-prefix X] [--timeout DURATION]
 * java -cp memlife.jar:slf4j-api.jar:postgresql.jar dev.memlife.cli.Main shared-log --jdbc URL
 *     [--user U] [--password P | --password-env VAR] [--table-prefix X]
 * </pre>
 *
 * <ul>
 *   <li>{@code spool inspect DIR} prints each segment of the spool (file, bytes, records, pending
 *       writes, torn-tail bytes, every damaged stretch with its offset, length and reason, or why
 *       it cannot be read), then the totals: pending writes, the oldest pending write (time and
 *       age), damaged stretches, torn-tail bytes, the delivery mark. It reads only ({@link
 *       SpoolInspection#of}): no lock is taken and nothing is cut or deleted, so it is safe on
 *       the spool of a running process.
 *   <li>{@code spool replay DIR --jdbc URL} opens the spool (and its lock: it fails if another
 *       process holds it), builds a {@link MemoryManager} on it with a {@link JdbcMemoryProvider}
 *       on {@code URL}, replays the spool ({@link MemoryManager#replaySpool()}), shuts down within
 *       the timeout ({@link MemoryManager#stop(Duration)}), and prints the accounting:
 *       writes replayed, delivered, failed and abandoned (with their write ids), still running at
 *       the deadline, corrupt records skipped, torn-tail bytes cut, the batches it stored them in
 *       (up to {@value #REPLAY_BATCH} writes, one transaction each), and what the spool holds
 *       afterwards. The store skips write ids it already holds, so a replay may be repeated.
 *   <li>{@code shared-log --jdbc URL} lists every agent of a {@link dev.memlife.spool.SharedLog}
 *       in that PostgreSQL database, one line each: the lease's owner, epoch, state (live,
 *       expired or released) and expiry, the delivered and last positions, the backlog and the
 *       kept rows; then the totals and the agents whose writes wait for a holder. It reads only,
 *       in one transaction ({@code SharedLogCommand}).
 * </ul>
 *
 * <p>{@code -h} or {@code --help} at any level prints that level's usage. Exit codes:
 * <ul>
 *   <li>{@value #EXIT_OK}: success;
 *   <li>{@value #EXIT_PROBLEMS}: the command ran but found problems: {@code inspect} found damaged
 *       stretches or unreadable segments; {@code replay} has writes that failed, were abandoned at
 *       the deadline, or were still running at it; {@code shared-log} found an agent with writes
 *       undelivered and no live lease;
 *   <li>{@value #EXIT_USAGE}: usage error: unknown command or option, missing or invalid argument;
 *   <li>{@value #EXIT_CANNOT_RUN}: could not run: the directory is missing, the spool is locked by
 *       another process or has a segment this memlife cannot read, the database cannot be
 *       reached or has no shared log with the table prefix given, an I/O error.
 * </ul>
 * Errors go to standard error, naming what failed and the value it failed on (a JDBC URL's
 * password masked).
 *
 * <p>On the module path the tool runs as {@code java -p memlife.jar:slf4j-api.jar:DRIVER.jar -m
 * dev.memlife/dev.memlife.cli.Main ...}: the module need not export this package to run its main
 * class, and the driver is resolved by service binding ({@code java.sql} uses {@code
 * java.sql.Driver}, which sqlite-jdbc and postgresql provide).
 *
 * <p>memlife logs through SLF4J. Without a provider on the class path SLF4J prints a three-line
 * notice and drops the log; the report does not need it (why the store refused a write is
 * printed too). Add one, {@code slf4j-simple.jar} for instance, to see the log on standard error.
 *
 * <p>One idea past 500 lines: the command line, whose spool commands' usage texts, reports and
 * exit codes read best side by side; parsing is {@code Arguments}, the store a replay writes to
 * {@code ReplayStore}, the shared log's listing {@code SharedLogCommand}.
 */
public final class Main {

    /** Exit code: success. */
    public static final int EXIT_OK = 0;
    /** Exit code: the command ran but found problems (damage, or writes not delivered). */
    public static final int EXIT_PROBLEMS = 1;
    /** Exit code: usage error (unknown command or option, missing or invalid argument). */
    public static final int EXIT_USAGE = 2;
    /** Exit code: could not run (directory missing, spool locked, database unreachable, I/O error). */
    public static final int EXIT_CANNOT_RUN = 3;

    /** How long {@code spool replay} gives the store, after the replay is queued, by default. */
    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);
    /** The manager's name in logs and thread names. */
    static final String MANAGER_NAME = "memlife-cli";
    /**
     * The most writes a replay hands the store at once, in one transaction: the most the JDBC
     * store puts in one ({@value}). The tool owns its manager and its store, so it need not keep
     * to a service's batch size; on SQLite a replay of 1,000,000 writes stored 20 to 30% more rows
     * per second than in batches of 1,024, the manager's default.
     */
    static final int REPLAY_BATCH = JdbcMemoryProvider.LARGEST_COMBINED_TRANSACTION;

    private static final String RUN_AS =
            "memlife = java -cp memlife.jar:slf4j-api.jar[:JDBC-DRIVER.jar] dev.memlife.cli.Main\n"
            + "(add an SLF4J provider such as slf4j-simple.jar to the class path to see memlife's log)";

    private static final String EXIT_CODES = """
            Exit codes:
              0  success
              1  the command ran but found problems (inspect: damaged stretches or
                 unreadable segments; replay: writes failed, abandoned or still running
                 at the deadline; shared-log: writes undelivered and no live lease)
              2  usage error: unknown command or option, missing or invalid argument
              3  could not run: directory missing, spool locked by another process,
                 unreadable segment, database unreachable, no shared log with that
                 table prefix, I/O error
            """;

    static final String USAGE = """
            Usage: memlife spool inspect DIR
                   memlife spool replay DIR --jdbc URL [--user U] [--password P | --password-env VAR]
                                        [--table-prefix X] [--timeout DURATION]
                   memlife shared-log --jdbc URL [--user U] [--password P | --password-env VAR]
                                      [--table-prefix X]
                   memlife [spool [inspect|replay] | shared-log] --help
            """;

    static final String HELP = "memlife: tools for memlife's durable spool and shared log.\n\n" + USAGE + """

            Commands:
              spool inspect DIR   what a spool directory holds: segments, pending writes,
                                  damage, torn tails, the delivery mark (read-only; safe
                                  on the spool of a running process)
              spool replay DIR    deliver the writes a spool holds to a JDBC store, then
                                  report what became of each
              shared-log          a shared log's agents in PostgreSQL: each lease's
                                  owner, epoch, state and expiry, and the writes not
                                  yet delivered (read-only; safe while replicas run)

            """ + EXIT_CODES + "\n" + RUN_AS + "\n";

    static final String SPOOL_HELP = "memlife spool: inspect or replay a durable spool.\n\n" + USAGE + "\n"
            + "Run 'memlife spool inspect --help' or 'memlife spool replay --help' for details.\n\n" + EXIT_CODES;

    static final String INSPECT_USAGE = "Usage: memlife spool inspect DIR\n";

    static final String INSPECT_HELP = INSPECT_USAGE + """

            Prints each segment file of the spool in DIR (bytes, records, pending writes,
            torn-tail bytes, every damaged stretch with its offset, length and reason, or
            why it cannot be read), then the totals: pending writes, the oldest pending
            write (time and age), damaged stretches, torn-tail bytes, the delivery mark.

            Reads only: takes no lock, cuts and deletes nothing, so it is safe on the spool
            of a running process (whose last segment may then end in a torn tail: a record
            being written at that moment).

            Exit codes: 0 no damage; 1 damaged stretches or unreadable segments;
                        2 usage error; 3 DIR missing or unreadable.
            """;

    static final String REPLAY_USAGE = """
            Usage: memlife spool replay DIR --jdbc URL [--user U] [--password P | --password-env VAR]
                                        [--table-prefix X] [--timeout DURATION]
            """;

    static final String REPLAY_HELP = REPLAY_USAGE + """

            Opens the spool in DIR (taking its lock: fails if a running process holds it),
            delivers every write in it not yet delivered to the JDBC store at URL, in order
            and with its original write id (the store skips ids it already holds, so a
            replay may be repeated), shuts down, and prints what became of each write and
            what the spool still holds. A torn tail is cut off; a damaged record is skipped.
            The writes go to the store in batches of up to 4,096, one transaction each.

            Options:
              --jdbc URL            the store: jdbc:sqlite:FILE or jdbc:postgresql://HOST/DB
                                    (required; its driver must be on the class path)
              --user U              database user
              --password P          database password (other users may see it in the
                                    process list: prefer --password-env)
              --password-env VAR    read the database password from environment variable VAR
              --table-prefix X      prefix of the store's tables (default memlife_)
              --timeout DURATION    how long the store gets once the writes are queued
                                    (default 60s; e.g. 500ms, 30s, 5m, 1h, PT30S); writes
                                    not started by then are abandoned and stay in the spool
              -h, --help            this help

            Exit codes: 0 every write delivered; 1 writes failed, abandoned or still
                        running at the deadline; 2 usage error; 3 could not run (DIR
                        missing, spool locked, unreadable segment, database unreachable).
            """;

    static final Set<String> HELP_FLAGS = Set.of("-h", "--help");
    private static final Set<String> REPLAY_OPTIONS =
            Set.of("--jdbc", "--user", "--password", "--password-env", "--table-prefix", "--timeout");
    private static final String LABEL = "  %-24s %s%n";

    private final PrintStream out;
    private final PrintStream err;
    private final Function<String, String> env;
    private final Clock clock;

    private Main(PrintStream out, PrintStream err, Function<String, String> env, Clock clock) {
        this.out = out;
        this.err = err;
        this.env = env;
        this.clock = clock;
    }

    /**
     * Runs the command line and exits with its exit code.
     *
     * @param args the arguments, as {@link #run(String[], PrintStream, PrintStream)} takes them
     */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /**
     * Runs the command line without exiting: what {@link #main} does, for tests and for callers
     * that embed the tool.
     *
     * @param args the arguments, for example {@code spool inspect /var/lib/app/spool}
     * @param out where the report and the help go
     * @param err where errors and usage errors go
     * @return the exit code: {@value #EXIT_OK}, {@value #EXIT_PROBLEMS}, {@value #EXIT_USAGE} or
     *     {@value #EXIT_CANNOT_RUN} (see the class comment)
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return run(args, out, err, System::getenv, Clock.systemUTC());
    }

    /** {@link #run(String[], PrintStream, PrintStream)} with the environment and the clock given. */
    static int run(String[] args, PrintStream out, PrintStream err, Function<String, String> env, Clock clock) {
        Main main = new Main(out, err, env, clock);
        try {
            return main.dispatch(List.of(args));
        } catch (UsageException e) {
            err.println("memlife: " + e.getMessage());
            err.println();
            err.print(e.usage);
            err.println("Run '" + e.helpCommand + " --help' for more.");
            return EXIT_USAGE;
        } catch (CannotRunException e) {
            err.println("memlife " + e.command + ": " + e.getMessage());
            return EXIT_CANNOT_RUN;
        } catch (RuntimeException e) {
            err.println("memlife: internal error (a bug in memlife, please report it): " + e);
            e.printStackTrace(err);
            return EXIT_CANNOT_RUN;
        } finally {
            out.flush();
            err.flush();
        }
    }

    // ---- dispatch --------------------------------------------------------------------------------

    private int dispatch(List<String> args) {
        if (args.isEmpty()) {
            throw new UsageException("no command given", USAGE, "memlife");
        }
        String first = args.get(0);
        if (HELP_FLAGS.contains(first)) {
            out.print(HELP);
            return EXIT_OK;
        }
        if (first.equals(SharedLogCommand.COMMAND)) {
            Arguments p = Arguments.optionsOnly(args.subList(1, args.size()), SharedLogCommand.OPTIONS,
                    SharedLogCommand.USAGE, "memlife shared-log");
            if (p.help) {
                out.print(SharedLogCommand.HELP);
                return EXIT_OK;
            }
            return new SharedLogCommand(out, env).run(p);
        }
        if (!first.equals("spool")) {
            throw new UsageException((first.startsWith("-") ? "unknown option '" : "unknown command '") + first
                    + "' (the commands are 'spool inspect', 'spool replay' and 'shared-log')", USAGE, "memlife");
        }
        List<String> rest = args.subList(1, args.size());
        if (rest.isEmpty()) {
            throw new UsageException("'spool' needs a command: inspect or replay", USAGE, "memlife spool");
        }
        String command = rest.get(0);
        List<String> commandArgs = rest.subList(1, rest.size());
        switch (command) {
            case "-h", "--help" -> {
                out.print(SPOOL_HELP);
                return EXIT_OK;
            }
            case "inspect" -> {
                Arguments p = Arguments.of(commandArgs, Set.of(), INSPECT_USAGE, "memlife spool inspect");
                if (p.help) {
                    out.print(INSPECT_HELP);
                    return EXIT_OK;
                }
                return inspect(p.directory());
            }
            case "replay" -> {
                Arguments p = Arguments.of(commandArgs, REPLAY_OPTIONS, REPLAY_USAGE, "memlife spool replay");
                if (p.help) {
                    out.print(REPLAY_HELP);
                    return EXIT_OK;
                }
                return replay(p);
            }
            default -> throw new UsageException((command.startsWith("-") ? "unknown option '" : "unknown command '")
                    + command + "' for 'spool' (the commands are 'inspect' and 'replay')", USAGE, "memlife spool");
        }
    }

    // ---- spool inspect -------------------------------------------------------------------------------

    private int inspect(Path dir) {
        String command = "spool inspect";
        requireDirectory(command, dir);
        SpoolInspection seen = readSpool(command, dir);
        out.println("spool " + dir.toAbsolutePath());
        for (SpoolInspection.Segment s : seen.segments()) {
            out.println();
            printSegment(s);
        }
        out.println();
        out.println("totals");
        printTotals(seen);
        List<String> problems = new ArrayList<>();
        if (seen.damaged() > 0) {
            problems.add(count(seen.damaged(), "damaged stretch", "damaged stretches")
                    + " (skipped by a replay: the writes in them are lost)");
        }
        if (seen.unreadable() > 0) {
            problems.add(count(seen.unreadable(), "unreadable segment", "unreadable segments")
                    + " (a replay refuses the spool until it is dealt with)");
        }
        out.println();
        if (problems.isEmpty()) {
            out.println("result: no damage found");
            return EXIT_OK;
        }
        out.println("result: problems found: " + String.join("; ", problems));
        return EXIT_PROBLEMS;
    }

    /** Reads the spool; a segment the running process deletes meanwhile is left out. */
    private SpoolInspection readSpool(String command, Path dir) {
        try {
            return SpoolInspection.of(dir);
        } catch (UncheckedIOException e) {
            throw new CannotRunException(command, "could not read spool " + dir + ": " + describe(e));
        }
    }

    private void printSegment(SpoolInspection.Segment s) {
        out.println("segment " + s.file());
        if (s.unreadable().isPresent()) {
            out.printf(LABEL, "unreadable:", s.unreadable().get());
            return;
        }
        out.printf(LABEL, "id prefix:", s.idPrefix());
        out.printf(LABEL, "bytes:", s.bytes());
        out.printf(LABEL, "records:", s.records());
        out.printf(LABEL, "pending:", s.pending());
        s.oldestPending().ifPresent(t -> out.printf(LABEL, "oldest pending:", when(t)));
        out.printf(LABEL, "torn-tail bytes:", s.tornTailBytes()
                + (s.tornTailBytes() == 0 ? "" : " (a record cut short at the end; cut off on the next open)"));
        if (s.damage().isEmpty()) {
            out.printf(LABEL, "damaged:", "none");
        }
        for (SpoolInspection.Damage d : s.damage()) {
            out.printf(LABEL, "damaged:", "offset " + d.offset() + ", length " + d.length() + ": " + d.reason());
        }
    }

    private void printTotals(SpoolInspection seen) {
        out.printf(LABEL, "segments:", seen.segments().size());
        out.printf(LABEL, "records:", seen.records());
        out.printf(LABEL, "pending writes:", seen.pending() + (seen.pending() == 0 ? "" : " (replayed on the next start)"));
        out.printf(LABEL, "failed writes kept:", seen.failedKept() + (seen.failedKept() == 0 ? ""
                : " (a provider failed them; retried on the next start, counted in the pending writes)"));
        out.printf(LABEL, "oldest pending write:", seen.oldestPending().map(this::when).orElse("none"));
        out.printf(LABEL, "damaged stretches:", seen.damaged());
        out.printf(LABEL, "torn-tail bytes:", seen.tornTailBytes());
        out.printf(LABEL, "unreadable segments:", seen.unreadable());
        out.printf(LABEL, "delivery mark:", mark(seen));
    }

    private static String mark(SpoolInspection seen) {
        if (seen.deliveredMark() == 0) {
            return "none (no write marked delivered)";
        }
        return "segment " + seen.deliveredSegment() + ", offset " + seen.deliveredOffset();
    }

    private String when(Instant t) {
        Duration age = Duration.between(t, clock.instant());
        String ago = age.isNegative() ? "in " + human(age.negated()) + " (clock skew?)" : human(age) + " ago";
        return t.truncatedTo(ChronoUnit.MILLIS) + " (" + ago + ")";
    }

    /** A duration for people: {@code 850 ms}, {@code 12 s}, {@code 3 min 4 s}, {@code 2 h 5 min}, {@code 3 d 4 h}. */
    static String human(Duration d) {
        long ms = d.toMillis();
        if (ms < 1_000) {
            return ms + " ms";
        }
        long s = d.getSeconds();
        if (s < 60) {
            return s + " s";
        }
        if (s < 3_600) {
            return s / 60 + " min " + s % 60 + " s";
        }
        if (s < 86_400) {
            return s / 3_600 + " h " + s % 3_600 / 60 + " min";
        }
        return s / 86_400 + " d " + s % 86_400 / 3_600 + " h";
    }

    // ---- spool replay --------------------------------------------------------------------------------

    private int replay(Arguments p) {
        String command = "spool replay";
        Path dir = p.directory();
        String url = p.options.get("--jdbc");
        if (url == null) {
            throw p.usage("missing --jdbc URL (the store to replay into, e.g. jdbc:sqlite:/var/lib/app/memory.db)");
        }
        Duration timeout = p.options.containsKey("--timeout") ? p.duration("--timeout") : DEFAULT_TIMEOUT;
        JdbcMemoryProvider.Builder storeBuilder;
        try {
            storeBuilder = JdbcMemoryProvider.builder(url);
        } catch (IllegalArgumentException e) {
            throw p.usage("invalid --jdbc '" + maskUrl(url) + "': " + e.getMessage());
        }
        String user = p.options.get("--user");
        if (user != null) {
            storeBuilder.user(user);
        }
        String password = p.password(env);
        if (password != null) {
            storeBuilder.password(password);
        }
        String prefix = p.options.get("--table-prefix");
        if (prefix != null) {
            try {
                storeBuilder.tablePrefix(prefix);
            } catch (IllegalArgumentException e) {
                throw p.usage("invalid --table-prefix '" + prefix + "': " + e.getMessage());
            }
        }
        requireDirectory(command, dir); // Spool.open would create a missing directory
        Spool spool;
        try {
            spool = Spool.open(dir);
        } catch (IllegalStateException | UncheckedIOException e) {
            throw new CannotRunException(command, "could not open spool " + dir + ": " + describe(e));
        }
        JdbcMemoryProvider store;
        try {
            store = storeBuilder.build();
        } catch (IllegalArgumentException e) {
            spool.close();
            throw p.usage("invalid --jdbc '" + maskUrl(url) + "': " + e.getMessage());
        } catch (RuntimeException e) {
            spool.close();
            String why = describe(e);
            String where = why.contains(maskUrl(url)) ? "" : " at " + maskUrl(url);
            String hint = why.contains("No suitable driver") ? "\nPut the database's JDBC driver on the class path "
                    + "(sqlite-jdbc for jdbc:sqlite:, postgresql for jdbc:postgresql:)." : "";
            throw new CannotRunException(command, "could not open the store" + where + ": " + why + hint
                    + "\nThe spool was not replayed; it still holds its writes.");
        }
        MemoryManager manager;
        try {
            manager = MemoryManager.builder().name(MANAGER_NAME).spool(spool).maxBatchSize(REPLAY_BATCH).build();
        } catch (RuntimeException e) {
            store.close();
            spool.close();
            throw new CannotRunException(command, "could not start on spool " + dir + ": " + describe(e));
        }
        ReplayStore into = new ReplayStore(store);
        manager.addProvider(into); // owned: the manager's shutdown closes the store
        long toReplay = manager.figures().spool().backlog();
        out.println("replaying spool " + dir.toAbsolutePath() + " into " + maskUrl(url) + ": "
                + count(toReplay, "write", "writes") + " to deliver");
        out.flush();
        long replayed;
        long start = System.nanoTime();
        try {
            replayed = manager.replaySpool();
        } catch (RuntimeException e) {
            DrainReport report = manager.stop(timeout);
            throw new CannotRunException(command, "the replay of spool " + dir + " failed: " + describe(e)
                    + "\nAfter the shutdown: " + report);
        }
        DrainReport report = manager.stop(timeout);
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        SpoolFigures figures = manager.figures().spool();

        out.printf(LABEL, "writes replayed:", replayed);
        out.printf(LABEL, "delivered:", report.delivered());
        out.printf(LABEL, "already in the store:", into.alreadyStored()
                + (into.alreadyStored() == 0 ? "" : " of them (skipped by write id)"));
        out.printf(LABEL, "failed:", report.failed() + (report.failed() == 0 ? ""
                : " (the store refused them after its retries; the spool keeps them for the next replay)"));
        for (String reason : into.reasons()) {
            out.println("    because: " + reason);
        }
        ids(report.failedWriteIds());
        out.printf(LABEL, "abandoned:", report.abandoned() + (report.abandoned() == 0 ? ""
                : " (not started within --timeout " + human(timeout) + "; they stay in the spool)"));
        ids(report.abandonedWriteIds());
        out.printf(LABEL, "still running:", report.stillRunning() + (report.stillRunning() == 0 ? ""
                : " (being stored at the deadline; a later replay stores them if this one did not)"));
        ids(report.stillRunningWriteIds());
        out.printf(LABEL, "corrupt records skipped:", figures.corruptRecords()
                + (figures.corruptRecords() == 0 ? "" : " (their writes are lost)"));
        out.printf(LABEL, "torn-tail bytes cut:", figures.tornTailBytes());
        WriteFigures batches = manager.figures();
        out.printf(LABEL, "batches:", batches.batches() + " (up to " + REPLAY_BATCH + " writes each, one store "
                + "transaction; the largest " + batches.largestBatch() + ")");
        out.printf(LABEL, "took:", human(took));
        out.println();
        out.println("spool afterwards");
        try {
            printTotals(SpoolInspection.of(dir));
        } catch (UncheckedIOException e) {
            out.println("  could not be read: " + describe(e));
        }
        out.println();
        long notDelivered = report.failed() + report.abandoned() + report.stillRunning();
        if (notDelivered == 0) {
            out.println("result: every replayed write was delivered");
            return EXIT_OK;
        }
        out.println("result: " + count(notDelivered, "write was", "writes were") + " not delivered");
        return EXIT_PROBLEMS;
    }

    private void ids(List<String> ids) {
        for (String id : ids) {
            out.println("      " + id);
        }
    }

    // ---- helpers -----------------------------------------------------------------------------------

    private static void requireDirectory(String command, Path dir) {
        if (!Files.isDirectory(dir)) {
            throw new CannotRunException(command, "no spool directory at " + dir
                    + (Files.exists(dir) ? " (it is not a directory)" : " (it does not exist)"));
        }
    }

    static String count(long n, String one, String many) {
        return n + " " + (n == 1 ? one : many);
    }

    /** An exception's message, and its cause's when it adds something (an I/O error's path and reason). */
    static String describe(Throwable e) {
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        Throwable cause = e.getCause();
        if (cause != null && cause.getMessage() != null && !message.contains(cause.getMessage())) {
            message += " (" + cause.getClass().getSimpleName() + ": " + cause.getMessage() + ")";
        }
        return message;
    }

    /** A JDBC URL with its password masked: {@code password=...} and {@code //user:password@}. */
    static String maskUrl(String url) {
        return url.replaceAll("(?i)(password=)[^&;]*", "$1****").replaceAll("//([^/:@]*):[^/@]*@", "//$1:****@");
    }

    /** The command could not run: exit code {@value #EXIT_CANNOT_RUN}. */
    static final class CannotRunException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final String command;

        CannotRunException(String command, String message) {
            super(message, null, false, false);
            this.command = command;
        }
    }
}
