package dev.memlife.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.memlife.WriteBehindFigures;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Every write-behind meter reads its own figure, with the binder's tags and its kind. */
@Timeout(30)
class WriteBehindMetricsTest {

    private final AtomicReference<WriteBehindFigures> figures = new AtomicReference<>(
            new WriteBehindFigures(11, 12, 13, 14, 15, 16, 17, 18, Duration.ofMillis(19), 20));
    private final AtomicInteger reads = new AtomicInteger();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    WriteBehindMetricsTest() {
        new WriteBehindMetrics("chat", () -> {
            reads.incrementAndGet();
            return figures.get();
        }, Tags.of("app", "a")).bindTo(registry);
    }

    @Test
    void everyMeterReadsItsFigureWithItsTags() {
        assertThat(counter("memlife.writebehind.handovers", "save")).isEqualTo(11);
        assertThat(counter("memlife.writebehind.handovers", "delete")).isEqualTo(12);
        assertThat(counter("memlife.writebehind.coalesced", null)).isEqualTo(13);
        assertThat(counter("memlife.writebehind.written", "save")).isEqualTo(14);
        assertThat(counter("memlife.writebehind.written", "delete")).isEqualTo(15);
        assertThat(counter("memlife.writebehind.failed", null)).isEqualTo(16);
        assertThat(counter("memlife.writebehind.rejected", null)).isEqualTo(17);
        assertThat(registry.get("memlife.writebehind.pending").gauge().value()).isEqualTo(18);
        assertThat(registry.get("memlife.writebehind.oldest.pending").timeGauge().value(TimeUnit.MILLISECONDS))
                .isEqualTo(19);
        assertThat(registry.get("memlife.writebehind.failing").gauge().value()).isEqualTo(20);
        for (Meter meter : registry.getMeters()) {
            assertThat(meter.getId().getTag("name")).as(meter.getId().getName()).isEqualTo("chat");
            assertThat(meter.getId().getTag("app")).as(meter.getId().getName()).isEqualTo("a");
        }
        assertThat(registry.getMeters()).hasSize(10);
    }

    @Test
    void oneScrapeReadsTheFiguresOnce() {
        scrape();
        assertThat(reads).hasValue(1);
        figures.set(new WriteBehindFigures(0, 0, 0, 0, 0, 0, 0, 0, Duration.ZERO, 0));
        // the next scrape starts with a meter that already read the snapshot: a fresh one is taken
        scrape();
        assertThat(reads).hasValue(2);
        assertThat(counter("memlife.writebehind.failed", null)).isZero();
    }

    @Test
    void nullArgumentsAreRejectedByName() {
        assertThatThrownBy(() -> new WriteBehindMetrics(null, figures::get, Tags.empty())).hasMessage("name");
        assertThatThrownBy(() -> new WriteBehindMetrics("n", null, Tags.empty())).hasMessage("figures");
        assertThatThrownBy(() -> new WriteBehindMetrics("n", figures::get, null)).hasMessage("tags");
        assertThatThrownBy(() -> new WriteBehindMetrics("n", figures::get, Tags.empty()).bindTo(null))
                .hasMessage("registry");
    }

    /** Reads every meter's measurements, as a registry's publisher does (a measurement reads its value lazily). */
    private void scrape() {
        for (Meter meter : registry.getMeters()) {
            meter.measure().forEach(m -> assertThat(m.getValue()).as(meter.getId().toString()).isNotNaN());
        }
    }

    private double counter(String name, String kind) {
        var search = registry.get(name);
        return (kind == null ? search : search.tag("kind", kind)).functionCounter().count();
    }
}
