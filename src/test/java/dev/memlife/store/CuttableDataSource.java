package dev.memlife.store;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The test's PostgreSQL, with a switch between it and whoever uses it: {@link #cut()} closes every
 * connection handed out and refuses new ones, as a lost network would, until {@link #restore()}.
 * Thread-safe.
 */
public final class CuttableDataSource extends TestDataSource {

    static {
        DriverManager.getDrivers(); // loads the driver before the first connect, not under a replica's lock
    }

    private final List<Connection> open = new CopyOnWriteArrayList<>();
    private volatile boolean cut;

    /** Closes every connection handed out and refuses new ones. */
    public void cut() {
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

    /** Hands out connections again. */
    public void restore() {
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
}
