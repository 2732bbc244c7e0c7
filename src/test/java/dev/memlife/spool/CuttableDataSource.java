package dev.memlife.spool;

import dev.memlife.store.PostgresAvailability;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * The test's PostgreSQL, with a switch between it and the log: {@link #cut()} closes every
 * connection handed out and refuses new ones, as a lost network would, until {@link #restore()}.
 * Thread-safe.
 */
final class CuttableDataSource implements DataSource {

    private final List<Connection> open = new CopyOnWriteArrayList<>();
    private volatile boolean cut;

    /** Closes every connection handed out and refuses new ones. */
    void cut() {
        cut = true;
        for (Connection c : open) {
            try {
                c.close();
            } catch (SQLException ignored) {
                // it is being cut
            }
        }
        open.clear();
    }

    void restore() {
        cut = false;
    }

    @Override
    public Connection getConnection() throws SQLException {
        if (cut) {
            throw new SQLException("test: the connection to the database is cut");
        }
        Connection c = PostgresAvailability.connect();
        open.add(c);
        return c;
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return getConnection();
    }

    @Override
    public PrintWriter getLogWriter() {
        return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {}

    @Override
    public void setLoginTimeout(int seconds) {}

    @Override
    public int getLoginTimeout() {
        return 0;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        throw new SQLException("not a wrapper");
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
        return false;
    }

    static {
        DriverManager.getDrivers(); // loads the driver before the first connect
    }
}
