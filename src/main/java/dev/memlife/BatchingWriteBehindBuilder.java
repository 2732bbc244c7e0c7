package dev.memlife;

import dev.memlife.internal.Checks;
import java.time.Duration;

/**
 * The settings of the write-behind decorators that embed what they write (the Spring AI vector
 * store, the LangChain4j embedding ingestor), on top of {@link WriteBehindBuilder}'s: how many
 * documents one call to the backend takes, and how a failed call is tried again before its
 * documents count as failed. An embedding model costs far less per text in a batch than in one
 * call per text, so the writer hands it as many documents as wait, up to {@link #batchSize}.
 * Every setter checks its argument and names it when it refuses one. Not thread-safe: a builder is
 * used by one thread.
 *
 * @param <B> the builder, returned by each setter
 */
public abstract class BatchingWriteBehindBuilder<B extends BatchingWriteBehindBuilder<B>> extends WriteBehindBuilder<B> {

    /** Default most documents per backend call: {@value}. */
    public static final int DEFAULT_BATCH_SIZE = 64;
    /** Default attempts per batch, the first included: {@value}. */
    public static final int DEFAULT_RETRY_ATTEMPTS = 3;
    /** Default wait after a batch's first failed attempt: 200 ms, doubled after each next one. */
    public static final Duration DEFAULT_RETRY_BACKOFF = Duration.ofMillis(200);
    /** Longest wait between two attempts, however many attempts are configured: 30 s. */
    public static final Duration MAX_RETRY_BACKOFF = Duration.ofSeconds(30);

    private int batchSize = DEFAULT_BATCH_SIZE;
    private int retryAttempts = DEFAULT_RETRY_ATTEMPTS;
    private Duration retryBackoff = DEFAULT_RETRY_BACKOFF;

    /**
     * For memlife's batching write-behind builders.
     *
     * @param defaultName the decorator's name until {@link #name(String)} sets one
     */
    protected BatchingWriteBehindBuilder(String defaultName) {
        super(defaultName);
    }

    /**
     * The most documents the writer hands the backend in one call (one embedding call for all of
     * them); default {@value #DEFAULT_BATCH_SIZE}. The writer takes what waits, in the order it was
     * handed over, up to this many: under light load a batch is what came since the last one.
     *
     * @param batchSize the most documents per call; at least 1
     * @return this builder
     */
    public final B batchSize(int batchSize) {
        this.batchSize = Checks.atLeast(batchSize, 1, "batchSize");
        return self();
    }

    /**
     * Attempts per batch in all (1: no retry) before its documents count as failed; default
     * {@value #DEFAULT_RETRY_ATTEMPTS}. A batch that failed every attempt is kept, counted per
     * document id ({@link WriteBehindFigures#failedWrites()}, the stop report's {@link
     * WriteBehindReport#failedIds()}), and tried again with the next flush or the stop.
     *
     * @param retryAttempts the number of attempts; at least 1
     * @return this builder
     */
    public final B retryAttempts(int retryAttempts) {
        this.retryAttempts = Checks.atLeast(retryAttempts, 1, "retryAttempts");
        return self();
    }

    /**
     * The wait after a batch's first failed attempt, on the writer thread; doubled after each next
     * one, up to {@link #MAX_RETRY_BACKOFF}. Zero retries at once. Default 200 ms.
     *
     * @param retryBackoff the first wait; zero or more, at most {@link #MAX_RETRY_BACKOFF}
     * @return this builder
     * @throws IllegalArgumentException if {@code retryBackoff} is negative or longer than {@link
     *     #MAX_RETRY_BACKOFF}, naming the value
     */
    public final B retryBackoff(Duration retryBackoff) {
        this.retryBackoff = Checks.nonNegative(retryBackoff, MAX_RETRY_BACKOFF,
                "MAX_RETRY_BACKOFF (" + MAX_RETRY_BACKOFF + ")", "retryBackoff");
        return self();
    }

    /** {@return the most documents per backend call set, or {@value #DEFAULT_BATCH_SIZE}} */
    public final int batchSize() {
        return batchSize;
    }

    /** {@return the attempts per batch set, or {@value #DEFAULT_RETRY_ATTEMPTS}} */
    public final int retryAttempts() {
        return retryAttempts;
    }

    /** {@return the first wait between attempts set, or 200 ms} */
    public final Duration retryBackoff() {
        return retryBackoff;
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }
}
