package dev.memlife.store;

import dev.memlife.Turn;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The store's two tables and every statement on them, all prepared: {@code <prefix>turns} (one
 * row per write id, in insertion order) and {@code <prefix>session_ends} (one row per session
 * boundary). Strings are stored as UTF-8 bytes (see {@link Codec}); times as epoch milliseconds.
 * Stateless apart from its SQL text and thread-safe; the caller owns each connection.
 */
final class Tables {

    private static final String TURN_COLUMNS =
            "write_id, session_id, user_content, assistant_content, messages, accepted_at, stored_at";

    private final String turns;
    private final String sessionEnds;
    private final String insertTurn;

    Tables(String prefix) {
        this.turns = prefix + "turns";
        this.sessionEnds = prefix + "session_ends";
        this.insertTurn = "INSERT INTO " + turns + " (" + TURN_COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?)"
                + " ON CONFLICT (write_id) DO NOTHING";
    }

    /** Creates the tables and the session index if they do not exist yet. */
    void create(Connection c, Dialect d) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS " + turns + " ("
                    + "id " + d.idColumn + ", "
                    + "write_id " + d.bytesType + " NOT NULL UNIQUE, "
                    + "session_id " + d.bytesType + " NOT NULL, "
                    + "user_content " + d.bytesType + " NOT NULL, "
                    + "assistant_content " + d.bytesType + " NOT NULL, "
                    + "messages " + d.bytesType + " NOT NULL, "
                    + "accepted_at BIGINT NOT NULL, "
                    + "stored_at BIGINT NOT NULL)");
            s.execute("CREATE INDEX IF NOT EXISTS " + turns + "_by_session ON " + turns + " (session_id, id)");
            s.execute("CREATE TABLE IF NOT EXISTS " + sessionEnds + " ("
                    + "id " + d.idColumn + ", "
                    + "session_id " + d.bytesType + " NOT NULL, "
                    + "message_count INTEGER NOT NULL, "
                    + "ended_at BIGINT NOT NULL)");
        }
    }

    /**
     * Inserts {@code batch} in one transaction; a write id already stored is skipped. On failure
     * the transaction is rolled back and the exception rethrown.
     *
     * @return how many turns were new
     */
    int insertTurns(Connection c, List<Turn> batch, long storedAtMillis) throws SQLException {
        c.setAutoCommit(false);
        try (PreparedStatement ps = c.prepareStatement(insertTurn)) {
            for (Turn t : batch) {
                ps.setBytes(1, Codec.bytes(t.writeId()));
                ps.setBytes(2, Codec.bytes(t.sessionId()));
                ps.setBytes(3, Codec.bytes(t.userContent()));
                ps.setBytes(4, Codec.bytes(t.assistantContent()));
                ps.setBytes(5, Codec.encodeMessages(t.messages()));
                ps.setLong(6, t.acceptedAt().toEpochMilli());
                ps.setLong(7, storedAtMillis);
                ps.addBatch();
            }
            int stored = 0;
            for (int n : ps.executeBatch()) {
                stored += Math.max(n, 0);
            }
            c.commit();
            c.setAutoCommit(true);
            return stored;
        } catch (SQLException | RuntimeException e) {
            try {
                c.rollback();
            } catch (SQLException | RuntimeException rollbackFailure) {
                e.addSuppressed(rollbackFailure);
            }
            throw e;
        }
    }

    void insertSessionEnd(Connection c, String sessionId, int messageCount, long endedAtMillis) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "INSERT INTO " + sessionEnds + " (session_id, message_count, ended_at) VALUES (?, ?, ?)")) {
            ps.setBytes(1, Codec.bytes(sessionId));
            ps.setInt(2, messageCount);
            ps.setLong(3, endedAtMillis);
            ps.executeUpdate();
        }
    }

    long countTurns(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM " + turns);
                ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    long countTurns(Connection c, String sessionId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM " + turns + " WHERE session_id = ?")) {
            ps.setBytes(1, Codec.bytes(sessionId));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** The session's turns in insertion order: all of them, or the {@code limit} most recent. */
    List<StoredTurn> turns(Connection c, String sessionId, int limit) throws SQLException {
        boolean all = limit == Integer.MAX_VALUE;
        String sql = "SELECT " + TURN_COLUMNS + " FROM " + turns + " WHERE session_id = ? ORDER BY id"
                + (all ? "" : " DESC LIMIT ?");
        List<StoredTurn> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setBytes(1, Codec.bytes(sessionId));
            if (!all) {
                ps.setInt(2, limit);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new StoredTurn(Codec.string(rs.getBytes(1)), Codec.string(rs.getBytes(2)),
                            Codec.string(rs.getBytes(3)), Codec.string(rs.getBytes(4)),
                            Codec.decodeMessages(rs.getBytes(5)), Instant.ofEpochMilli(rs.getLong(6)),
                            Instant.ofEpochMilli(rs.getLong(7))));
                }
            }
        }
        if (!all) {
            Collections.reverse(out);
        }
        return out;
    }

    List<StoredSessionEnd> sessionEnds(Connection c) throws SQLException {
        List<StoredSessionEnd> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT session_id, message_count, ended_at FROM " + sessionEnds + " ORDER BY id");
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(new StoredSessionEnd(Codec.string(rs.getBytes(1)), rs.getInt(2),
                        Instant.ofEpochMilli(rs.getLong(3))));
            }
        }
        return out;
    }
}
