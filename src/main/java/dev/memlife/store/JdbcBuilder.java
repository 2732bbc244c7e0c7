package dev.memlife.store;

import static java.util.Objects.requireNonNull;

import java.util.Properties;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * The database settings every memlife builder on JDBC shares, written and checked once: where the
 * connections come from (a JDBC URL with a user and password, or a {@link DataSource} that brings
 * its own) and the prefix of the table names, so several users of one database keep apart. The
 * builders of {@link JdbcMemoryProvider} and {@code dev.memlife.spool.SharedLog} extend it. Not
 * thread-safe: a builder is used by one thread.
 *
 * @param <B> the builder, returned by each setter
 */
public abstract class JdbcBuilder<B extends JdbcBuilder<B>> {

    /** Default {@link #tablePrefix(String) table prefix}: {@value}. */
    public static final String DEFAULT_TABLE_PREFIX = "memlife_";

    private static final Pattern TABLE_PREFIX = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,39}|");

    private final String url;
    private final DataSource dataSource;
    private String user;
    private String password;
    private String tablePrefix = DEFAULT_TABLE_PREFIX;

    /**
     * For memlife's builders on a JDBC URL.
     *
     * @param url the database's JDBC URL
     * @throws IllegalArgumentException if {@code url} does not start with {@code jdbc:}, naming it
     *     with its password masked
     */
    protected JdbcBuilder(String url) {
        requireNonNull(url, "url");
        if (!url.startsWith("jdbc:")) {
            throw new IllegalArgumentException("url must start with 'jdbc:', was '" + Database.mask(url) + "'");
        }
        this.url = url;
        this.dataSource = null;
    }

    /**
     * For memlife's builders on a {@link DataSource}, for example the application's pool.
     *
     * @param dataSource where the connections come from; it brings its own credentials
     */
    protected JdbcBuilder(DataSource dataSource) {
        this.url = null;
        this.dataSource = requireNonNull(dataSource, "dataSource");
    }

    /**
     * The database user, for a JDBC URL (a DataSource brings its own).
     *
     * @param user the user name
     * @return this builder
     */
    public final B user(String user) {
        this.user = requireNonNull(user, "user");
        return self();
    }

    /**
     * The database password, for a JDBC URL; never logged or put in an exception.
     *
     * @param password the password
     * @return this builder
     */
    public final B password(String password) {
        this.password = requireNonNull(password, "password");
        return self();
    }

    /**
     * The prefix of the table names, so several users of one database keep apart; default {@value
     * #DEFAULT_TABLE_PREFIX}. Every process that shares the tables uses the same.
     *
     * @param tablePrefix a letter or '_' followed by at most 39 letters, digits or '_'; or empty
     * @return this builder
     * @throws IllegalArgumentException naming the value if it is not such a prefix
     */
    public final B tablePrefix(String tablePrefix) {
        this.tablePrefix = checkTablePrefix(tablePrefix);
        return self();
    }

    /**
     * Checks a table prefix the way {@link #tablePrefix(String)} does, for tools that name tables
     * before any builder exists.
     *
     * @param tablePrefix the prefix
     * @return {@code tablePrefix}
     * @throws IllegalArgumentException naming the value if it is not a letter or '_' followed by at
     *     most 39 letters, digits or '_', and not empty
     */
    public static String checkTablePrefix(String tablePrefix) {
        requireNonNull(tablePrefix, "tablePrefix");
        if (!TABLE_PREFIX.matcher(tablePrefix).matches()) {
            throw new IllegalArgumentException("tablePrefix must be a letter or '_' followed by at most 39 "
                    + "letters, digits or '_', or empty; was '" + tablePrefix + "'");
        }
        return tablePrefix;
    }

    /** {@return the JDBC URL; null for a builder on a DataSource} */
    protected final String url() {
        return url;
    }

    /** {@return the DataSource; null for a builder on a JDBC URL} */
    protected final DataSource dataSource() {
        return dataSource;
    }

    /** {@return the table prefix set, or {@value #DEFAULT_TABLE_PREFIX}} */
    public final String tablePrefix() {
        return tablePrefix;
    }

    /**
     * The user and password set, as the connection properties of {@link
     * java.sql.DriverManager#getConnection(String, Properties)}.
     *
     * @return a new set of properties, empty where nothing was set
     * @throws IllegalArgumentException if a user or password was set on a builder on a DataSource
     */
    protected final Properties credentials() {
        Properties credentials = new Properties();
        if (dataSource != null) {
            if (user != null || password != null) {
                throw new IllegalArgumentException("user and password apply to a JDBC URL; set them on the DataSource");
            }
            return credentials;
        }
        if (user != null) {
            credentials.setProperty("user", user);
        }
        if (password != null) {
            credentials.setProperty("password", password);
        }
        return credentials;
    }

    /** {@return where the connections come from, for messages: the URL with its password masked, or the DataSource's class} */
    protected final String target() {
        return url != null ? Database.mask(url) : "DataSource " + dataSource.getClass().getName();
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }
}
