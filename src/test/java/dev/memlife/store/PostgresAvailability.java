package dev.memlife.store;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Whether the PostgreSQL tests can run here, found once per test JVM: they need {@code
 * MEMLIFE_PG_URL} (and {@code MEMLIFE_PG_USER}, {@code MEMLIFE_PG_PASSWORD}) and a reachable
 * server. Without them the tests are skipped, unless {@code MEMLIFE_REQUIRE_PG=1}, which makes a
 * missing or unreachable server fail them. {@code bash .ci/run} starts a server and sets all four.
 * Public for the PostgreSQL tests of other packages (the spool's replica crash test).
 */
public final class PostgresAvailability {

    public static final String HOW_TO_RUN = "set MEMLIFE_PG_URL (e.g. jdbc:postgresql://127.0.0.1:5432/memlife), "
            + "MEMLIFE_PG_USER and MEMLIFE_PG_PASSWORD to run them, or run 'bash .ci/run', which starts a "
            + "PostgreSQL server and sets them (MEMLIFE_REQUIRE_PG=1 makes a missing server fail them)";

    public static final String URL = System.getenv("MEMLIFE_PG_URL");
    public static final String USER = System.getenv().getOrDefault("MEMLIFE_PG_USER", "");
    public static final String PASSWORD = System.getenv().getOrDefault("MEMLIFE_PG_PASSWORD", "");
    public static final boolean REQUIRED = "1".equals(System.getenv("MEMLIFE_REQUIRE_PG"));

    /** Why the tests cannot run here; null when PostgreSQL is reachable. */
    private static final String UNAVAILABLE = probe();
    /** Whether the skip reason was printed once. */
    private static boolean toldWhySkipped;

    private PostgresAvailability() {}

    /** Why PostgreSQL tests cannot run here, or null if they can. */
    public static String unavailable() {
        return UNAVAILABLE;
    }

    /** The message a test fails with when PostgreSQL is required but unavailable. */
    public static String requiredButUnavailable() {
        return "MEMLIFE_REQUIRE_PG=1 but " + UNAVAILABLE + "; " + HOW_TO_RUN;
    }

    /**
     * The reason a test is skipped; says once on the console why and how to run them (the console
     * shows skip counts only).
     */
    public static synchronized String skipReason() {
        if (!toldWhySkipped) {
            toldWhySkipped = true;
            System.out.println("PostgreSQL tests skipped: " + UNAVAILABLE + "; " + HOW_TO_RUN);
        }
        return "PostgreSQL test skipped: " + UNAVAILABLE + "; " + HOW_TO_RUN;
    }

    /**
     * Lets a test go on only with a PostgreSQL server: fails it when one is required
     * ({@code MEMLIFE_REQUIRE_PG=1}, as in CI) and none answers, else skips it saying how to run it.
     */
    public static void require() {
        if (unavailable() == null) {
            return;
        }
        if (REQUIRED) {
            org.junit.jupiter.api.Assertions.fail(requiredButUnavailable());
        }
        org.junit.jupiter.api.Assumptions.abort(skipReason());
    }

    public static Connection connect() throws SQLException {
        return DriverManager.getConnection(URL, USER, PASSWORD);
    }

    /**
     * Drops the tables {@code prefix + name}, each name, that a test made; nothing where PostgreSQL
     * is not here (the test was skipped).
     */
    public static void dropTables(String prefix, String... names) throws SQLException {
        if (UNAVAILABLE != null) {
            return;
        }
        try (Connection c = connect(); Statement s = c.createStatement()) {
            for (String name : names) {
                s.execute("DROP TABLE IF EXISTS " + prefix + name);
            }
        }
    }

    private static String probe() {
        if (URL == null || URL.isBlank()) {
            return "MEMLIFE_PG_URL is not set";
        }
        try (Connection c = connect()) {
            return c.isValid(5) ? null : "the connection to " + Database.mask(URL) + " is not valid";
        } catch (SQLException e) {
            return "PostgreSQL at " + Database.mask(URL) + " is unreachable: " + e.getMessage();
        }
    }
}
