package dev.memlife.micrometer;

import static java.util.Objects.requireNonNull;

import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;
import java.util.function.ToLongFunction;

/**
 * The snapshot of figures the meters of one binder share: a meter takes a new one when it has
 * already read the current one or the current one is over a second old, and otherwise reads the
 * current one. So a scrape that reads every meter takes one snapshot, and no meter reports the same
 * snapshot twice or one older than a second. Thread-safe.
 *
 * @param <F> the figures
 */
final class Snapshots<F> {

    /** A snapshot is shared for this long at most. */
    private static final long MAX_AGE_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Supplier<F> source;
    private F figures;
    private long takenAt;
    /** Counts the snapshots taken; a {@link Reader} remembers the one it read last. */
    private long generation;

    /**
     * @param source takes a snapshot of the figures; called from the scraping thread
     */
    Snapshots(Supplier<F> source) {
        this.source = requireNonNull(source, "source");
    }

    /** {@return one meter's value over the shared snapshot} */
    Reader<F> reader(ToDoubleFunction<F> value) {
        return new Reader<>(this, requireNonNull(value, "value"));
    }

    private synchronized F readBy(Reader<F> reader) {
        long now = System.nanoTime();
        if (reader.seen == generation || now - takenAt > MAX_AGE_NANOS) {
            figures = requireNonNull(source.get(), "figures");
            takenAt = now;
            generation++;
        }
        reader.seen = generation;
        return figures;
    }

    /**
     * One meter's value (or one of a timer's two), read from the shared snapshot. It holds the
     * snapshots strongly: Micrometer's function counters and timers hold their object only weakly,
     * and a binder may be dropped once it is bound.
     *
     * @param <F> the figures
     */
    static final class Reader<F> implements ToDoubleFunction<Snapshots<F>>, ToLongFunction<Snapshots<F>> {

        private final Snapshots<F> snapshots;
        private final ToDoubleFunction<F> value;
        /** The generation this reader read last; guarded by {@link #snapshots}. */
        private long seen;

        private Reader(Snapshots<F> snapshots, ToDoubleFunction<F> value) {
            this.snapshots = snapshots;
            this.value = value;
        }

        @Override
        public double applyAsDouble(Snapshots<F> ignored) {
            return value.applyAsDouble(snapshots.readBy(this));
        }

        @Override
        public long applyAsLong(Snapshots<F> ignored) {
            return (long) applyAsDouble(ignored);
        }
    }
}
