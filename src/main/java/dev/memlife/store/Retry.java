package dev.memlife.store;

import dev.memlife.internal.Attempts;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store's retry rule for every database call: a unit of work that fails with an {@link SQLException} runs again on a
 * fresh connection, at most {@code attempts} times in all, waiting {@code backoff} after the first
 * failure and twice as long after each next one (at most {@link #MAX_BACKOFF}); then it is thrown
 * as a {@link JdbcStoreException} carrying every attempt's exception. A store file found deleted
 * or replaced ({@link StoreFile.LostException}) is thrown at once: no attempt could succeed. Never
 * retries forever, never drops a failure. Thread-safe.
 */
final class Retry {

    private static final Logger LOG = LoggerFactory.getLogger(JdbcMemoryProvider.class);

    /** Longest wait between two attempts, however many attempts are configured. */
    static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

    /** Attempts that failed, and calls that failed after every attempt: for {@link StoreFigures}. */
    private final AtomicLong failedAttempts = new AtomicLong();
    private final AtomicLong failedCalls = new AtomicLong();
    /** How many attempts, and the waits between them. */
    private final Attempts policy;
    private final Sleeper sleeper;
    /** The provider's name and its database's, for the log and the exceptions. */
    private final String provider;
    private final String database;

    /**
     * The rule of {@code attempts} in all, the first wait {@code backoff}, doubling up to {@link
     * #MAX_BACKOFF}, for {@code provider}'s calls to {@code database}.
     */
    Retry(String provider, String database, int attempts, Duration backoff, Sleeper sleeper) {
        this.policy = new Attempts(attempts, backoff, MAX_BACKOFF);
        this.sleeper = sleeper;
        this.provider = provider;
        this.database = database;
    }

    /**
     * Runs {@code work} on {@code holder}'s connection until it succeeds or the attempts run out.
     * Waits for the database and for the backoffs; an interrupt during a backoff ends the retries at
     * once, with the interrupt flag restored.
     *
     * @param what what the work does ("store write w-1"), for the log and the exception
     * @throws JdbcStoreException if no attempt succeeded, or a backoff was interrupted
     */
    <T> T run(String what, ConnectionHolder holder, ConnectionHolder.Work<T> work) {
        return attempts(what, holder, work, null);
    }

    /**
     * Goes on with the rule after {@code work}'s first attempt, made elsewhere, failed with {@code
     * firstFailure}: waits the first backoff and runs the second attempt, and so on, exactly as if
     * {@link #run} had made the first one.
     *
     * @throws JdbcStoreException if no attempt succeeded, or a backoff was interrupted
     */
    <T> T resume(String what, ConnectionHolder holder, ConnectionHolder.Work<T> work, SQLException firstFailure) {
        return attempts(what, holder, work, firstFailure);
    }

    long failedAttempts() {
        return failedAttempts.get();
    }

    long failedCalls() {
        return failedCalls.get();
    }

    private <T> T attempts(String what, ConnectionHolder holder, ConnectionHolder.Work<T> work, SQLException failed) {
        try {
            return attempt(what, holder, work, failed);
        } catch (JdbcStoreException e) {
            failedCalls.incrementAndGet();
            throw e;
        }
    }

    private <T> T attempt(String what, ConnectionHolder holder, ConnectionHolder.Work<T> work, SQLException failed) {
        int attempts = policy.attempts();
        SQLException last = null;
        // Ends when attempt reaches attempts, before it could pass Integer.MAX_VALUE.
        for (int attempt = 1; ; attempt++) {
            SQLException e = failed;
            failed = null;
            if (e == null) {
                try {
                    return holder.use(work);
                } catch (SQLException thrown) {
                    e = thrown;
                }
            }
            failedAttempts.incrementAndGet();
            if (last != null) {
                e.addSuppressed(last);
            }
            if (e instanceof StoreFile.LostException) {
                throw new JdbcStoreException(provider + ": could not " + what + " in " + database + ": "
                        + e.getMessage(), e);
            }
            last = e;
            if (attempt == attempts) {
                break;
            }
            Duration wait = backoff(attempt);
            LOG.debug("{}: attempt {} of {} to {} in {} failed; retrying in {} ms", provider, attempt,
                    attempts, what, database, wait.toMillis(), last);
            try {
                sleeper.sleep(wait);
            } catch (InterruptedException interrupt) {
                Thread.currentThread().interrupt();
                throw new JdbcStoreException(provider + ": interrupted while retrying to " + what + " in "
                        + database + " after " + attempt + " failed attempts", last);
            }
        }
        throw new JdbcStoreException(provider + ": could not " + what + " in " + database + " after "
                + attempts + (attempts == 1 ? " attempt" : " attempts") + ": " + last.getMessage(), last);
    }

    /** The wait after the {@code attempt}-th failure: the backoff, doubled per attempt, capped. */
    Duration backoff(int attempt) {
        return policy.waitAfter(attempt);
    }
}
