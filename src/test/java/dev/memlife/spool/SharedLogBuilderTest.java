package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sqlite.SQLiteDataSource;

/**
 * The shared log's builder refuses bad settings by name before it touches a database; its
 * connection settings are the JDBC store's ({@code store.JdbcBuilder}), checked the same way.
 */
@Timeout(30)
class SharedLogBuilderTest {

    @Test
    void nullArgumentsAreRejectedByName() {
        SharedLog.Builder b = SharedLog.postgres("jdbc:postgresql://db/app");
        assertThatThrownBy(() -> SharedLog.postgres((String) null)).hasMessage("url");
        assertThatThrownBy(() -> SharedLog.postgres((DataSource) null)).hasMessage("dataSource");
        assertThatThrownBy(() -> b.user(null)).isInstanceOf(NullPointerException.class).hasMessage("user");
        assertThatThrownBy(() -> b.password(null)).hasMessage("password");
        assertThatThrownBy(() -> b.tablePrefix(null)).hasMessage("tablePrefix");
        assertThatThrownBy(() -> b.lease(null)).hasMessage("lease");
        assertThatThrownBy(() -> b.adopt(null)).hasMessage("adopter");
    }

    @Test
    void badSettingsAreRejectedWithTheValueAndThePasswordMasked() {
        SharedLog.Builder b = SharedLog.postgres("jdbc:postgresql://db/app");
        assertThatThrownBy(() -> SharedLog.postgres("postgresql://db/app?password=secret"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("password=***")
                .hasMessageNotContaining("secret");
        assertThatThrownBy(() -> b.tablePrefix("x; DROP TABLE y"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'x; DROP TABLE y'");
        assertThatThrownBy(() -> b.tablePrefix("a".repeat(41))).isInstanceOf(IllegalArgumentException.class);
        assertThat(b.tablePrefix("a".repeat(40)).tablePrefix()).hasSize(40);
        assertThat(b.tablePrefix("").tablePrefix()).isEmpty();
        assertThatThrownBy(() -> b.lease(Duration.ofMillis(999)))
                .hasMessage("lease must be at least 1 s, was 999 ms");
        assertThatThrownBy(() -> b.maxPendingBytes(0)).hasMessage("maxPendingBytes must be positive, was 0");
        assertThatThrownBy(() -> b.replica(" ")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void credentialsOnADataSourceAreRefusedBeforeConnecting() {
        SQLiteDataSource ds = new SQLiteDataSource();
        ds.setUrl("jdbc:sqlite::memory:");
        assertThatThrownBy(() -> SharedLog.postgres(ds).user("u").open())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("set them on the DataSource");
    }
}
