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
     * Stores {@code writes} in one transaction, in their order: every batch's turns (a write id
     * already stored is skipped), and every session end. Sets each batch's {@link
     * GroupCommit.Write#stored count of new turns}. On failure the transaction is rolled back and
     * the exception rethrown.
     */
    void insertWrites(Connection c, List<GroupCommit.Write> writes) throws SQLException {
        c.setAutoCommit(false);
        PreparedStatement turnsInsert = null;
        PreparedStatement endsInsert = null;
        try {
            for (GroupCommit.Write w : writes) {
                if (w.turns != null) {
                    if (turnsInsert == null) {
                        turnsInsert = c.prepareStatement(insertTurn);
                    }
                    bindTurns(turnsInsert, w.turns, w.atMillis);
                } else {
                    if (endsInsert == null) {
                        endsInsert = c.prepareStatement(insertSessionEndSql());
                    }
                    endsInsert.setString(1, Codec.text(w.endedSession));
                    endsInsert.setInt(2, w.messageCount);
                    endsInsert.setLong(3, w.atMillis);
                    endsInsert.addBatch();
                }
            }
            if (turnsInsert != null) {
                int[] counts = turnsInsert.executeBatch();
                int row = 0;
                for (GroupCommit.Write w : writes) {
                    if (w.turns != null) {
                        int stored = 0;
                        for (int end = row + w.turns.size(); row < end; row++) {
                            stored += row < counts.length ? Math.max(counts[row], 0) : 0;
                        }
                        w.stored = stored;
                    }
                }
            }
            if (endsInsert != null) {
                endsInsert.executeBatch();
            }
            c.commit();
        } catch (SQLException | RuntimeException e) {
            Tables.rollBack(c, e);
            closeQuietly(turnsInsert, e);
            closeQuietly(endsInsert, e);
            throw e;
        }
        closeCommitted(turnsInsert);
        closeCommitted(endsInsert);
        c.setAutoCommit(true);
    }

    private static void bindTurns(PreparedStatement ps, List<Turn> batch, long storedAtMillis) throws SQLException {
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

    /** The ids of the sessions with stored turns, each once, in the order of their first stored turn. */
    List<String> sessionIds(Connection c) throws SQLException {
        return list(c, "SELECT session_id FROM " + turns + " GROUP BY session_id ORDER BY MIN(id)",
                rs -> Codec.string(rs.getString(1)));
    }

    List<StoredSessionEnd> sessionEnds(Connection c) throws SQLException {
        return list(c, "SELECT session_id, message_count, ended_at FROM " + sessionEnds + " ORDER BY id",
                rs -> new StoredSessionEnd(Codec.string(rs.getString(1)), rs.getInt(2),
                        Instant.ofEpochMilli(rs.getLong(3))));
    }

    /** One row of a result, read. */
    @FunctionalInterface
    private interface Row<T> {
        T read(ResultSet rs) throws SQLException;
    }

    /** Every row {@code sql} selects, read by {@code row}, in order. */
    private static <T> List<T> list(Connection c, String sql, Row<T> row) throws SQLException {
        List<T> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(row.read(rs));
            }
        }
        return out;
    }

    private static void bindSession(PreparedStatement ps, String sessionId) throws SQLException {
        String stored = Codec.text(sessionId);
        ps.setString(1, stored);
        ps.setString(2, stored);
    }

    /**
     * Closes {@code ps}, if there is one, after its transaction committed. A failure to close is
     * ignored: thrown, it would make the committed writes look failed, and a retry would store
     * the session ends twice; the statement goes when its connection is closed.
     */
    private static void closeCommitted(PreparedStatement ps) {
        if (ps != null) {
            try {
                ps.close();
            } catch (SQLException | RuntimeException ignored) {
                // see above
            }
        }
    }

    /** Closes {@code ps} if there is one; a failure to close is kept with {@code cause}, not thrown. */
    private static void closeQuietly(PreparedStatement ps, Exception cause) {
        if (ps == null) {
            return;
        }
        try {
            ps.close();
        } catch (SQLException | RuntimeException closeFailure) {
            cause.addSuppressed(closeFailure);
        }
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
