package dev.memlife.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static dev.memlife.store.PostgresAvailability.PASSWORD;
import static dev.memlife.store.PostgresAvailability.URL;
import static dev.memlife.store.PostgresAvailability.USER;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The store contract on a real PostgreSQL server, plus a backend terminated mid-run. Runs when
 * {@link PostgresAvailability} finds a server; otherwise skipped, or failed when {@code
 * MEMLIFE_REQUIRE_PG=1}.
 */
class PostgresJdbcMemoryProviderTest extends JdbcMemoryProviderContract {

    /** Skips each test with a message saying how to run it, or fails it when PostgreSQL is required. */
    @BeforeEach
    void requirePostgres() {
        PostgresAvailability.require();
    }

    @Override
    Dialect dialect() {
        return Dialect.POSTGRESQL;
    }

    @Override
    JdbcMemoryProvider.Builder urlBuilder() {
        return JdbcMemoryProvider.builder(URL).user(USER).password(PASSWORD);
    }

    @Override
    DataSource dataSource() {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setURL(URL);
        ds.setUser(USER);
        ds.setPassword(PASSWORD);
        return ds;
    }

    @Override
    void rejectUserContent(String prefix, String userContent) throws SQLException {
        try (Connection c = PostgresAvailability.connect();
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
        if (PostgresAvailability.unavailable() != null) {
            return;
        }
        try (Connection c = PostgresAvailability.connect();
                Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + prefix + "turns, " + prefix + "session_ends, " + prefix
                    + "schema_version");
            s.execute("DROP FUNCTION IF EXISTS " + prefix + "reject()");
        }
    }

    @Test
    void terminatedBackendsAreReplacedByNewConnectionsOnRetry() throws SQLException {
        String application = prefix + "app"; // only this test's connections are terminated
        JdbcMemoryProvider store = provider(JdbcMemoryProvider.builder(URL + (URL.contains("?") ? "&" : "?")
                + "ApplicationName=" + application).user(USER).password(PASSWORD));
        MemoryManager memory = manager(256, store);
        memory.syncAll("before", "a", "s-1");
        assertThat(memory.flushPending(FLUSH)).isTrue();
        assertThat(store.countTurns("s-1")).isEqualTo(1); // the reading connection is open too

        try (Connection admin = PostgresAvailability.connect();
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

        DrainReport report = memory.stop();
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
