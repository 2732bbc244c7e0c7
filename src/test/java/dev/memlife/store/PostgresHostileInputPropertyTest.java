package dev.memlife.store;

import static org.junit.jupiter.api.Assertions.fail;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.lifecycle.BeforeProperty;
import net.jqwik.api.lifecycle.LifecycleContext;
import net.jqwik.api.lifecycle.SkipExecutionHook;

/**
 * The hostile-input properties on PostgreSQL, each try on tables of its own. Run when {@link
 * PostgresAvailability} finds a server; otherwise skipped, or failed when {@code
 * MEMLIFE_REQUIRE_PG=1}.
 */
@AddLifecycleHook(PostgresHostileInputPropertyTest.SkipWithoutPostgres.class)
class PostgresHostileInputPropertyTest extends HostileInputProperties {

    /** Skips the properties when PostgreSQL is unavailable and not required. */
    static final class SkipWithoutPostgres implements SkipExecutionHook {
        @Override
        public SkipResult shouldBeSkipped(LifecycleContext context) {
            return PostgresAvailability.unavailable() == null || PostgresAvailability.REQUIRED ? SkipResult.doNotSkip()
                    : SkipResult.skip(PostgresAvailability.skipReason());
        }
    }

    @BeforeProperty
    void requirePostgres() {
        if (PostgresAvailability.unavailable() != null) {
            fail(PostgresAvailability.requiredButUnavailable());
        }
    }

    @Override
    JdbcMemoryProvider.Builder builder(String prefix) {
        return JdbcMemoryProvider.builder(PostgresAvailability.URL).user(PostgresAvailability.USER)
                .password(PostgresAvailability.PASSWORD).tablePrefix(prefix);
    }

    @Override
    void dropTables(String prefix) throws SQLException {
        try (Connection c = PostgresAvailability.connect();
                Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + prefix + "turns, " + prefix + "session_ends, " + prefix
                    + "schema_version");
        }
    }
}
