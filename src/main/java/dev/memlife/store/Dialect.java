package dev.memlife.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;

/**
 * What differs between the databases the store supports: column types, the uniqueness of write
 * ids, per-connection settings and schema checks. The SQL of reads and writes is the same for both
 * ({@code INSERT ... ON CONFLICT DO NOTHING} works on SQLite 3.24+ and PostgreSQL 9.5+).
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

        @Override
        String writeIdUnique(String table) {
            return "UNIQUE (write_id)";
        }

        @Override
        boolean tableExists(Connection connection, String table) throws SQLException {
            return exists(connection, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE",
                    table);
        }

        @Override
        void prepareSchemaChange(Connection connection, String database) {
            // Any encoding SQLite has (UTF-8, UTF-16) holds every well-formed string; the first
            // write of the transaction takes the database's write lock.
        }
    },

    /** Shared between replicas; needs a UTF8 database, and lets one replica change the schema at a time. */
    POSTGRESQL("BYTEA", "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY") {
        @Override
        void configure(Connection connection, Duration lockTimeout) throws SQLException {
            try (Statement s = connection.createStatement()) {
                s.execute("SET lock_timeout = " + lockTimeout.toMillis());
            }
        }

        /** A hash index has no size limit on its keys (a B-tree's is about 2.7 kB). */
        @Override
        String writeIdUnique(String table) {
            return "CONSTRAINT " + table + "_write_id_unique EXCLUDE USING hash (write_id WITH =)";
        }

        @Override
        boolean tableExists(Connection connection, String table) throws SQLException {
            return exists(connection, "SELECT 1 WHERE to_regclass(?) IS NOT NULL", table);
        }

        @Override
        void prepareSchemaChange(Connection connection, String database) throws SQLException {
            try (Statement s = connection.createStatement()) {
                try (ResultSet rs = s.executeQuery("SHOW server_encoding")) {
                    rs.next();
                    if (!"UTF8".equalsIgnoreCase(rs.getString(1))) {
                        throw new JdbcStoreException("the PostgreSQL database at " + database + " has the encoding "
                                + rs.getString(1) + "; the store needs UTF8 to hold every string", null);
                    }
                }
                s.execute("SELECT pg_advisory_xact_lock(" + SCHEMA_LOCK + ")");
            }
        }
    };

    /** The advisory lock a PostgreSQL transaction creating or migrating the store's tables holds. */
    static final long SCHEMA_LOCK = 0x6d656d6c69666531L; // "memlife1"

    /** The column type of a message list. */
    final String bytesType;
    /** The column definition of the insertion-order key. */
    final String idColumn;

    Dialect(String bytesType, String idColumn) {
        this.bytesType = bytesType;
        this.idColumn = idColumn;
    }

    /** The table constraint that keeps write ids of {@code table} unique, however long they are. */
    abstract String writeIdUnique(String table);

    /** Whether the table {@code table} (an unquoted name) exists. */
    abstract boolean tableExists(Connection connection, String table) throws SQLException;

    /**
     * Called first in the transaction that creates or migrates the store's tables: checks that the
     * database can hold every string and keeps other stores from changing the schema until it ends.
     *
     * @throws JdbcStoreException if the database cannot hold every string
     */
    abstract void prepareSchemaChange(Connection connection, String database) throws SQLException;

    /** Applies the per-connection settings; {@code lockTimeout} bounds every wait for a lock. */
    abstract void configure(Connection connection, Duration lockTimeout) throws SQLException;

    private static boolean exists(Connection connection, String sql, String table) throws SQLException {
        try (PreparedStatement ps = connection.prepareStatement(sql)) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

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
