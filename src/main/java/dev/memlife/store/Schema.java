package dev.memlife.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store's tables and their version, kept in {@code <prefix>schema_version} (one row).
 *
 * <p>Version {@value #VERSION}: session ids, write ids and contents in text columns, written by
 * {@link Codec#text(String)} (normal text as itself, readable with plain SQL); message lists in a
 * bytes column; write ids unique; turns found by session through an index on the session id's
 * first {@value Tables#SESSION_KEY_CHARS} characters and the insertion order.
 *
 * <p>Version 1 (the tables an earlier memlife created, with no version table): every string as
 * UTF-8 in a bytes column. {@link #prepare} migrates it in one transaction: the old tables are
 * renamed, the new ones created, every row copied in order (strings decoded from UTF-8 and
 * re-encoded, message lists copied as they are: {@link Codec} still reads their format), and the
 * old tables dropped. A version this code does not know is refused.
 */
final class Schema {

    private static final Logger LOG = LoggerFactory.getLogger(JdbcMemoryProvider.class);

    /** The schema version this code creates and uses. */
    static final int VERSION = 2;

    private static final int COPY_BATCH = 500;

    private final Tables tables;
    private final String versionTable;
    private final String database;

    Schema(Tables tables, String prefix, String database) {
        this.tables = tables;
        this.versionTable = prefix + "schema_version";
        this.database = database;
    }

    /**
     * Creates the tables if there are none, migrates version-1 tables, or checks that the tables
     * have this version; in one transaction, rolled back on failure.
     *
     * @throws JdbcStoreException if the tables have a newer version, or the database cannot hold
     *     every string
     */
    void prepare(Connection c, Dialect d) throws SQLException {
        c.setAutoCommit(false);
        try {
            d.prepareSchemaChange(c, database);
            int version = version(c, d);
            if (version == 0) {
                create(c, d);
            } else if (version == 1) {
                migrateFromVersion1(c, d);
            } else if (version != VERSION) {
                throw new JdbcStoreException("the tables " + tables.turns + " and " + tables.sessionEnds + " in "
                        + database + " have schema version " + version + ", which this memlife does not know (it "
                        + "uses version " + VERSION + "); use the memlife that created them, or another tablePrefix",
                        null);
            }
            c.commit();
        } catch (SQLException | RuntimeException e) {
            Tables.rollBack(c, e);
            throw e;
        }
        c.setAutoCommit(true);
    }

    /** 0 if there are no tables, 1 for tables without a version, else the recorded version. */
    private int version(Connection c, Dialect d) throws SQLException {
        if (d.tableExists(c, versionTable)) {
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT version FROM " + versionTable)) {
                if (!rs.next()) {
                    throw new SQLException(versionTable + " in " + database + " is empty");
                }
                return rs.getInt(1);
            }
        }
        return d.tableExists(c, tables.turns) || d.tableExists(c, tables.sessionEnds) ? 1 : 0;
    }

    private void create(Connection c, Dialect d) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + tables.turns + " ("
                    + "id " + d.idColumn + ", "
                    + "write_id TEXT NOT NULL, "
                    + "session_id TEXT NOT NULL, "
                    + "user_content TEXT NOT NULL, "
                    + "assistant_content TEXT NOT NULL, "
                    + "messages " + d.bytesType + " NOT NULL, "
                    + "accepted_at BIGINT NOT NULL, "
                    + "stored_at BIGINT NOT NULL, "
                    + d.writeIdUnique(tables.turns) + ")");
            s.execute("CREATE INDEX " + tables.turns + "_by_session ON " + tables.turns + " (" + Tables.SESSION_KEY
                    + ", id)");
            s.execute("CREATE TABLE " + tables.sessionEnds + " ("
                    + "id " + d.idColumn + ", "
                    + "session_id TEXT NOT NULL, "
                    + "message_count INTEGER NOT NULL, "
                    + "ended_at BIGINT NOT NULL)");
            s.execute("CREATE TABLE " + versionTable + " (version INTEGER NOT NULL)");
            s.execute("INSERT INTO " + versionTable + " (version) VALUES (" + VERSION + ")");
        }
    }

    private void migrateFromVersion1(Connection c, Dialect d) throws SQLException {
        String oldTurns = tables.turns + "_v1";
        String oldEnds = tables.sessionEnds + "_v1";
        boolean hadTurns = d.tableExists(c, tables.turns);
        boolean hadEnds = d.tableExists(c, tables.sessionEnds);
        try (Statement s = c.createStatement()) {
            if (hadTurns) {
                s.execute("DROP INDEX IF EXISTS " + tables.turns + "_by_session");
                s.execute("ALTER TABLE " + tables.turns + " RENAME TO " + oldTurns);
            }
            if (hadEnds) {
                s.execute("ALTER TABLE " + tables.sessionEnds + " RENAME TO " + oldEnds);
            }
        }
        create(c, d);
        long turns = hadTurns ? copy(c, "SELECT write_id, session_id, user_content, assistant_content, messages, "
                + "accepted_at, stored_at FROM " + oldTurns + " ORDER BY id", tables.insertTurnSql(false), 4) : 0;
        long ends = hadEnds ? copy(c, "SELECT session_id, message_count, ended_at FROM " + oldEnds + " ORDER BY id",
                tables.insertSessionEndSql(), 1) : 0;
        try (Statement s = c.createStatement()) {
            if (hadTurns) {
                s.execute("DROP TABLE " + oldTurns);
            }
            if (hadEnds) {
                s.execute("DROP TABLE " + oldEnds);
            }
        }
        LOG.info("migrated {} and {} in {} from schema version 1 to {}: {} turns, {} session ends", tables.turns,
                tables.sessionEnds, database, VERSION, turns, ends);
    }

    /**
     * Copies every row {@code select} returns into {@code insert}, in order; its first {@code
     * strings} columns are version-1 strings (UTF-8 bytes), re-encoded as text, and the others are
     * copied as they are.
     */
    private static long copy(Connection c, String select, String insert, int strings) throws SQLException {
        long copied = 0;
        try (PreparedStatement from = c.prepareStatement(select);
                PreparedStatement to = c.prepareStatement(insert)) {
            from.setFetchSize(COPY_BATCH);
            try (ResultSet rs = from.executeQuery()) {
                int columns = rs.getMetaData().getColumnCount();
                while (rs.next()) {
                    for (int i = 1; i <= columns; i++) {
                        if (i <= strings) {
                            to.setString(i, Codec.text(Codec.utf8(rs.getBytes(i))));
                        } else {
                            to.setObject(i, rs.getObject(i));
                        }
                    }
                    to.addBatch();
                    if (++copied % COPY_BATCH == 0) {
                        to.executeBatch();
                    }
                }
            }
            to.executeBatch();
        }
        return copied;
    }
}
