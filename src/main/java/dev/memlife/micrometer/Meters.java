package dev.memlife.micrometer;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * Registers one binder's meters, written once for every memlife binder: each meter reads its value
 * from the binder's shared snapshot of figures ({@link Snapshots}) and carries the binder's tags,
 * plus any of its own.
 *
 * @param <F> the figures the meters read
 */
final class Meters<F> {

    private final MeterRegistry registry;
    private final Snapshots<F> shared;
    private final Tags tags;

    Meters(MeterRegistry registry, Snapshots<F> shared, Tags tags) {
        this.registry = registry;
        this.shared = shared;
        this.tags = tags;
    }

    /** A function counter of {@code read}; {@code unit} may be null for none. */
    void counter(String name, String unit, String description, ToDoubleFunction<F> read, Tag... more) {
        FunctionCounter.builder(name, shared, shared.reader(read)).baseUnit(unit).description(description)
                .tags(tags).tags(Tags.of(more)).register(registry);
    }

    /** A gauge of {@code read}; {@code unit} may be null for none. */
    void gauge(String name, String unit, String description, ToDoubleFunction<F> read, Tag... more) {
        Gauge.builder(name, shared, shared.reader(read)).baseUnit(unit).description(description).tags(tags)
                .tags(Tags.of(more)).register(registry);
    }

    /** A time gauge of a duration read in nanoseconds. */
    void timeGauge(String name, String description, ToDoubleFunction<F> nanos) {
        TimeGauge.builder(name, shared, TimeUnit.NANOSECONDS, shared.reader(nanos)).description(description)
                .tags(tags).register(registry);
    }

    /** A function timer of a count and the total nanoseconds they took. */
    void timer(String name, String description, ToDoubleFunction<F> count, ToDoubleFunction<F> totalNanos) {
        FunctionTimer.builder(name, shared, shared.reader(count), shared.reader(totalNanos), TimeUnit.NANOSECONDS)
                .description(description).tags(tags).register(registry);
    }
}
