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
    /** The SQLite file the first {@link #open()} found ({@link StoreFile#NONE} for PostgreSQL); set once. */
    private volatile StoreFile file;

    private Database(String url, Properties credentials, DataSource dataSource, String description,
            Duration lockTimeout) {
        this.url = url;
        this.credentials = credentials;
        this.dataSource = dataSource;
        this.description = description;
        this.lockTimeout = lockTimeout;
    }

    static Database ofUrl(String url, Properties credentials, Duration lockTimeout) {
        return new Database(url, credentials, null, mask(url), lockTimeout);
    }

    static Database ofDataSource(DataSource dataSource, Duration lockTimeout) {
        return new Database(null, null, dataSource, "DataSource " + dataSource.getClass().getName(), lockTimeout);
    }

    /** True for a {@link DataSource}: connections are borrowed per unit of work and handed back. */
    boolean pooled() {
        return dataSource != null;
    }

    /** The URL with any password masked, or the DataSource's class: safe for logs and exceptions. */
    String description() {
        return description;
    }

    /** The database's dialect; known once a connection was opened. */
    Dialect dialect() {
        return dialect;
    }

    /**
     * Opens and configures a new connection; the caller closes it. The first one opened fixes the
     * SQLite file the store works on (see {@link #checkFile()}); every later one is opened only
     * while that file is still at its path (SQLite would create a deleted file anew, empty) and
     * must find the same file.
     *
     * @throws StoreFile.LostException if the store's SQLite file was deleted or replaced
     */
    Connection open() throws SQLException {
        StoreFile known = file;
        if (known != null) {
            known.check();
        }
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
            if (known != null) {
                known.check();
            } else {
                rememberFile(d == Dialect.SQLITE ? StoreFile.of(c) : StoreFile.NONE);
            }
            return c;
        } catch (SQLException | RuntimeException e) {
            closeQuietly(c, e);
            throw e;
        }
    }

    /**
     * Throws if the SQLite file the store opened first was deleted or replaced since; from then on
     * it always throws. One {@code stat}; does nothing for PostgreSQL.
     *
     * @throws StoreFile.LostException naming the file and what happened to it
     */
    void checkFile() throws SQLException {
        StoreFile known = file;
        if (known != null) {
            known.check();
        }
    }

    private synchronized void rememberFile(StoreFile opened) {
        if (file == null) {
            file = opened;
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
