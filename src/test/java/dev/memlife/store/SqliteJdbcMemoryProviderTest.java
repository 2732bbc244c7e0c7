package dev.memlife.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
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
    Dialect dialect() {
        return Dialect.SQLITE;
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
                    + "WHEN NEW.user_content = '" + userContent + "' "
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

        DrainReport report = memory.stop();
        assertThat(report.failed()).isEqualTo(1);
        assertThat(report.delivered()).isEqualTo(1);
        assertThat(sleeper.waits()).hasSize(1);
        assertThat(store.turns("s-1")).extracting(StoredTurn::userContent).containsExactly("after release");
    }

    /**
     * Regression, defect "the SQLite file deleted under a running store": writes kept being
     * acknowledged into the unlinked file. Now the write fails at once, naming the path, the
     * manager counts it failed, reads fail too, and the store keeps failing instead of creating a
     * fresh empty file at the path.
     */
    @Test
    void aFileDeletedUnderARunningStoreFailsEveryLaterWriteAndReadNamingThePath() throws Exception {
        Path file = dir.resolve("memory.db");
        JdbcMemoryProvider store = provider(urlBuilder().retryAttempts(3));
        MemoryManager memory = manager(256, store);
        memory.syncAll("before", "a", "s-1");
        assertThat(memory.flushPending(FLUSH)).isTrue();

        Files.delete(file);

        assertThatThrownBy(() -> store.syncTurn(turn("w-after", "s-1", "after")))
                .isInstanceOf(JdbcStoreException.class)
                .hasMessageContaining("could not store write w-after in jdbc:sqlite:" + file)
                .hasMessageContaining("the SQLite file " + file + " was deleted while the store was running");
        memory.syncAll("after 1", "a", "s-1");
        memory.syncAll("after 2", "a", "s-1");
        assertThat(memory.flushPending(FLUSH)).isTrue();
        DrainReport report = memory.stop();
        assertThat(report.delivered()).isEqualTo(1);
        assertThat(report.failuresByProvider()).isEqualTo(Map.of("store", 2L));
        assertThatThrownBy(store::countTurns).isInstanceOf(JdbcStoreException.class)
                .hasMessageContaining(file + " was deleted");
        assertThat(sleeper.waits()).isEmpty(); // no attempt could succeed: none was retried
        assertThat(file).doesNotExist();
    }

    /**
     * Regression, defect "the SQLite file replaced under a running store": writes kept going into
     * the old, unlinked file while a reader of the path saw the new one. Now they fail, naming the
     * path, and nothing reaches either file.
     */
    @Test
    void aFileReplacedUnderARunningStoreFailsEveryLaterWriteAndTheReplacementGetsNothing() throws Exception {
        Path file = dir.resolve("memory.db");
        JdbcMemoryProvider store = provider();
        store.syncTurn(turn("w-before", "s-1", "before"));
        Path other = dir.resolve("other.db");
        JdbcMemoryProvider.builder("jdbc:sqlite:" + other).tablePrefix(prefix).build().shutdown();

        Files.move(other, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);

        assertThatThrownBy(() -> store.syncBatch(List.of(turn("w1", "s-1", "one"), turn("w2", "s-1", "two"))))
                .isInstanceOf(JdbcStoreException.class)
                .hasMessageContaining("could not store a batch of 2 writes (w1 to w2) in jdbc:sqlite:" + file)
                .hasMessageContaining("the SQLite file " + file + " was replaced by another file");
        assertThatThrownBy(() -> store.turns("s-1")).isInstanceOf(JdbcStoreException.class)
                .hasMessageContaining(file + " was replaced");
        assertThatThrownBy(() -> store.syncTurn(turn("w3", "s-1", "three"))).isInstanceOf(JdbcStoreException.class)
                .hasMessageContaining(file + " was replaced");
        store.shutdown();
        // (SQLite left the old file's WAL at the path, with "before" in it, and replays it here.)
        assertThat(provider(urlBuilder()).turns("s-1")).extracting(StoredTurn::userContent)
                .doesNotContain("one", "two", "three");
    }
}
