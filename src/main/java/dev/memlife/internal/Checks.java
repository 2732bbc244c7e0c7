package dev.memlife.internal;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * Argument checks and saturating time arithmetic shared by memlife's builders. Not part of the
 * API: the package is not exported.
 *
 * <p>Every duration memlife takes must fit in a {@code long} of nanoseconds (about 292 years),
 * because every wait is measured in nanoseconds. A longer one is refused at the setter, naming it,
 * instead of overflowing later, deep inside a reset or a shutdown.
 */
public final class Checks {

    /** The longest duration memlife accepts: {@link Long#MAX_VALUE} nanoseconds, about 292 years. */
    public static final Duration MAX_DURATION = Duration.ofNanos(Long.MAX_VALUE);

    private Checks() {}

    /**
     * @return {@code d}, if it is not null, not negative and at most {@link #MAX_DURATION}
     * @throws NullPointerException naming {@code what} if {@code d} is null
     * @throws IllegalArgumentException naming {@code what} and the value otherwise
     */
    public static Duration nonNegative(Duration d, String what) {
        requireNonNull(d, what);
        if (d.isNegative()) {
            throw new IllegalArgumentException(what + " must not be negative, was " + d);
        }
        if (d.compareTo(MAX_DURATION) > 0) {
            throw new IllegalArgumentException(what + " must be at most " + MAX_DURATION + " (Long.MAX_VALUE ns), was "
                    + d);
        }
        return d;
    }

    /** Like {@link #nonNegative} and also not zero. */
    public static Duration positive(Duration d, String what) {
        if (nonNegative(d, what).isZero()) {
            throw new IllegalArgumentException(what + " must be positive, was " + d);
        }
        return d;
    }

    /** @return {@code n}, if at least {@code min} @throws IllegalArgumentException naming {@code what} otherwise */
    public static int atLeast(int n, int min, String what) {
        if (n < min) {
            throw new IllegalArgumentException(what + " must be at least " + min + ", was " + n);
        }
        return n;
    }

    /** {@code d} in nanoseconds; {@link Long#MAX_VALUE} if it does not fit, 0 if negative. */
    public static long saturatedNanos(Duration d) {
        if (d.isNegative()) {
            return 0;
        }
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }

    /** {@code a + b}, or {@link Long#MAX_VALUE} / {@link Long#MIN_VALUE} where the sum overflows. */
    public static long saturatedAdd(long a, long b) {
        long sum = a + b;
        if (((a ^ sum) & (b ^ sum)) < 0) {
            return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
        return sum;
    }
}
