package dev.memlife.internal;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * Argument checks and saturating time arithmetic shared by memlife's builders: every setter checks
 * its argument through one of these, so the same mistake gets the same message everywhere, naming
 * the setting and the value. Not part of the API: the package is not exported.
 *
 * <p>Every duration memlife takes must fit in a {@code long} of nanoseconds (about 292 years),
 * because every wait is measured in nanoseconds. A longer one is refused at the setter, naming it,
 * instead of overflowing later, deep inside a reset or a shutdown.
 */
public final class Checks {

    /** The longest duration memlife accepts: {@link Long#MAX_VALUE} nanoseconds, about 292 years. */
    public static final Duration MAX_DURATION = Duration.ofNanos(Long.MAX_VALUE);
    /** {@link #MAX_DURATION} as the messages spell it. */
    private static final String MAX_DURATION_LIMIT = MAX_DURATION + " (Long.MAX_VALUE ns)";

    private Checks() {}

    /**
     * @return {@code s}, if it is not null and not blank
     * @throws NullPointerException naming {@code what} if {@code s} is null
     * @throws IllegalArgumentException "{@code what} must not be blank" otherwise
     */
    public static String notBlank(String s, String what) {
        requireNonNull(s, what);
        if (s.isBlank()) {
            throw new IllegalArgumentException(what + " must not be blank");
        }
        return s;
    }

    /**
     * @return {@code d}, if it is not null, not negative and at most {@link #MAX_DURATION}
     * @throws NullPointerException naming {@code what} if {@code d} is null
     * @throws IllegalArgumentException naming {@code what} and the value otherwise
     */
    public static Duration nonNegative(Duration d, String what) {
        return nonNegative(d, MAX_DURATION, MAX_DURATION_LIMIT, what);
    }

    /**
     * Like {@link #nonNegative(Duration, String)}, for a setting whose ceiling is {@code max}, lower
     * than {@link #MAX_DURATION}; {@code limit} is how the message spells the ceiling ("{@code what}
     * must be at most <i>limit</i>, was <i>d</i>"), so it can say why there is one.
     */
    public static Duration nonNegative(Duration d, Duration max, String limit, String what) {
        requireNonNull(d, what);
        if (d.isNegative()) {
            throw new IllegalArgumentException(what + " must not be negative, was " + d);
        }
        if (d.compareTo(max) > 0) {
            throw new IllegalArgumentException(what + " must be at most " + limit + ", was " + d);
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
