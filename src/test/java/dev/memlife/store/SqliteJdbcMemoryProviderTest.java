package dev.memlife.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/** The store contract on a real SQLite file, plus what only SQLite has: WAL, file locks. */
class SqliteJdbcMemoryProviderTest extends JdbcMemoryProviderContract {

    @TempDir
    Path dir;

    String url() {
        return "jdbc:sqlite:" + dir.resolve("memory.db");
    }

    @Override
    JdbcMemoryProvider.Builder urlBuilder() {
        return JdbcMemoryProvider.builder(url());
    }

    @Override
    DataSource dataSource() {
        SQLiteDataSource ds = new SQLiteDataSource();
        ds.setUrl(url());
        return ds;
    }

    @Override
    void rejectUserContent(String prefix, String userContent) throws SQLException {
        try (Connection c = DriverManager.getConnection(url());
                Statement s = c.createStatement()) {
            s.execute("CREATE TRIGGER " + prefix + "reject BEFORE INSERT ON " + prefix + "turns "
                    + "WHEN NEW.user_content = CAST('" + userContent + "' AS BLOB) "
                    + "BEGIN SELECT RAISE(ABORT, 'rejected by the test'); END");
        }
    }

    @Override
    void dropTables(String prefix) {
        // The file lives in the test's temporary directory.
    }

    @Test
    void aFilePathIsAllItTakes() {
        JdbcMemoryProvider store = JdbcMemoryProvider.sqlite(dir.resolve("plain.db"));
        try {
            store.syncTurn(turn("w1", "s", "hello"));
            assertThat(store.turns("s")).extracting(StoredTurn::userContent).containsExactly("hello");
        } finally {
            store.shutdown();
        }
    }

    @Test
    void theFileUsesTheWriteAheadLog() throws Exception {
        provider();
        try (Connection c = DriverManager.getConnection(url());
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("PRAGMA journal_mode")) {
            rs.next();
            assertThat(rs.getString(1)).isEqualToIgnoringCase("wal");
        }
    }

    @Test
    void aFileLockedByAnotherProcessFailsTheBatchAfterBoundedRetriesAndTheNextBatchLandsOnceReleased()
            throws Exception {
        JdbcMemoryProvider store = provider(urlBuilder().lockTimeout(Duration.ofMillis(50)).retryAttempts(2));
        MemoryManager memory = manager(256, store);
        try (Connection other = DriverManager.getConnection(url());
                Statement s = other.createStatement()) {
            s.execute("BEGIN EXCLUSIVE");
            memory.syncAll("while locked", "a", "s-1");
            assertThat(memory.flushPending(FLUSH)).isTrue();
            s.execute("COMMIT");
        }
        memory.syncAll("after release", "a", "s-1");
        assertThat(memory.flushPending(FLUSH)).isTrue();

        DrainReport report = memory.shutdownAll();
        assertThat(report.failed()).isEqualTo(1);
        assertThat(report.delivered()).isEqualTo(1);
        assertThat(sleeper.waits()).hasSize(1);
        assertThat(store.turns("s-1")).extracting(StoredTurn::userContent).containsExactly("after release");
    }
}
