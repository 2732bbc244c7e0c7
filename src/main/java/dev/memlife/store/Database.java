package dev.memlife.store;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Properties;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * Where the store's connections come from: a JDBC URL (with optional user and password) or a
 * {@link DataSource}. Every connection it opens is configured for its {@link Dialect} and in
 * auto-commit mode. Thread-safe: it holds no connection itself.
 */
final class Database {

    private static final Pattern PASSWORD_PARAMETER = Pattern.compile("(?i)(password=)[^&;]*");
    private static final Pattern USER_INFO_PASSWORD = Pattern.compile("(//[^/:@]*:)[^@/]*@");

    private final String url;
    private final Properties credentials;
    private final DataSource dataSource;
    private final String description;
    private final Duration lockTimeout;
    /** Set once by the first {@link #open()}; the same value every time after, so a race is harmless. */
    private volatile Dialect dialect;

    private Database(String url, Properties credentials, DataSource dataSource, String description,
            Duration lockTimeout) {
        this.url = url;
        this.credentials = credentials;
        this.dataSource = dataSource;
        this.description = description;
        this.lockTimeout = lockTimeout;
    }

    static Database ofUrl(String url, String user, String password, Duration lockTimeout) {
        Properties credentials = new Properties();
        if (user != null) {
            credentials.setProperty("user", user);
        }
        if (password != null) {
            credentials.setProperty("password", password);
        }
        return new Database(url, credentials, null, mask(url), lockTimeout);
    }

    static Database ofDataSource(DataSource dataSource, Duration lockTimeout) {
        return new Database(null, null, dataSource, "DataSource " + dataSource.getClass().getName(), lockTimeout);
    }

    /** The URL with any password masked, or the DataSource's class: safe for logs and exceptions. */
    String description() {
        return description;
    }

    /** The database's dialect; known once a connection was opened. */
    Dialect dialect() {
        return dialect;
    }

    /** Opens and configures a new connection; the caller closes it. */
    Connection open() throws SQLException {
        Connection c = url != null ? DriverManager.getConnection(url, credentials) : dataSource.getConnection();
        if (c == null) {
            throw new SQLException(description + " returned no connection");
        }
        try {
            Dialect d = dialect;
            if (d == null) {
                dialect = d = Dialect.of(c, description);
            }
            d.configure(c, lockTimeout);
            c.setAutoCommit(true);
            return c;
        } catch (SQLException | RuntimeException e) {
            closeQuietly(c, e);
            throw e;
        }
    }

    /** {@code url} with the value of a {@code password=} parameter and a {@code user:password@} masked. */
    static String mask(String url) {
        String masked = PASSWORD_PARAMETER.matcher(url).replaceAll("$1***");
        return USER_INFO_PASSWORD.matcher(masked).replaceAll("$1***@");
    }

    /** Closes {@code c}; a failure to close is added to {@code primary}, which is already being thrown. */
    static void closeQuietly(Connection c, Throwable primary) {
        try {
            c.close();
        } catch (SQLException | RuntimeException e) {
            primary.addSuppressed(e);
        }
    }
}
