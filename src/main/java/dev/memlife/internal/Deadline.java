package dev.memlife.internal;

import static java.util.Objects.requireNonNull;

import dev.memlife.Ticker;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A deadline on a {@link Ticker}, saturating for huge budgets. Immutable and thread-safe.
 *
 * <p>Every bounded wait in memlife goes through one of these, so a test that injects a manual
 * ticker decides when a deadline passes. The waits here never block longer than {@link
 * #MAX_SLICE_NANOS} at a time: they wake to re-read the ticker, because a manual ticker's time
 * moves without waking anyone. On the system ticker that costs one wake-up per 50 ms of waiting.
 */
public final class Deadline {

    /** The longest a wait blocks before it re-reads the ticker: 50 ms. */
    public static final long MAX_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final Ticker ticker;
    private final long startNanos;
    private final long budgetNanos;

    private Deadline(Ticker ticker, long startNanos, long budgetNanos) {
        this.ticker = ticker;
        this.startNanos = startNanos;
        this.budgetNanos = budgetNanos;
    }

    /** A deadline {@code budget} from now on {@code ticker}; a negative budget counts as zero. */
    public static Deadline after(Ticker ticker, Duration budget) {
        return afterNanos(ticker, Checks.saturatedNanos(requireNonNull(budget, "budget")));
    }

    /** A deadline {@code budgetNanos} from now on {@code ticker}; a negative budget counts as zero. */
    public static Deadline afterNanos(Ticker ticker, long budgetNanos) {
        requireNonNull(ticker, "ticker");
        return new Deadline(ticker, ticker.read(), Math.max(0, budgetNanos));
    }

    /**
     * The deadline at the reading {@code deadlineNanos} of {@code ticker}; one at or before its
     * current reading has passed. Saturating: a reading beyond what a budget can hold is never reached.
     */
    public static Deadline at(Ticker ticker, long deadlineNanos) {
        long now = requireNonNull(ticker, "ticker").read();
        long budget = deadlineNanos - now;
        if (((deadlineNanos ^ now) & (deadlineNanos ^ budget)) < 0) { // overflowed
            budget = deadlineNanos < 0 ? 0 : Long.MAX_VALUE;
        }
        return new Deadline(ticker, now, Math.max(0, budget));
    }

    /** The ticker this deadline is measured on. */
    public Ticker ticker() {
        return ticker;
    }

    /** Nanoseconds left; zero or less once the deadline has passed. */
    public long remainingNanos() {
        return remainingAt(ticker.read());
    }

    /** Whether the deadline has passed. */
    public boolean expired() {
        return remainingNanos() <= 0;
    }

    /** Whichever of this and {@code other} (on the same ticker) passes first; this one if both pass together. */
    public Deadline earlier(Deadline other) {
        long now = ticker.read();
        return remainingAt(now) <= other.remainingAt(now) ? this : other;
    }

    private long remainingAt(long now) {
        return budgetNanos - (now - startNanos);
    }

    /** Nanoseconds since the deadline was set. */
    public long elapsedNanos() {
        return ticker.read() - startNanos;
    }

    /** Time since the deadline was set. */
    public Duration elapsed() {
        return Duration.ofNanos(Math.max(0, elapsedNanos()));
    }

    /** The whole budget. */
    public Duration budget() {
        return Duration.ofNanos(budgetNanos);
    }

    /** A deadline that ends {@code reserve} before this one (never before its start), for an early phase. */
    public Deadline reserving(Duration reserve) {
        long cut = Math.max(0, Math.min(budgetNanos, Checks.saturatedNanos(reserve)));
        return new Deadline(ticker, startNanos, budgetNanos - cut);
    }

    /** How long the next blocking step of a wait may take: what is left, at most {@link #MAX_SLICE_NANOS}. */
    public long sliceNanos() {
        return Math.max(0, Math.min(remainingNanos(), MAX_SLICE_NANOS));
    }

    /**
     * Waits until {@code latch} opens or the deadline passes.
     *
     * @return whether the latch opened
     * @throws InterruptedException if interrupted while waiting
     */
    public boolean await(CountDownLatch latch) throws InterruptedException {
        while (!latch.await(sliceNanos(), TimeUnit.NANOSECONDS)) {
            if (expired()) {
                return latch.getCount() == 0;
            }
        }
        return true;
    }

    /**
     * Waits until {@code thread} ends or the deadline passes.
     *
     * @return whether the thread ended
     * @throws InterruptedException if interrupted while waiting
     */
    public boolean join(Thread thread) throws InterruptedException {
        while (thread.isAlive()) {
            if (expired()) {
                return !thread.isAlive();
            }
            TimeUnit.NANOSECONDS.timedJoin(thread, sliceNanos());
        }
        return true;
    }

    /**
     * Waits for {@code future}'s value until the deadline passes.
     *
     * @return the value
     * @throws TimeoutException if the deadline passed first
     * @throws ExecutionException if the future failed
     * @throws InterruptedException if interrupted while waiting
     */
    public <T> T get(Future<T> future) throws InterruptedException, ExecutionException, TimeoutException {
        while (true) {
            try {
                return future.get(sliceNanos(), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                if (expired()) {
                    throw e;
                }
            }
        }
    }
}
