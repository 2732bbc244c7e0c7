package dev.memlife.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.fail;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The store contract on a real PostgreSQL server, plus a backend terminated mid-run. Needs
 * {@code MEMLIFE_PG_URL} (and {@code MEMLIFE_PG_USER}, {@code MEMLIFE_PG_PASSWORD}); without them
 * the tests are skipped, unless {@code MEMLIFE_REQUIRE_PG=1}, which makes a missing or unreachable
 * server fail them. {@code bash .ci/run} starts a server and sets all four.
 */
class PostgresJdbcMemoryProviderTest extends JdbcMemoryProviderContract {

    static final String HOW_TO_RUN = "set MEMLIFE_PG_URL (e.g. jdbc:postgresql://127.0.0.1:5432/memlife), "
            + "MEMLIFE_PG_USER and MEMLIFE_PG_PASSWORD to run them, or run 'bash .ci/run', which starts a "
            + "PostgreSQL server and sets them (MEMLIFE_REQUIRE_PG=1 makes a missing server fail them)";

    static String url;
    static String user;
    static String password;

    /** Why the tests cannot run here, found once per class; null when PostgreSQL is reachable. */
    static String unavailable;
    /** Whether the skip reason was printed; tests of a class run on one thread. */
    static boolean toldWhySkipped;

    @BeforeAll
    static void probePostgres() {
        url = System.getenv("MEMLIFE_PG_URL");
        user = System.getenv().getOrDefault("MEMLIFE_PG_USER", "");
        password = System.getenv().getOrDefault("MEMLIFE_PG_PASSWORD", "");
        if (url == null || url.isBlank()) {
            unavailable = "MEMLIFE_PG_URL is not set";
            return;
        }
        try (Connection c = DriverManager.getConnection(url, user, password)) {
            unavailable = c.isValid(5) ? null : "the connection to " + Database.mask(url) + " is not valid";
        } catch (SQLException e) {
            unavailable = "PostgreSQL at " + Database.mask(url) + " is unreachable: " + e.getMessage();
        }
    }

    /** Skips each test with a message saying how to run it, or fails it when PostgreSQL is required. */
    @BeforeEach
    void requirePostgres() {
        if (unavailable == null) {
            return;
        }
        if ("1".equals(System.getenv("MEMLIFE_REQUIRE_PG"))) {
            fail("MEMLIFE_REQUIRE_PG=1 but " + unavailable + "; " + HOW_TO_RUN);
        }
        if (!toldWhySkipped) {
            toldWhySkipped = true; // the console shows skip counts only: say once why, and how to run them
            System.out.println("PostgreSQL tests skipped: " + unavailable + "; " + HOW_TO_RUN);
        }
        Assumptions.abort("PostgreSQL test skipped: " + unavailable + "; " + HOW_TO_RUN);
    }

    @Override
    Dialect dialect() {
        return Dialect.POSTGRESQL;
    }

    @Override
    JdbcMemoryProvider.Builder urlBuilder() {
        return JdbcMemoryProvider.builder(url).user(user).password(password);
    }

    @Override
    DataSource dataSource() {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(url);
        ds.setUser(user);
        ds.setPassword(password);
        return ds;
    }

    @Override
    void rejectUserContent(String prefix, String userContent) throws SQLException {
        try (Connection c = DriverManager.getConnection(url, user, password);
                Statement s = c.createStatement()) {
            s.execute("CREATE FUNCTION " + prefix + "reject() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                    + "IF NEW.user_content = '" + userContent + "' THEN "
                    + "RAISE EXCEPTION 'rejected by the test'; END IF; RETURN NEW; END $$");
            s.execute("CREATE TRIGGER " + prefix + "reject BEFORE INSERT ON " + prefix + "turns "
                    + "FOR EACH ROW EXECUTE FUNCTION " + prefix + "reject()");
        }
    }

    @Override
    void dropTables(String prefix) throws SQLException {
        if (unavailable != null) {
            return;
        }
        try (Connection c = DriverManager.getConnection(url, user, password);
                Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + prefix + "turns, " + prefix + "session_ends, " + prefix
                    + "schema_version");
            s.execute("DROP FUNCTION IF EXISTS " + prefix + "reject()");
        }
    }

    @Test
    void terminatedBackendsAreReplacedByNewConnectionsOnRetry() throws SQLException {
        String application = prefix + "app"; // only this test's connections are terminated
        JdbcMemoryProvider store = provider(JdbcMemoryProvider.builder(url + (url.contains("?") ? "&" : "?")
                + "ApplicationName=" + application).user(user).password(password));
        MemoryManager memory = manager(256, store);
        memory.syncAll("before", "a", "s-1");
        assertThat(memory.flushPending(FLUSH)).isTrue();
        assertThat(store.countTurns("s-1")).isEqualTo(1); // the reading connection is open too

        try (Connection admin = DriverManager.getConnection(url, user, password);
                Statement s = admin.createStatement();
                ResultSet rs = s.executeQuery("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                        + "WHERE application_name = '" + application + "'")) {
            rs.next();
            assertThat(rs.getInt(1)).isEqualTo(2); // the writer's connection and the reader's
            // Termination is a signal: wait until the backends are really gone.
            await().atMost(Duration.ofSeconds(30)).until(() -> backends(s, application) == 0);
        }
        memory.syncAll("after", "a", "s-1");
        assertThat(memory.flushPending(FLUSH)).isTrue();
        assertThat(sleeper.waits()).hasSize(1);
        assertThat(store.turns("s-1")).extracting(StoredTurn::userContent).containsExactly("before", "after");
        assertThat(sleeper.waits()).hasSize(2);

        DrainReport report = memory.shutdownAll();
        assertThat(report.delivered()).isEqualTo(2);
        assertThat(report.failed()).isZero();
    }

    private static int backends(Statement s, String application) throws SQLException {
        try (ResultSet rs = s.executeQuery("SELECT count(*) FROM pg_stat_activity "
                + "WHERE application_name = '" + application + "'")) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
