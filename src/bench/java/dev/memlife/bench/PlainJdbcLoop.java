package dev.memlife.bench;

import dev.memlife.store.JdbcMemoryProvider;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.function.IntFunction;

/**
 * The peer of the store benchmarks: what a programmer would write by hand to put the same rows
 * into the same table as fast as sqlite-jdbc allows. One thread, one connection (WAL, {@code
 * synchronous=FULL}, as the store's), one prepared {@code INSERT} into the {@code memlife_turns}
 * table that {@link JdbcMemoryProvider} created (the same columns, constraints and index), {@code
 * addBatch} per row, {@code executeBatch} and a commit every {@value #ROWS_PER_TRANSACTION} rows.
 * The rows are the ones memlife stores for the same writes: a write id {@code <uuid>:<n>}, the
 * session id and contents as plain text (what {@code Codec.text} stores for normal text), the
 * empty message list's 5 bytes, accepted-at and stored-at epoch milliseconds. Each row's strings
 * are made as it is inserted (a few tens of nanoseconds against microseconds per row).
 */
final class PlainJdbcLoop {

    static final int ROWS_PER_TRANSACTION = 1_024;

    /** What the store writes for an empty message list: format 2, count 0. */
    static final byte[] NO_MESSAGES = {2, 0, 0, 0, 0};

    static final String INSERT = "INSERT INTO memlife_turns (write_id, session_id, user_content, "
            + "assistant_content, messages, accepted_at, stored_at) VALUES (?, ?, ?, ?, ?, ?, ?)";

    /** Rows committed and the time it took, from the first insert to the last commit. */
    record Result(long rows, long nanos) {
        double rowsPerSecond() {
            return rows / (nanos / 1e9);
        }
    }

    private PlainJdbcLoop() {}

    /**
     * The write ids of one manager's writes: {@code <uuid>:<n>} for its {@code n}-th write, one
     * random UUID per manager, as memlife's managers make them.
     */
    static IntFunction<String> writeIds(int perManager, int managers) {
        String[] prefixes = new String[managers];
        for (int m = 0; m < managers; m++) {
            prefixes[m] = UUID.randomUUID().toString();
        }
        return i -> prefixes[i / perManager] + ':' + (i % perManager + 1);
    }

    /** Creates the store's schema in a fresh SQLite file, as the store itself does. */
    static void createSchema(Path file) {
        JdbcMemoryProvider.sqlite(file).close();
    }

    /**
     * Inserts up to {@code rows} rows into the store's table in {@code file} (created by {@link
     * #createSchema}), stopping at the first commit after {@code budget} has passed.
     *
     * @param writeId the write id of row {@code i}
     * @param session the session id of row {@code i}
     * @param user the user content of row {@code i}
     */
    static Result run(Path file, int rows, Duration budget, IntFunction<String> writeId, IntFunction<String> session,
            IntFunction<String> user, String assistant) throws SQLException {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath())) {
            try (Statement s = c.createStatement()) {
                s.execute("PRAGMA busy_timeout = 5000");
                s.execute("PRAGMA journal_mode = WAL");
                s.execute("PRAGMA synchronous = FULL");
            }
            c.setAutoCommit(false);
            long start = System.nanoTime();
            long deadline = start + budget.toNanos();
            long committed = 0;
            try (PreparedStatement ps = c.prepareStatement(INSERT)) {
                int i = 0;
                while (i < rows) {
                    long now = System.currentTimeMillis();
                    int end = Math.min(rows, i + ROWS_PER_TRANSACTION);
                    for (; i < end; i++) {
                        ps.setString(1, writeId.apply(i));
                        ps.setString(2, session.apply(i));
                        ps.setString(3, user.apply(i));
                        ps.setString(4, assistant);
                        ps.setBytes(5, NO_MESSAGES);
                        ps.setLong(6, now);
                        ps.setLong(7, now);
                        ps.addBatch();
                    }
                    ps.executeBatch();
                    c.commit();
                    committed = i;
                    if (System.nanoTime() - deadline >= 0) {
                        break;
                    }
                }
            }
            return new Result(committed, System.nanoTime() - start);
        }
    }

    /** Rows in the store's table of {@code file}, on a connection of its own. */
    static long countRows(Path file) throws SQLException {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath());
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM memlife_turns")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
