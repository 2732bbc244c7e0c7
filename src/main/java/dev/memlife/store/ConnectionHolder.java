package dev.memlife.store;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * One long-lived connection, opened on first use and reopened after any failure, used by one
 * thread at a time. Thread-safe: {@link #use} holds the holder's lock for the whole unit of work,
 * so threads sharing a holder take turns. Once {@link #close() closed}, every unit of work runs on
 * a connection of its own that is closed right after it.
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
    // Guarded by lock.
    private Connection connection;
    private boolean closed;

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
            if (closed) {
                try (Connection once = database.open()) {
                    return runChecked(work, once);
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
