package dev.memlife.store;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;

/**
 * A DataSource test double over a real one that the test controls: it counts commits, can fail
 * the next commits (before they reach the database, so the transaction is still open and must be
 * rolled back), can hold the next commit until the test lets it go (so writes pile up behind the
 * connection), and can make the database "go away": every connection it handed out is closed
 * under its user and new ones are refused, until {@link #comeBack()}. Thread-safe.
 */
final class ObservedDataSource extends TestDataSource {

    private final DataSource real;
    private final AtomicInteger commits = new AtomicInteger();
    private final AtomicInteger commitsToFail = new AtomicInteger();
    private final List<Connection> handedOut = new ArrayList<>();
    private volatile boolean gone;
    /** Guarded by this. */
    private long maxOpen;
    /** The next commit waits here (after the failure check) until the test counts it down; then null. */
    private final AtomicReference<CountDownLatch> holdNext = new AtomicReference<>();
    private final CountDownLatch held = new CountDownLatch(1);

    ObservedDataSource(DataSource real) {
        this.real = real;
    }

    /** Commits attempted so far, failed ones included. */
    int commits() {
        return commits.get();
    }

    /** Makes the next {@code n} commits throw. */
    void failNextCommits(int n) {
        commitsToFail.set(n);
    }

    /**
     * Makes the next commit wait, after it was counted and passed the failure check, until the
     * returned latch is counted down; {@link #awaitHeld} waits until a commit is held there.
     */
    CountDownLatch holdNextCommit() {
        CountDownLatch release = new CountDownLatch(1);
        holdNext.set(release);
        return release;
    }

    /** Whether a commit arrived at the hold of {@link #holdNextCommit} within 30 s. */
    boolean awaitHeld() throws InterruptedException {
        return held.await(30, TimeUnit.SECONDS);
    }

    /** The database goes away: open connections break, new ones are refused. */
    synchronized void goAway() throws SQLException {
        gone = true;
        for (Connection c : handedOut) {
            c.close();
        }
    }

    void comeBack() {
        gone = false;
    }

    /** Connections handed out and not closed yet. */
    synchronized long openConnections() throws SQLException {
        long open = 0;
        for (Connection c : handedOut) {
            open += c.isClosed() ? 0 : 1;
        }
        return open;
    }

    /** The most connections that were open at once. */
    synchronized long maxOpenConnections() {
        return maxOpen;
    }

    @Override
    public synchronized Connection getConnection() throws SQLException {
        if (gone) {
            throw new SQLException("connection refused: the test made the database go away");
        }
        Connection c = real.getConnection();
        handedOut.removeIf(h -> {
            try {
                return h.isClosed();
            } catch (SQLException e) {
                return false;
            }
        });
        handedOut.add(c);
        maxOpen = Math.max(maxOpen, handedOut.size());
        InvocationHandler observe = (proxy, method, args) -> {
            if (method.getName().equals("commit")) {
                commits.incrementAndGet();
                if (commitsToFail.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                    throw new SQLException("commit failed: the test failed it on purpose");
                }
                CountDownLatch release = holdNext.getAndSet(null);
                if (release != null) {
                    held.countDown();
                    if (!release.await(30, TimeUnit.SECONDS)) {
                        throw new SQLException("the test never let the held commit go");
                    }
                }
            }
            try {
                return method.invoke(c, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        };
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
                new Class<?>[] {Connection.class}, observe);
    }
}
