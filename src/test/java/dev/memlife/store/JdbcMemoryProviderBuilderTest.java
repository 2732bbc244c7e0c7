package dev.memlife.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteDataSource;

/** Building a store: argument checks, and a database that cannot be reached at start. */
@Timeout(60)
class JdbcMemoryProviderBuilderTest {

    @TempDir
    Path dir;

    @Test
    void nullArgumentsAreRejectedByName() {
        JdbcMemoryProvider.Builder b = JdbcMemoryProvider.builder("jdbc:sqlite:x.db");
        assertThatThrownBy(() -> JdbcMemoryProvider.builder((String) null)).hasMessage("url");
        assertThatThrownBy(() -> JdbcMemoryProvider.builder((DataSource) null)).hasMessage("dataSource");
        assertThatThrownBy(() -> JdbcMemoryProvider.sqlite(null)).hasMessage("file");
        assertThatThrownBy(() -> b.user(null)).isInstanceOf(NullPointerException.class).hasMessage("user");
        assertThatThrownBy(() -> b.password(null)).hasMessage("password");
        assertThatThrownBy(() -> b.name(null)).hasMessage("name");
        assertThatThrownBy(() -> b.tablePrefix(null)).hasMessage("tablePrefix");
        assertThatThrownBy(() -> b.retryBackoff(null)).hasMessage("backoff");
        assertThatThrownBy(() -> b.lockTimeout(null)).hasMessage("timeout");
        assertThatThrownBy(() -> b.sleeper(null)).hasMessage("sleeper");
        assertThatThrownBy(() -> b.wallClock(null)).hasMessage("wallClock");
    }

    @Test
    void badSettingsAreRejectedWithTheValue() {
        JdbcMemoryProvider.Builder b = JdbcMemoryProvider.builder("jdbc:sqlite:x.db");
        assertThatThrownBy(() -> JdbcMemoryProvider.builder("postgres://h/db?password=pw"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("password=***")
                .hasMessageNotContaining("pw");
        assertThatThrownBy(() -> b.tablePrefix("x; DROP TABLE y"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'x; DROP TABLE y'");
        assertThatThrownBy(() -> b.name(" ")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> b.prefetchLimit(0)).hasMessage("prefetchLimit must be at least 1, was 0");
        assertThatThrownBy(() -> b.retryAttempts(0)).hasMessage("retryAttempts must be at least 1, was 0");
        assertThatThrownBy(() -> b.retryBackoff(Duration.ofMillis(-1)))
                .hasMessage("retryBackoff must not be negative, was PT-0.001S");
        assertThatThrownBy(() -> b.lockTimeout(Duration.ZERO)).hasMessage("lockTimeout must be positive, was PT0S");
        SQLiteDataSource ds = new SQLiteDataSource();
        assertThatThrownBy(() -> JdbcMemoryProvider.builder(ds).user("u").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("set them on the DataSource");
    }

    /**
     * Regression, defect "a huge SQLite lock timeout silently becomes 3 s": the SQLite driver fell
     * back to its 3 s default for a busy timeout beyond an int of milliseconds, a sub-millisecond
     * timeout became 0 ms ("never wait" to SQLite, "wait forever" to PostgreSQL), and a backoff
     * beyond 30 s was shortened to 30 s. Each setter now refuses a duration it cannot use as given,
     * naming itself and the value.
     */
    @Test
    void aDurationTheStoreCannotUseAsGivenIsRejectedByItsSetter() {
        JdbcMemoryProvider.Builder b = JdbcMemoryProvider.builder("jdbc:sqlite:x.db");

        assertThatThrownBy(() -> b.lockTimeout(Duration.ofDays(30))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lockTimeout must be at most 24.8 days (2147483647 ms, the databases take an int of "
                        + "milliseconds), was PT720H");
        assertThatThrownBy(() -> b.lockTimeout(Duration.ofMillis(Integer.MAX_VALUE + 1L)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageEndingWith("was PT596H31M23.648S");
        assertThatThrownBy(() -> b.lockTimeout(Duration.ofSeconds(Long.MAX_VALUE)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("lockTimeout must be at most");
        assertThatThrownBy(() -> b.lockTimeout(Duration.ofNanos(500_000))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("lockTimeout must be a whole number of milliseconds (the databases take milliseconds), "
                        + "was PT0.0005S");
        assertThatThrownBy(() -> b.lockTimeout(Duration.ofNanos(1_500_000)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageEndingWith("was PT0.0015S");
        assertThatThrownBy(() -> b.retryBackoff(Duration.ofSeconds(31))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("retryBackoff must be at most PT30S (the longest wait between two attempts), was PT31S");
        assertThatThrownBy(() -> b.retryBackoff(Duration.ofSeconds(Long.MAX_VALUE)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("retryBackoff must be at most");
    }

    /** The longest durations the setters accept are used as given: SQLite gets the whole lock timeout. */
    @Test
    void theLongestAcceptedDurationsAreUsedAsGiven() throws Exception {
        String url = "jdbc:sqlite:" + dir.resolve("memory.db");
        JdbcMemoryProvider.builder(url).lockTimeout(JdbcMemoryProvider.Builder.MAX_LOCK_TIMEOUT)
                .retryBackoff(JdbcMemoryProvider.Builder.MAX_RETRY_BACKOFF).build().shutdown();

        Database db = Database.ofUrl(url, new java.util.Properties(), JdbcMemoryProvider.Builder.MAX_LOCK_TIMEOUT);
        try (Connection c = db.open();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("PRAGMA busy_timeout")) {
            rs.next();
            assertThat(rs.getLong(1)).isEqualTo(Integer.MAX_VALUE);
        }
        assertThat(new Retry("p", "db", 3, JdbcMemoryProvider.Builder.MAX_RETRY_BACKOFF, new RecordingSleeper())
                .backoff(1)).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void anUnreachablePostgresAtStartFailsNamingTheUrlWithThePasswordMasked() {
        String url = "jdbc:postgresql://127.0.0.1:1/memlife?user=bob&password=hunter2&connectTimeout=5";
        RecordingSleeper sleeper = new RecordingSleeper();

        assertThatThrownBy(() -> JdbcMemoryProvider.builder(url).password("s3cret").sleeper(sleeper).build())
                .isInstanceOf(JdbcStoreException.class)
                .hasMessageContaining("jdbc:postgresql://127.0.0.1:1/memlife?user=bob&password=***&connectTimeout=5")
                .hasMessageContaining("after 3 attempts")
                .satisfies(e -> assertThat(stackTrace(e)).doesNotContain("hunter2").doesNotContain("s3cret"));
        assertThat(sleeper.waits()).containsExactly(Duration.ofMillis(100), Duration.ofMillis(200));
    }

    @Test
    void anUnreachableSqliteFileAtStartFailsNamingTheUrl() {
        Path missing = dir.resolve("no-such-dir").resolve("memory.db");

        assertThatThrownBy(() -> JdbcMemoryProvider.builder("jdbc:sqlite:" + missing).retryAttempts(1).build())
                .isInstanceOf(JdbcStoreException.class)
                .hasMessageContaining("jdbc:sqlite:" + missing)
                .hasMessageContaining("after 1 attempt");
    }

    @Test
    void passwordsInUrlsAreMasked() {
        assertThat(Database.mask("jdbc:postgresql://h:5432/db?user=u&password=p4ss&ssl=true"))
                .isEqualTo("jdbc:postgresql://h:5432/db?user=u&password=***&ssl=true");
        assertThat(Database.mask("jdbc:postgresql://u:p4ss@h/db")).isEqualTo("jdbc:postgresql://u:***@h/db");
        assertThat(Database.mask("jdbc:foo:thin:@h;PASSWORD=p4ss;x=1")).isEqualTo("jdbc:foo:thin:@h;PASSWORD=***;x=1");
        assertThat(Database.mask("jdbc:sqlite:/tmp/memory.db")).isEqualTo("jdbc:sqlite:/tmp/memory.db");
    }

    @Test
    void theBackoffDoublesUpToItsCap() {
        Retry retry = new Retry("p", "db", 40, Duration.ofMillis(100), new RecordingSleeper());

        assertThat(retry.backoff(1)).isEqualTo(Duration.ofMillis(100));
        assertThat(retry.backoff(2)).isEqualTo(Duration.ofMillis(200));
        assertThat(retry.backoff(3)).isEqualTo(Duration.ofMillis(400));
        assertThat(retry.backoff(40)).isEqualTo(Retry.MAX_BACKOFF);
    }

    @Test
    void anInterruptDuringTheBackoffEndsTheRetriesAndKeepsTheFlag() {
        Path missing = dir.resolve("no-such-dir").resolve("memory.db");
        Sleeper interrupted = d -> {
            throw new InterruptedException("test");
        };
        try {
            assertThatThrownBy(() -> JdbcMemoryProvider.builder("jdbc:sqlite:" + missing).sleeper(interrupted).build())
                    .isInstanceOf(JdbcStoreException.class).hasMessageContaining("interrupted")
                    .hasMessageContaining("after 1 failed attempts");
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
    }

    private static String stackTrace(Throwable t) {
        StringWriter out = new StringWriter();
        t.printStackTrace(new PrintWriter(out));
        return out.toString();
    }
}
