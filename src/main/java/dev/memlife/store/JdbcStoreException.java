package dev.memlife.store;

/**
 * A {@link JdbcMemoryProvider} could not reach its database or store what it was handed. The
 * message names the database (URL with the password masked) and what failed; the cause is the
 * driver's last {@link java.sql.SQLException}.
 */
public final class JdbcStoreException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    JdbcStoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
