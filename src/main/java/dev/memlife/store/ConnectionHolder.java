package dev.memlife.store;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * One connection used by one thread at a time. Thread-safe: {@link #use} holds the holder's lock
 * for the whole unit of work, so threads sharing a holder take turns. On a JDBC URL it is one
 * long-lived connection, opened on first use and reopened after any failure. On a {@link
 * javax.sql.DataSource} (a pool) it is borrowed for each unit of work and handed back right after,
 * so the pool's limits, health checks and lifetimes apply to it, and an idle store holds none. Once
 * {@link #close() closed}, every unit of work runs on a connection of its own that is closed right
 * after it.
 *
 * <p>Every unit of work is bracketed by {@link Database#checkFile()}: it starts only while the
 * store's SQLite file is the one it opened, and it succeeds (a batch's commit included) only if
 * the file still is when it has finished; otherwise it fails and the connection is closed.
 */
final class ConnectionHolder implements AutoCloseable {

    /** A unit of work on a connection. */
    @FunctionalInterface
    interface Work<T> {
        T run(Connection connection) throws SQLException;
    }

    private final Database database;
    private final Object lock = new Object();
    // Guarded by lock; read racily by connectionsOpen().
    private volatile Connection connection;
    private boolean closed;
    /** A borrowed connection is in use; read without the lock by {@link #connectionsOpen()}. */
    private volatile boolean inUse;

    ConnectionHolder(Database database) {
        this.database = database;
    }

    /**
     * Runs {@code work} on the held connection, waiting for another thread's unit of work on this
     * holder to finish first (uninterruptibly; every statement is bounded by the lock timeout). A
     * unit of work that throws leaves the connection closed, so the next one starts on a fresh one.
     */
    <T> T use(Work<T> work) throws SQLException {
        synchronized (lock) {
            if (closed || database.pooled()) {
                inUse = true;
                try (Connection once = database.open()) {
                    return runChecked(work, once);
                } finally {
                    inUse = false;
                }
            }
            if (connection == null) {
                connection = database.open();
            }
            try {
                return runChecked(work, connection);
            } catch (SQLException | RuntimeException e) {
                Database.closeQuietly(connection, e);
                connection = null;
                throw e;
            }
        }
    }

    private <T> T runChecked(Work<T> work, Connection c) throws SQLException {
        database.checkFile();
        T result = work.run(c);
        database.checkFile();
        return result;
    }

    /** {@return 1 while this holder holds or has borrowed a connection, else 0; a moment's view} */
    int connectionsOpen() {
        return inUse || connection != null ? 1 : 0;
    }

    /** Closes the held connection, after a unit of work in progress on it has finished. */
    @Override
    public void close() throws SQLException {
        synchronized (lock) {
            closed = true;
            if (connection != null) {
                Connection c = connection;
                connection = null;
                c.close();
            }
        }
    }
}
