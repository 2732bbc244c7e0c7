package dev.memlife.cli;

import static dev.memlife.cli.CliRun.NO_STACK_TRACE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.memlife.MemoryManager;
import dev.memlife.spool.Spool;
import dev.memlife.spool.SpoolInspection;
import dev.memlife.store.JdbcMemoryProvider;
import dev.memlife.testing.GatedProvider;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The command line, {@link Main}, run in process on real spools: one written by a live manager
 * whose provider holds every write from the sixth on (so 5 writes are delivered and marked, 15
 * pending), copied as {@code kill -9} would leave it, and hand-corrupted. The expected offsets are
 * computed here from the segment's bytes, not by the spool's own reader.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class MainTest {

    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final String SEGMENT = "00000000000000000001.seg";
    private static final int WRITES = 20;
    private static final int DELIVERED = 5;

    @TempDir
    Path tmp;

    private GatedProvider held;
    private MemoryManager first;
    /** The write-id prefix of the live manager: write {@code u<i>} has id {@code prefix:<i + 1>}. */
    private String prefix;
    private Instant before;
    private Instant after;

    @AfterEach
    void stopTheLiveManager() {
        if (held != null) {
            held.open();
            first.stop();
        }
    }

    /** A live spool: writes u0..u19 accepted and durable, u0..u4 delivered and marked, u5..u19 pending. */
    private Path liveSpool() {
        Path dir = tmp.resolve("live");
        held = new GatedProvider("store", t -> Integer.parseInt(t.userContent().substring(1)) >= DELIVERED);
        first = MemoryManager.builder().name("first").spool(Spool.open(dir)).build();
        first.addProvider(held);
        before = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        for (int i = 0; i < WRITES; i++) {
            assertThat(first.syncAll("u" + i, "a" + i, "s" + (i % 2))).isTrue();
        }
        after = Instant.now();
        assertThat(first.awaitDurable(WAIT)).isTrue();
        assertThat(held.awaitHeld(WAIT)).isTrue();
        await().atMost(WAIT).until(() -> SpoolInspection.of(dir).pending() == WRITES - DELIVERED);
        String firstId = held.turns().get(0).writeId();
        assertThat(firstId).endsWith(":1");
        prefix = firstId.substring(0, firstId.length() - 2);
        return dir;
    }

    /** The spool's files as {@code kill -9} leaves them: everything but the lock file. */
    private Path crashImage(Path live, String name) throws IOException {
        Path image = tmp.resolve(name);
        Files.createDirectories(image);
        try (Stream<Path> files = Files.list(live)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                if (!f.getFileName().toString().equals("spool.lock")) {
                    Files.copy(f, image.resolve(f.getFileName()));
                }
            }
        }
        return image;
    }

    /**
     * Where each record of a segment starts and how long it is, read from the bytes by this test:
     * a header of magic, version, a 2-byte prefix length and the prefix, then records of a 4-byte
     * payload length, a 4-byte checksum and the payload; zeros after the last record are space the
     * spool's mapping reached and no record did (a record never starts with eight zero bytes).
     */
    private static List<long[]> records(byte[] segment) {
        ByteBuffer in = ByteBuffer.wrap(segment);
        assertThat(in.getInt(0)).as("magic").isEqualTo(0x4D4C5350);
        int at = 10 + Short.toUnsignedInt(in.getShort(8));
        List<long[]> records = new ArrayList<>();
        while (at < segment.length && !(at + 8 <= segment.length && in.getLong(at) == 0)) {
            int length = 8 + in.getInt(at);
            records.add(new long[] {at, length});
            at += length;
        }
        for (int i = at; i < segment.length; i++) {
            assertThat(segment[i]).as("the records fill the segment up to its unwritten space, at %d", i).isZero();
        }
        return records;
    }

    /** A crash image of the live spool, record u10 flipped in its middle, and a torn tail of 6 bytes. */
    private Corrupted corruptedImage(String name) throws IOException {
        Path image = crashImage(liveSpool(), name);
        Path segment = image.resolve(SEGMENT);
        byte[] bytes = Files.readAllBytes(segment);
        List<long[]> records = records(bytes);
        assertThat(records).hasSize(WRITES);
        long[] u10 = records.get(10);
        bytes[(int) (u10[0] + u10[1] / 2)] ^= 0x40;
        long[] last = records.get(records.size() - 1);
        byte[] torn = {0, 0, 1, 0, 7, 7}; // a record cut short as it was stored, the mapping's zeros after it
        System.arraycopy(torn, 0, bytes, (int) (last[0] + last[1]), torn.length);
        Files.write(segment, bytes);
        return new Corrupted(image, records, bytes.length);
    }

    private record Corrupted(Path dir, List<long[]> records, long bytes) {}

    private String id(int write) {
        return prefix + ':' + (write + 1);
    }

    // ---- running the tool ---------------------------------------------------------------------------

    private record Result(int exit, String out, String err) {

        /** The segment part of an inspect report (before the totals). */
        String segments() {
            int totals = out.indexOf("\ntotals\n");
            assertThat(totals).as(out).isPositive();
            return out.substring(0, totals);
        }

        /** The totals of an inspect report, or what a replay says the spool holds afterwards. */
        String totals() {
            int totals = Math.max(out.indexOf("\ntotals\n"), out.indexOf("\nspool afterwards\n"));
            assertThat(totals).as(out).isPositive();
            return out.substring(totals);
        }

        /** The replay's accounting (before what the spool holds afterwards). */
        String accounting() {
            int end = out.indexOf("\nspool afterwards\n");
            assertThat(end).as(out).isPositive();
            return out.substring(0, end);
        }
    }

    private static Result run(String... args) {
        return run(name -> null, args);
    }

    private static Result run(Function<String, String> env, String... args) {
        CliRun run = CliRun.run(env, args);
        return new Result(run.exit(), run.out(), run.err());
    }

    /** The values of every line {@code "  label: value"} in {@code text}, in order. */
    private static List<String> values(String text, String label) {
        Matcher m = Pattern.compile("(?m)^ {2}" + Pattern.quote(label) + ":\\s+(.*)$").matcher(text);
        List<String> values = new ArrayList<>();
        while (m.find()) {
            values.add(m.group(1));
        }
        return values;
    }

    /** The value of the one line {@code "  label: value"} in {@code text}. */
    private static String value(String text, String label) {
        List<String> values = values(text, label);
        assertThat(values).as("'%s' in%n%s", label, text).hasSize(1);
        return values.get(0);
    }

    private static Map<String, String> storedTurns(Path db, String table) throws SQLException {
        Map<String, String> rows = new TreeMap<>();
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT write_id, user_content FROM " + table)) {
            while (rs.next()) {
                rows.put(rs.getString(1), rs.getString(2));
            }
        }
        return rows;
    }

    private Map<String, String> expectedRows(IntStream writes) {
        return writes.boxed().collect(Collectors.toMap(this::id, i -> "u" + i, (a, b) -> a, TreeMap::new));
    }

    // ---- spool inspect --------------------------------------------------------------------------------

    @Test
    void inspectReportsAHandCorruptedSpoolByOffsetAndExitsWithOne() throws Exception {
        Corrupted c = corruptedImage("crash");
        long[] u10 = c.records().get(10);

        Result r = run("spool", "inspect", c.dir().toString());

        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(Main.EXIT_PROBLEMS);
        assertThat(r.err()).isEmpty();
        String segment = r.segments();
        assertThat(segment).contains("segment " + SEGMENT);
        assertThat(value(segment, "id prefix")).isEqualTo(prefix);
        assertThat(value(segment, "bytes")).isEqualTo(String.valueOf(c.bytes()));
        assertThat(value(segment, "records")).isEqualTo("19");
        assertThat(value(segment, "pending")).isEqualTo("14");
        assertThat(value(segment, "torn-tail bytes")).startsWith("6 ");
        assertThat(values(segment, "damaged")).containsExactly(
                "offset " + u10[0] + ", length " + u10[1] + ": a checksum that does not match");

        String totals = r.totals();
        assertThat(value(totals, "records")).isEqualTo("19");
        assertThat(value(totals, "pending writes")).startsWith("14 ");
        assertThat(value(totals, "damaged stretches")).isEqualTo("1");
        assertThat(value(totals, "torn-tail bytes")).isEqualTo("6");
        assertThat(value(totals, "unreadable segments")).isEqualTo("0");
        // The mark sits at the end of u4, the last write delivered: where u5's record starts.
        assertThat(value(totals, "delivery mark")).isEqualTo("segment 1, offset " + c.records().get(DELIVERED)[0]);
        Instant oldest = Instant.parse(value(totals, "oldest pending write").split(" ")[0]);
        assertThat(oldest).isBetween(before, after);
        assertThat(value(totals, "oldest pending write")).endsWith(" ago)");
        assertThat(r.out()).contains("result: problems found: 1 damaged stretch");
    }

    @Test
    void inspectOfAHealthyLiveSpoolExitsWithZeroAndChangesNothing() throws Exception {
        Path live = liveSpool();
        Map<String, Long> filesBefore = files(live);
        List<long[]> records = records(Files.readAllBytes(live.resolve(SEGMENT)));

        Result r = run("spool", "inspect", live.toString());

        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(Main.EXIT_OK);
        assertThat(r.err()).isEmpty();
        assertThat(value(r.segments(), "records")).isEqualTo("20");
        assertThat(value(r.segments(), "pending")).isEqualTo("15");
        assertThat(value(r.segments(), "damaged")).isEqualTo("none");
        assertThat(value(r.totals(), "pending writes")).isEqualTo("15 (replayed on the next start)");
        assertThat(value(r.totals(), "damaged stretches")).isEqualTo("0");
        assertThat(value(r.totals(), "torn-tail bytes")).isEqualTo("0");
        assertThat(value(r.totals(), "delivery mark")).isEqualTo("segment 1, offset " + records.get(DELIVERED)[0]);
        assertThat(r.out()).contains("result: no damage found");
        assertThat(files(live)).as("inspect changes nothing").isEqualTo(filesBefore);
    }

    @Test
    void inspectReportsAnUnreadableSegmentAndExitsWithOne() throws Exception {
        Path dir = tmp.resolve("newer");
        Files.createDirectories(dir);
        // A header of a newer format: magic, version 2, an empty id prefix.
        Files.write(dir.resolve("00000000000000000007.seg"),
                ByteBuffer.allocate(10).putInt(0x4D4C5350).putInt(2).putShort((short) 0).array());

        Result r = run("spool", "inspect", dir.toString());

        assertThat(r.exit()).isEqualTo(Main.EXIT_PROBLEMS);
        assertThat(r.segments()).contains("segment 00000000000000000007.seg");
        assertThat(value(r.segments(), "unreadable")).contains("newer memlife");
        assertThat(value(r.totals(), "unreadable segments")).isEqualTo("1");
        assertThat(value(r.totals(), "delivery mark")).startsWith("none");
        assertThat(r.out()).contains("result: problems found: 1 unreadable segment");
    }

    @Test
    void inspectOfAMissingDirectoryCannotRun() {
        Path missing = tmp.resolve("nowhere");

        Result r = run("spool", "inspect", missing.toString());

        assertThat(r.exit()).isEqualTo(Main.EXIT_CANNOT_RUN);
        assertThat(r.out()).isEmpty();
        assertThat(r.err()).contains("spool inspect", missing.toString(), "does not exist");
        assertThat(r.err()).doesNotContainPattern(NO_STACK_TRACE);
    }

    private static Map<String, Long> files(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            Map<String, Long> sizes = new TreeMap<>();
            for (Path f : (Iterable<Path>) files::iterator) {
                sizes.put(f.getFileName().toString(), Files.size(f));
            }
            return sizes;
        }
    }

    // ---- spool replay ---------------------------------------------------------------------------------

    @Test
    void replayDeliversTheUndeliveredWritesIntoSqliteWithTheirIdsAndAccountsForThem() throws Exception {
        Path live = liveSpool();
        Path image = crashImage(live, "crash");
        Path sameImage = crashImage(live, "crash-again");
        Path db = tmp.resolve("store.db");

        Result r = run("spool", "replay", image.toString(), "--jdbc", "jdbc:sqlite:" + db);

        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(Main.EXIT_OK);
        assertThat(r.err()).isEmpty();
        assertThat(r.out()).contains("15 writes to deliver");
        String accounting = r.accounting();
        assertThat(value(accounting, "writes replayed")).isEqualTo("15");
        assertThat(value(accounting, "delivered")).isEqualTo("15");
        assertThat(value(accounting, "already in the store")).isEqualTo("0");
        assertThat(value(accounting, "failed")).isEqualTo("0");
        assertThat(value(accounting, "abandoned")).isEqualTo("0");
        assertThat(value(accounting, "still running")).isEqualTo("0");
        assertThat(value(accounting, "corrupt records skipped")).isEqualTo("0");
        assertThat(value(accounting, "torn-tail bytes cut")).isEqualTo("0");
        assertThat(value(r.totals(), "pending writes")).isEqualTo("0");
        assertThat(r.out()).contains("result: every replayed write was delivered");
        Map<String, String> expected = expectedRows(IntStream.range(DELIVERED, WRITES));
        assertThat(storedTurns(db, "memlife_turns")).isEqualTo(expected);

        // Nothing is left to replay; a second run delivers nothing and stores nothing twice.
        Result again = run("spool", "replay", image.toString(), "--jdbc", "jdbc:sqlite:" + db);
        assertThat(again.exit()).as(again.out() + again.err()).isEqualTo(Main.EXIT_OK);
        assertThat(value(again.accounting(), "writes replayed")).isEqualTo("0");
        assertThat(storedTurns(db, "memlife_turns")).isEqualTo(expected);
        assertThat(run("spool", "inspect", image.toString()).exit()).isEqualTo(Main.EXIT_OK);

        // A spool whose mark is older than the truth (a copy taken before the replay): its writes
        // are delivered again, and the store skips them by write id.
        Result stale = run("spool", "replay", sameImage.toString(), "--jdbc", "jdbc:sqlite:" + db);
        assertThat(stale.exit()).as(stale.out() + stale.err()).isEqualTo(Main.EXIT_OK);
        assertThat(value(stale.accounting(), "delivered")).isEqualTo("15");
        assertThat(value(stale.accounting(), "already in the store")).isEqualTo("15 of them (skipped by write id)");
        assertThat(storedTurns(db, "memlife_turns")).isEqualTo(expected);
    }

    @Test
    void replayHandsTheStoreBatchesOfUpToTheStoresLargestTransaction() throws Exception {
        // 20,000 writes queue far faster than SQLite stores them, so the writer's batches fill up
        // to the tool's batch size, which is larger than a manager's default.
        int writes = 20_000;
        Path live = tmp.resolve("many");
        held = new GatedProvider("store", t -> true);
        first = MemoryManager.builder().name("many").spool(Spool.open(live)).queueCapacity(writes).build();
        first.addProvider(held);
        for (int i = 0; i < writes; i++) {
            assertThat(first.syncAll("u" + i, "a" + i, "s")).isTrue();
        }
        assertThat(first.awaitDurable(WAIT)).isTrue();
        Path image = crashImage(live, "many-crash");
        Path db = tmp.resolve("many.db");

        Result r = run("spool", "replay", image.toString(), "--jdbc", "jdbc:sqlite:" + db);

        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(Main.EXIT_OK);
        assertThat(value(r.accounting(), "delivered")).isEqualTo(String.valueOf(writes));
        assertThat(value(r.accounting(), "batches")).as(r.out())
                .matches("\\d+ \\(up to 4096 writes each, one store transaction; the largest 4096\\)");
        assertThat(Main.REPLAY_BATCH).isGreaterThan(MemoryManager.Builder.DEFAULT_MAX_BATCH_SIZE);
        String idPrefix = SpoolInspection.of(live).segments().get(0).idPrefix();
        Map<String, String> expected = new TreeMap<>();
        IntStream.range(0, writes).forEach(i -> expected.put(idPrefix + ":" + (i + 1), "u" + i));
        assertThat(storedTurns(db, "memlife_turns")).as("every write id stored once, with its write").isEqualTo(expected);
    }

    @Test
    void replayOfACorruptedSpoolSkipsTheDamagedRecordCutsTheTornTailAndSaysSo() throws Exception {
        Corrupted c = corruptedImage("crash");
        Path db = tmp.resolve("store.db");

        Result r = run("spool", "replay", c.dir().toString(), "--jdbc=jdbc:sqlite:" + db, "--table-prefix", "cli_",
                "--timeout", "30s");

        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(Main.EXIT_OK);
        String accounting = r.accounting();
        assertThat(value(accounting, "writes replayed")).isEqualTo("14");
        assertThat(value(accounting, "delivered")).isEqualTo("14");
        assertThat(value(accounting, "corrupt records skipped")).startsWith("1 ");
        assertThat(value(accounting, "torn-tail bytes cut")).isEqualTo("6");
        assertThat(value(r.totals(), "pending writes")).isEqualTo("0");
        assertThat(value(r.totals(), "damaged stretches")).isEqualTo("0");
        assertThat(storedTurns(db, "cli_turns"))
                .isEqualTo(expectedRows(IntStream.range(DELIVERED, WRITES).filter(i -> i != 10)));
    }

    @Test
    void writesTheStoreRefusesAreListedByIdAndExitWithOne() throws Exception {
        Path image = crashImage(liveSpool(), "crash");
        Path db = tmp.resolve("store.db");
        JdbcMemoryProvider.sqlite(db).close(); // the schema, so the test can refuse every insert
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement s = c.createStatement()) {
            s.execute("CREATE TRIGGER refuse BEFORE INSERT ON memlife_turns BEGIN SELECT RAISE(ABORT, 'refused by "
                    + "the test'); END");
        }

        Result r = run("spool", "replay", image.toString(), "--jdbc", "jdbc:sqlite:" + db);

        assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(Main.EXIT_PROBLEMS);
        String accounting = r.accounting();
        assertThat(value(accounting, "writes replayed")).isEqualTo("15");
        assertThat(value(accounting, "delivered")).isEqualTo("0");
        assertThat(value(accounting, "failed")).startsWith("15 ").contains("the spool keeps them for the next replay");
        assertThat(accounting).contains("    because: ").contains("refused by the test");
        List<String> listed = Arrays.stream(accounting.split("\n")).filter(l -> l.startsWith("      "))
                .map(String::strip).toList();
        assertThat(listed).containsExactlyElementsOf(
                IntStream.range(DELIVERED, WRITES).mapToObj(this::id).toList());
        assertThat(r.out()).contains("result: 15 writes were not delivered");
        assertThat(storedTurns(db, "memlife_turns")).isEmpty();
        // A write the store refused is kept for the next replay, which delivers it once the store takes it.
        assertThat(value(r.totals(), "pending writes")).startsWith("15 ");
        assertThat(value(r.totals(), "failed writes kept")).startsWith("15 ");
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + db); Statement s = c.createStatement()) {
            s.execute("DROP TRIGGER refuse");
        }
        Result again = run("spool", "replay", image.toString(), "--jdbc", "jdbc:sqlite:" + db);
        assertThat(again.exit()).as(again.out() + again.err()).isEqualTo(Main.EXIT_OK);
        assertThat(value(again.accounting(), "delivered")).isEqualTo("15");
        assertThat(storedTurns(db, "memlife_turns")).hasSize(15);
        assertThat(value(again.totals(), "pending writes")).isEqualTo("0");
    }

    @Test
    void replayOfASpoolALiveProcessHoldsCannotRun() throws Exception {
        Path live = liveSpool();
        Path db = tmp.resolve("store.db");

        Result r = run("spool", "replay", live.toString(), "--jdbc", "jdbc:sqlite:" + db);

        assertThat(r.exit()).isEqualTo(Main.EXIT_CANNOT_RUN);
        assertThat(r.out()).isEmpty();
        assertThat(r.err()).contains("memlife spool replay: could not open spool " + live, "in use");
        assertThat(r.err()).doesNotContainPattern(NO_STACK_TRACE);
        assertThat(db).as("the store is not touched").doesNotExist();
        assertThat(SpoolInspection.of(live).pending()).isEqualTo(15);
    }

    @Test
    void replayOfAMissingDirectoryCannotRunAndDoesNotCreateIt() {
        Path missing = tmp.resolve("nowhere");

        Result r = run("spool", "replay", missing.toString(), "--jdbc", "jdbc:sqlite:" + tmp.resolve("x.db"));

        assertThat(r.exit()).isEqualTo(Main.EXIT_CANNOT_RUN);
        assertThat(r.err()).contains("spool replay", missing.toString(), "does not exist");
        assertThat(missing).doesNotExist();
    }

    @Test
    void anUnreachableDatabaseCannotRunLeavesTheSpoolAsItWasAndNeverPrintsThePassword() throws Exception {
        Path image = crashImage(liveSpool(), "crash");

        Result sqlite = run("spool", "replay", image.toString(), "--jdbc",
                "jdbc:sqlite:" + tmp.resolve("no/such/dir/store.db"));
        assertThat(sqlite.exit()).as(sqlite.out() + sqlite.err()).isEqualTo(Main.EXIT_CANNOT_RUN);
        assertThat(sqlite.err()).contains("could not open the store", "jdbc:sqlite:" + tmp.resolve("no/such/dir"),
                "still holds its writes");
        assertThat(sqlite.err()).doesNotContainPattern(NO_STACK_TRACE);

        String url = "jdbc:postgresql://127.0.0.1:1/memlife?user=app&password=urlsecret";
        Result pg = run(Map.of("PGPASS", "envsecret")::get, "spool", "replay", image.toString(), "--jdbc", url,
                "--password-env", "PGPASS");
        assertThat(pg.exit()).as(pg.out() + pg.err()).isEqualTo(Main.EXIT_CANNOT_RUN);
        assertThat(pg.err()).contains("could not open the store", "jdbc:postgresql://127.0.0.1:1/memlife")
                .doesNotContain("urlsecret").doesNotContain("envsecret");
        Result pg2 = run("spool", "replay", image.toString(), "--jdbc", "jdbc:postgresql://127.0.0.1:1/memlife",
                "--user", "app", "--password", "argsecret");
        assertThat(pg2.exit()).isEqualTo(Main.EXIT_CANNOT_RUN);
        assertThat(pg2.err()).doesNotContain("argsecret");

        Result noDriver = run("spool", "replay", image.toString(), "--jdbc", "jdbc:nosuchdb:x");
        assertThat(noDriver.exit()).isEqualTo(Main.EXIT_CANNOT_RUN);
        assertThat(noDriver.err()).contains("No suitable driver", "Put the database's JDBC driver on the class path");

        // The lock was released and every write is still there.
        assertThat(SpoolInspection.of(image).pending()).isEqualTo(15);
        Spool.open(image).close();
    }

    // ---- usage --------------------------------------------------------------------------------------------

    @Test
    void usageErrorsExitWithTwoNameTheProblemAndPrintTheUsage() {
        String dir = tmp.toString();
        String url = "jdbc:sqlite:" + tmp.resolve("x.db");
        Object[][] cases = {
            {new String[] {}, "no command given"},
            {new String[] {"frobnicate"}, "unknown command 'frobnicate'"},
            {new String[] {"--verbose"}, "unknown option '--verbose'"},
            {new String[] {"spool"}, "'spool' needs a command"},
            {new String[] {"spool", "frobnicate", dir}, "unknown command 'frobnicate' for 'spool'"},
            {new String[] {"spool", "inspect"}, "missing DIR"},
            {new String[] {"spool", "inspect", dir, "other"}, "unexpected argument 'other'"},
            {new String[] {"spool", "inspect", dir, "--bogus"}, "unknown option '--bogus'"},
            {new String[] {"spool", "inspect", dir, "--jdbc", url}, "unknown option '--jdbc'"},
            {new String[] {"spool", "replay", dir}, "missing --jdbc URL"},
            {new String[] {"spool", "replay", dir, "--jdbc"}, "option --jdbc needs a value"},
            {new String[] {"spool", "replay", dir, "--jdbc", url, "--jdbc", url}, "option --jdbc given twice"},
            {new String[] {"spool", "replay", dir, "--jdbc", "mysql://db"}, "invalid --jdbc 'mysql://db'"},
            {new String[] {"spool", "replay", dir, "--jdbc", url, "--timeout", "soon"}, "invalid --timeout 'soon'"},
            {new String[] {"spool", "replay", dir, "--jdbc", url, "--timeout", "-5s"}, "invalid --timeout '-5s'"},
            {new String[] {"spool", "replay", dir, "--jdbc", url, "--timeout=PT-5S"}, "invalid --timeout 'PT-5S'"},
            {new String[] {"spool", "replay", dir, "--jdbc", url, "--table-prefix", "1x"},
                "invalid --table-prefix '1x'"},
            {new String[] {"spool", "replay", dir, "--jdbc", url, "--password", "p", "--password-env", "P"},
                "not both"},
            {new String[] {"spool", "replay", dir, "--jdbc", url, "--password-env", "NO_SUCH_VARIABLE"},
                "invalid --password-env 'NO_SUCH_VARIABLE'"},
        };
        for (Object[] c : cases) {
            CliRun.run((String[]) c[0]).assertUsageError((String) c[1], "Usage: memlife spool", "--help' for more");
        }
    }

    @Test
    void helpAtEveryLevelExitsWithZeroAndDocumentsTheExitCodes() {
        assertThat(run("--help").out()).contains("spool inspect DIR", "spool replay DIR", "Exit codes:",
                "3  could not run", "dev.memlife.cli.Main");
        assertThat(run("-h").exit()).isZero();
        assertThat(run("spool", "--help").out()).contains("Usage: memlife spool inspect DIR", "Exit codes:");
        assertThat(run("spool", "inspect", "-h").out()).contains("Reads only", "Exit codes: 0");
        Result replayHelp = run("spool", "replay", "--help"); // help wins over the missing DIR and --jdbc
        assertThat(replayHelp.exit()).isZero();
        assertThat(replayHelp.err()).isEmpty();
        assertThat(replayHelp.out()).contains("--jdbc URL", "--user U", "--password P", "--password-env VAR",
                "--table-prefix X", "--timeout DURATION", "Exit codes: 0");
        for (String[] args : List.of(new String[] {"--help"}, new String[] {"spool", "-h"},
                new String[] {"spool", "inspect", "--help"}, new String[] {"spool", "replay", "x", "--bogus", "-h"})) {
            Result r = run(args);
            assertThat(r.exit()).as("%s", List.of(args)).isZero();
            assertThat(r.err()).isEmpty();
        }
    }

    @Test
    void durationsAreReadAsPeopleAndIsoWriteThem() {
        assertThat(Arguments.parseDuration("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(Arguments.parseDuration("30s")).isEqualTo(Duration.ofSeconds(30));
        assertThat(Arguments.parseDuration("5m")).isEqualTo(Duration.ofMinutes(5));
        assertThat(Arguments.parseDuration("1h")).isEqualTo(Duration.ofHours(1));
        assertThat(Arguments.parseDuration("2d")).isEqualTo(Duration.ofDays(2));
        assertThat(Arguments.parseDuration("0")).isEqualTo(Duration.ZERO);
        assertThat(Arguments.parseDuration("PT1M30S")).isEqualTo(Duration.ofSeconds(90));
        assertThat(Arguments.parseDuration("pt2s")).isEqualTo(Duration.ofSeconds(2));
        for (String bad : List.of("30", "soon", "1.5s", "PT-1S", "", "99999999999999999999s")) {
            assertThatThrownBy(() -> Arguments.parseDuration(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(Main.human(Duration.ofMillis(850))).isEqualTo("850 ms");
        assertThat(Main.human(Duration.ofSeconds(184))).isEqualTo("3 min 4 s");
        assertThat(Main.maskUrl("jdbc:postgresql://h/db?user=u&password=s3cret&ssl=true"))
                .isEqualTo("jdbc:postgresql://h/db?user=u&password=****&ssl=true");
        assertThat(Main.maskUrl("jdbc:postgresql://u:s3cret@h/db")).isEqualTo("jdbc:postgresql://u:****@h/db");
    }
}
