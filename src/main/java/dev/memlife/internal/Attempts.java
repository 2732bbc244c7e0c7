package dev.memlife.internal;

import java.time.Duration;

/**
 * A call tried again after a failure, a bounded number of times, with a doubling wait between
 * attempts on the calling thread: the retry policy of the batching write-behind decorators' backend
 * calls (an embedding model, a vector store).
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
     * Runs {@code call} until it returns or every attempt failed. An {@link Error} is not tried
     * again. An interrupt during a wait ends the attempts (the flag is set again).
     *
     * @param call the call
     * @throws RuntimeException what the first attempt threw, with the later attempts' failures
     *     suppressed in it
     */
    public void run(Runnable call) {
        RuntimeException first = null;
        long waitNanos = backoff.toNanos();
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
                if (attempt >= attempts || !pause(waitNanos)) {
                    throw first;
                }
                waitNanos = Math.min(Checks.saturatedNanos(maxBackoff), waitNanos * 2);
            }
        }
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
