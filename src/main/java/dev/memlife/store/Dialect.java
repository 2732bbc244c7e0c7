package dev.memlife.store;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;

/**
 * What differs between the databases the store supports: column types and per-connection settings.
 * The SQL of reads and writes is the same for both ({@code INSERT ... ON CONFLICT (write_id) DO
 * NOTHING} works on SQLite 3.24+ and PostgreSQL 9.5+).
 */
enum Dialect {

    /**
     * Embedded: WAL journal, {@code synchronous=FULL} (a commit is on disk before it returns, so a
     * delivered write survives a power loss, not just a crash), a busy timeout for lock waits.
     */
    SQLITE("BLOB", "INTEGER PRIMARY KEY") {
        @Override
        void configure(Connection connection, Duration lockTimeout) throws SQLException {
            try (Statement s = connection.createStatement()) {
                s.execute("PRAGMA busy_timeout = " + lockTimeout.toMillis());
                s.execute("PRAGMA journal_mode = WAL");
                s.execute("PRAGMA synchronous = FULL");
            }
        }
    },

    /** Shared between replicas; text cannot hold NUL, so every string is stored as UTF-8 bytes. */
    POSTGRESQL("BYTEA", "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY") {
        @Override
        void configure(Connection connection, Duration lockTimeout) throws SQLException {
            try (Statement s = connection.createStatement()) {
                s.execute("SET lock_timeout = " + lockTimeout.toMillis());
            }
        }
    };

    /** The column type of every string: UTF-8 bytes round-trip any string, NUL included. */
    final String bytesType;
    /** The column definition of the insertion-order key. */
    final String idColumn;

    Dialect(String bytesType, String idColumn) {
        this.bytesType = bytesType;
        this.idColumn = idColumn;
    }

    /** Applies the per-connection settings; {@code lockTimeout} bounds every wait for a lock. */
    abstract void configure(Connection connection, Duration lockTimeout) throws SQLException;

    /** The dialect of the database behind {@code connection}. */
    static Dialect of(Connection connection, String database) throws SQLException {
        String product = connection.getMetaData().getDatabaseProductName();
        String p = product == null ? "" : product.toLowerCase(Locale.ROOT);
        if (p.contains("sqlite")) {
            return SQLITE;
        }
        if (p.contains("postgres")) {
            return POSTGRESQL;
        }
        throw new IllegalArgumentException("unsupported database '" + product + "' at " + database
                + "; JdbcMemoryProvider supports SQLite and PostgreSQL");
    }
}
