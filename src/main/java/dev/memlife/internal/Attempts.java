package dev.memlife.internal;

import java.time.Duration;

/**
 * A call tried again after a failure, a bounded number of times, with a doubling wait between
 * attempts on the calling thread: the retry policy of the batching write-behind decorators' backend
 * calls (an embedding model, a vector store) and of the JDBC store. Its {@link #waitAfter} is the one
 * backoff rule: the shared log's loops, which try until a deadline of their own, wait by it too
 * ({@link #backoff(Duration, Duration)}).
 *
 * @param attempts attempts in all, the first included; at least 1
 * @param backoff the wait after the first failed attempt, doubled after each next one
 * @param maxBackoff the longest wait between two attempts
 */
public record Attempts(int attempts, Duration backoff, Duration maxBackoff) {

    /** Checks the values. */
    public Attempts {
        Checks.atLeast(attempts, 1, "attempts");
        Checks.nonNegative(backoff, "backoff");
        Checks.nonNegative(maxBackoff, "maxBackoff");
    }

    /**
     * The waits of a loop that tries until a deadline of its own rather than a number of attempts:
     * only {@link #waitAfter} is meant to be called.
     *
     * @param first the wait after the first failure
     * @param max the longest wait
     * @return the rule
     */
    public static Attempts backoff(Duration first, Duration max) {
        return new Attempts(Integer.MAX_VALUE, first, max);
    }

    /**
     * Runs {@code call} until it returns or every attempt failed. An {@link Error} is not tried
     * again. An interrupt during a wait ends the attempts (the flag is set again).
     *
     * @param call the call
     * @throws RuntimeException what the first attempt threw, with the later attempts' failures
     *     suppressed in it
     */
    public void run(Runnable call) {
        RuntimeException first = null;
        for (int attempt = 1; ; attempt++) {
            try {
                call.run();
                return;
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else if (first != e) {
                    first.addSuppressed(e);
                }
                if (attempt >= attempts || !pause(Checks.saturatedNanos(waitAfter(attempt)))) {
                    throw first;
                }
            }
        }
    }

    /**
     * The wait after the {@code failed}-th failed attempt: the backoff, doubled after each failure
     * but the first, at most {@link #maxBackoff}.
     *
     * @param failed how many attempts have failed; at least 1
     * @return the wait before the next attempt
     */
    public Duration waitAfter(int failed) {
        Duration d = backoff;
        for (int i = 1; i < failed && d.compareTo(maxBackoff) < 0; i++) {
            d = d.multipliedBy(2);
        }
        return d.compareTo(maxBackoff) < 0 ? d : maxBackoff;
    }

    private static boolean pause(long nanos) {
        if (nanos <= 0) {
            return true;
        }
        try {
            Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
