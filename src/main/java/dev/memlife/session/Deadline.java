package dev.memlife.session;

import java.time.Duration;

/** One shared deadline on {@link System#nanoTime()}, saturating for huge budgets. Immutable. */
final class Deadline {

    private final long startNanos;
    private final long budgetNanos;

    private Deadline(long startNanos, long budgetNanos) {
        this.startNanos = startNanos;
        this.budgetNanos = budgetNanos;
    }

    /** A deadline {@code budget} from now; a negative budget is treated as zero. */
    static Deadline after(Duration budget) {
        return new Deadline(System.nanoTime(), Math.max(0, nanos(budget)));
    }

    /** {@code d} in nanoseconds, {@link Long#MAX_VALUE} when it does not fit. */
    static long nanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    /** Nanoseconds left; zero or less once the deadline has passed. */
    long remainingNanos() {
        return budgetNanos - elapsedNanos();
    }

    boolean expired() {
        return remainingNanos() <= 0;
    }

    long elapsedNanos() {
        return System.nanoTime() - startNanos;
    }

    Duration elapsed() {
        return Duration.ofNanos(elapsedNanos());
    }

    Duration budget() {
        return Duration.ofNanos(budgetNanos);
    }

    /** A deadline that ends {@code reserve} before this one (never before now), for an early phase. */
    Deadline reserving(Duration reserve) {
        long cut = Math.max(0, Math.min(budgetNanos, nanos(reserve)));
        return new Deadline(startNanos, budgetNanos - cut);
    }
}
