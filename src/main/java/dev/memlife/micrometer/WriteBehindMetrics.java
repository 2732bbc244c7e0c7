package dev.memlife.micrometer;

import static java.util.Objects.requireNonNull;

import dev.memlife.WriteBehindFigures;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.function.Supplier;

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
 * Every meter has the tag {@code name} (the bean's or the store's name) and the caller's tags. The
 * meters of one binder share a snapshot of the figures, as {@link MemlifeMetrics}'s do: a scrape
 * reads them once.
 */
public final class WriteBehindMetrics implements MeterBinder {

    private final Snapshots<WriteBehindFigures> shared;
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
        this.shared = new Snapshots<>(requireNonNull(figures, "figures"));
        this.tags = Tags.of(requireNonNull(tags, "tags")).and("name", name);
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Meters<WriteBehindFigures> m = new Meters<>(requireNonNull(registry, "registry"), shared, tags);
        Tag save = Tag.of("kind", "save");
        Tag delete = Tag.of("kind", "delete");
        m.counter("memlife.writebehind.handovers", null, "Saves taken", WriteBehindFigures::saves, save);
        m.counter("memlife.writebehind.handovers", null, "Deletes taken", WriteBehindFigures::deletes, delete);
        m.counter("memlife.writebehind.written", null, "Saves the backend took", WriteBehindFigures::writtenSaves,
                save);
        m.counter("memlife.writebehind.written", null, "Deletes the backend took", WriteBehindFigures::writtenDeletes,
                delete);
        m.counter("memlife.writebehind.coalesced", null, "Saves and deletes replaced before any write took them",
                WriteBehindFigures::coalesced);
        m.counter("memlife.writebehind.failed", null, "Backend calls that threw", WriteBehindFigures::failedWrites);
        m.counter("memlife.writebehind.rejected", null, "Saves and deletes refused after shutdown began",
                WriteBehindFigures::rejected);
        m.gauge("memlife.writebehind.pending", null, "Conversations whose latest state the backend lacks",
                WriteBehindFigures::pending);
        m.gauge("memlife.writebehind.failing", null, "Backend calls failed in a row since it last took one",
                WriteBehindFigures::failingWrites);
        m.timeGauge("memlife.writebehind.oldest.pending", "How long the oldest state the backend lacks has waited",
                f -> f.oldestPendingAge().toNanos());
    }
}
