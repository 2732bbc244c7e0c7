package dev.memlife.store;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Counts the connections a DataSource hands out: how many are open now (handed out, not closed
 * yet), the most ever open at once, how many were opened in all, how many getConnection calls
 * failed, and how many commits were called on them. Around a pool it counts connections borrowed; under a pool, physical ones.
 * Thread-safe.
 */
public final class CountingDataSource implements DataSource {

    private final DataSource real;
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicInteger peak = new AtomicInteger();
    private final AtomicInteger opened = new AtomicInteger();
    private final AtomicInteger refused = new AtomicInteger();
    private final AtomicInteger commits = new AtomicInteger();

    public CountingDataSource(DataSource real) {
        this.real = real;
    }

    /** {@return the connections handed out and not closed yet} */
    public int open() {
        return open.get();
    }

    /** {@return the most connections that were open at once} */
    public int peak() {
        return peak.get();
    }

    /** {@return every connection handed out so far} */
    public int opened() {
        return opened.get();
    }

    /** {@return the connections the real source refused} */
    public int refused() {
        return refused.get();
    }

    /** Commits called on the connections handed out. */
    public int commits() {
        return commits.get();
    }

    @Override
    public Connection getConnection() throws SQLException {
        Connection c;
        try {
            c = real.getConnection();
        } catch (SQLException | RuntimeException e) {
            refused.incrementAndGet();
            throw e;
        }
        opened.incrementAndGet();
        peak.accumulateAndGet(open.incrementAndGet(), Math::max);
        boolean[] closed = {false};
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("commit") && method.getParameterCount() == 0) {
                        commits.incrementAndGet();
                    }
                    if (method.getName().equals("close") && method.getParameterCount() == 0) {
                        synchronized (closed) {
                            if (!closed[0]) {
                                closed[0] = true;
                                open.decrementAndGet();
                            }
                        }
                    }
                    try {
                        return method.invoke(c, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        throw new SQLFeatureNotSupportedException("not used");
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return real.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        real.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        real.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return real.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return real.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        if (iface.isInstance(this)) {
            return iface.cast(this);
        }
        return real.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return iface.isInstance(this) || real.isWrapperFor(iface);
    }
}
