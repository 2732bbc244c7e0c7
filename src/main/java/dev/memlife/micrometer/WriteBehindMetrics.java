package dev.memlife.micrometer;

import static java.util.Objects.requireNonNull;

import dev.memlife.WriteBehindFigures;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * The meters of a write-behind decorator (LangChain4j's {@code WriteBehindChatMemoryStore} and
 * {@code WriteBehindEmbeddingIngestor}, Spring AI's {@code WriteBehindChatMemoryRepository} and
 * {@code WriteBehindVectorStore}), read from its {@link WriteBehindFigures}:
 *
 * <ul>
 *   <li>{@code memlife.writebehind.handovers{kind=save|delete}}: saves and deletes taken;
 *   <li>{@code memlife.writebehind.coalesced}: replaced by a later one before any write took them;
 *   <li>{@code memlife.writebehind.written{kind=save|delete}}: backend calls that returned;
 *   <li>{@code memlife.writebehind.failed}: backend calls that threw;
 *   <li>{@code memlife.writebehind.rejected}: refused after shutdown began;
 *   <li>{@code memlife.writebehind.pending}: ids (conversations, documents, segments) whose latest
 *       state the backend lacks;
 *   <li>{@code memlife.writebehind.oldest.pending}: how long the oldest of them has waited;
 *   <li>{@code memlife.writebehind.failing}: backend calls failed in a row (0 while it takes them).
 * </ul>
 *
 * Every meter has the tag {@code name} (the bean's or the store's name) and the caller's tags.
 */
public final class WriteBehindMetrics implements MeterBinder {

    private final Supplier<WriteBehindFigures> figures;
    private final Tags tags;

    /**
     * Meters for one write-behind chat memory.
     *
     * @param name what the {@code name} tag says: the store's or the bean's name
     * @param figures its figures, such as {@code store::figures}
     * @param tags further tags for every meter
     */
    public WriteBehindMetrics(String name, Supplier<WriteBehindFigures> figures, Iterable<Tag> tags) {
        requireNonNull(name, "name");
        this.figures = requireNonNull(figures, "figures");
        this.tags = Tags.of(requireNonNull(tags, "tags")).and("name", name);
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        requireNonNull(registry, "registry");
        counter(registry, "memlife.writebehind.handovers", "save", "Saves taken", WriteBehindFigures::saves);
        counter(registry, "memlife.writebehind.handovers", "delete", "Deletes taken", WriteBehindFigures::deletes);
        counter(registry, "memlife.writebehind.written", "save", "Saves the backend took", WriteBehindFigures::writtenSaves);
        counter(registry, "memlife.writebehind.written", "delete", "Deletes the backend took",
                WriteBehindFigures::writtenDeletes);
        counter(registry, "memlife.writebehind.coalesced", null, "Saves and deletes replaced before any write took them",
                WriteBehindFigures::coalesced);
        counter(registry, "memlife.writebehind.failed", null, "Backend calls that threw", WriteBehindFigures::failedWrites);
        counter(registry, "memlife.writebehind.rejected", null, "Saves and deletes refused after shutdown began",
                WriteBehindFigures::rejected);
        Gauge.builder("memlife.writebehind.pending", figures, f -> f.get().pending()).tags(tags)
                .description("Conversations whose latest state the backend lacks").register(registry);
        Gauge.builder("memlife.writebehind.failing", figures, f -> f.get().failingWrites()).tags(tags)
                .description("Backend calls failed in a row since it last took one").register(registry);
        TimeGauge.builder("memlife.writebehind.oldest.pending", figures, TimeUnit.NANOSECONDS,
                f -> f.get().oldestPendingAge().toNanos()).tags(tags)
                .description("How long the oldest state the backend lacks has waited").register(registry);
    }

    private void counter(MeterRegistry registry, String name, String kind, String description,
            ToDoubleFunction<WriteBehindFigures> read) {
        Tags all = kind == null ? tags : tags.and("kind", kind);
        FunctionCounter.builder(name, figures, f -> read.applyAsDouble(f.get())).tags(all).description(description)
                .register(registry);
    }
}
