package dev.memlife.spring;

import java.nio.file.Path;
import javax.sql.DataSource;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.sqlite.SQLiteDataSource;

/** What the starter's context tests share: a runner with memlife's auto-configuration, an SQLite data source. */
final class StarterContexts {

    private StarterContexts() {}

    /** {@return a context runner with only memlife's auto-configuration} */
    static ApplicationContextRunner runner() {
        return new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(MemlifeAutoConfiguration.class));
    }

    /** {@return a data source on the SQLite file {@code file}} */
    static DataSource sqlite(Path file) {
        SQLiteDataSource ds = new SQLiteDataSource();
        ds.setUrl("jdbc:sqlite:" + file);
        return ds;
    }
}
