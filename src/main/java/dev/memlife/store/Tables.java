package dev.memlife.store;

import dev.memlife.Turn;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Every statement on the store's two tables, all prepared: {@code <prefix>turns} (one row per
 * write id, in insertion order) and {@code <prefix>session_ends} (one row per session boundary);
 * {@link Schema} creates them. Strings are stored as {@link Codec#text(String) text}, message
 * lists as {@link Codec#encodeMessages bytes}, times as epoch milliseconds. Stateless apart from
 * its SQL text and thread-safe; the caller owns each connection.
 */
final class Tables {

    /** How many leading characters of a session id its index holds: short enough for any index. */
    static final int SESSION_KEY_CHARS = 200;
    /** The indexed expression by which turns are found by session (with the insertion order). */
    static final String SESSION_KEY = "substr(session_id, 1, " + SESSION_KEY_CHARS + ")";
    /**
     * One session's rows; both parameters are the stored session id. The first condition lets the
     * index find them, the second is the exact match (session ids may share their first
     * characters). Plain {@code WHERE session_id = ?} finds the same rows, without the index.
     */
    private static final String OF_SESSION =
            " WHERE " + SESSION_KEY + " = substr(CAST(? AS TEXT), 1, " + SESSION_KEY_CHARS + ") AND session_id = ?";

    private static final String TURN_COLUMNS =
            "write_id, session_id, user_content, assistant_content, messages, accepted_at, stored_at";

    final String turns;
    final String sessionEnds;
    private final String insertTurn;

    Tables(String prefix) {
        this.turns = prefix + "turns";
        this.sessionEnds = prefix + "session_ends";
        this.insertTurn = insertTurnSql(true);
    }

    /** The insert of one turn; with {@code skipDuplicates}, a write id already stored is skipped. */
    String insertTurnSql(boolean skipDuplicates) {
        return "INSERT INTO " + turns + " (" + TURN_COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?)"
                + (skipDuplicates ? " ON CONFLICT DO NOTHING" : "");
    }

    String insertSessionEndSql() {
        return "INSERT INTO " + sessionEnds + " (session_id, message_count, ended_at) VALUES (?, ?, ?)";
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
                ps.setString(1, Codec.text(t.writeId()));
                ps.setString(2, Codec.text(t.sessionId()));
                ps.setString(3, Codec.text(t.userContent()));
                ps.setString(4, Codec.text(t.assistantContent()));
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
            Tables.rollBack(c, e);
            throw e;
        }
    }

    void insertSessionEnd(Connection c, String sessionId, int messageCount, long endedAtMillis) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(insertSessionEndSql())) {
            ps.setString(1, Codec.text(sessionId));
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
        try (PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM " + turns + OF_SESSION)) {
            bindSession(ps, sessionId);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** The session's turns in insertion order: all of them, or the {@code limit} most recent. */
    List<StoredTurn> turns(Connection c, String sessionId, int limit) throws SQLException {
        boolean all = limit == Integer.MAX_VALUE;
        String sql = "SELECT " + TURN_COLUMNS + " FROM " + turns + OF_SESSION + " ORDER BY id"
                + (all ? "" : " DESC LIMIT ?");
        List<StoredTurn> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            bindSession(ps, sessionId);
            if (!all) {
                ps.setInt(3, limit);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new StoredTurn(Codec.string(rs.getString(1)), Codec.string(rs.getString(2)),
                            Codec.string(rs.getString(3)), Codec.string(rs.getString(4)),
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
                out.add(new StoredSessionEnd(Codec.string(rs.getString(1)), rs.getInt(2),
                        Instant.ofEpochMilli(rs.getLong(3))));
            }
        }
        return out;
    }

    private static void bindSession(PreparedStatement ps, String sessionId) throws SQLException {
        String stored = Codec.text(sessionId);
        ps.setString(1, stored);
        ps.setString(2, stored);
    }

    /** Rolls a failed transaction back; a failure to roll back is kept with {@code cause}, not thrown. */
    static void rollBack(Connection c, Exception cause) {
        try {
            c.rollback();
        } catch (SQLException | RuntimeException rollbackFailure) {
            cause.addSuppressed(rollbackFailure);
        }
    }
}
