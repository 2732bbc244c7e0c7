package dev.memlife;

import static java.util.Objects.requireNonNull;

import java.util.Optional;
import java.util.concurrent.ThreadFactory;

/**
 * The settings every builder of a memlife owner shares, written and checked once: where the
 * owner's threads come from, and the clock its budgets and timeouts are measured on. The builders
 * of {@link MemoryManager}, {@code AgentMemory}, {@code AgentGateway}, {@code
 * SessionCommitTracker} and the write-behind stores extend it.
 *
 * @param <B> the builder, returned by each setter
 */
public abstract class OwnerBuilder<B extends OwnerBuilder<B>> {

    private ThreadFactory threadFactory;
    private Ticker ticker = Ticker.system();

    /** For memlife's builders. */
    protected OwnerBuilder() {}

    /**
     * Makes every thread the owner starts. By default they are daemon threads named after the
     * owner ({@code memlife-writer-<name>}, {@code memlife-housekeeping-<name>-<n>}, ...); a
     * custom factory should make daemon threads too, so a forgotten owner never keeps the JVM
     * alive. On Java 21 and later a factory of virtual threads ({@code
     * Thread.ofVirtual().factory()}) works.
     *
     * @param threadFactory the factory of every thread the owner starts; must not return null
     * @return this builder
     */
    public final B threadFactory(ThreadFactory threadFactory) {
        this.threadFactory = requireNonNull(threadFactory, "threadFactory");
        return self();
    }

    /**
     * The time source of every budget and timeout the owner measures (drain deadlines, flushes,
     * waits for room, idle TTLs, sweeps); default the system ticker. Tests hand in {@code
     * dev.memlife.testing.ManualTicker} and step it instead of waiting for real time.
     *
     * @param ticker the time source
     * @return this builder
     */
    public final B ticker(Ticker ticker) {
        this.ticker = requireNonNull(ticker, "ticker");
        return self();
    }

    /** {@return the thread factory set; empty for memlife's own daemon threads} */
    public final Optional<ThreadFactory> threadFactory() {
        return Optional.ofNullable(threadFactory);
    }

    /** {@return the time source set, or the system ticker} */
    public final Ticker ticker() {
        return ticker;
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }
}
