package dev.memlife;

import static java.util.Objects.requireNonNull;

import java.time.Duration;

/**
 * The base of memlife's write-behind decorators: it forwards the lifecycle every one of them
 * shares ({@link WriteBehind}) to the write-behind it was built with, so each decorator only adds
 * its framework's calls. Not meant to be extended by applications; use the decorators.
 *
 * @param <K> the ids writes are reported by
 */
public abstract class WriteBehindDecorator<K> implements WriteBehind<K> {

    private final WriteBehind<K> engine;

    /**
     * A decorator whose lifecycle is {@code engine}'s.
     *
     * @param engine the write-behind that takes, writes, flushes and stops
     */
    protected WriteBehindDecorator(WriteBehind<K> engine) {
        this.engine = requireNonNull(engine, "engine");
    }

    @Override
    public final String name() {
        return engine.name();
    }

    @Override
    public final boolean flush(Duration timeout) {
        return engine.flush(timeout);
    }

    @Override
    public final WriteBehindReport<K> stop(Duration budget) {
        return engine.stop(budget);
    }

    @Override
    public final void close() {
        engine.close();
    }

    @Override
    public final WriteBehindFigures figures() {
        return engine.figures();
    }

    /** {@return {@code <decorator>[<name> over <backend>]}} */
    @Override
    public final String toString() {
        return engine.toString();
    }
}
