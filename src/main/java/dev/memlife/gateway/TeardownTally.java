package dev.memlife.gateway;

import dev.memlife.agent.TeardownMode;
import dev.memlife.agent.TeardownReport.Extraction;
import dev.memlife.agent.TeardownReport;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

/** The teardowns a gateway ran, by mode and outcome, for {@link GatewayFigures}. Thread-safe. */
final class TeardownTally {

    private static final int COMPLETED = 0;
    private static final int INCOMPLETE = 1;
    private static final int FAILED = 2;

    /** Three counts per mode, in {@link TeardownMode} order. */
    private final AtomicLongArray counts = new AtomicLongArray(TeardownMode.values().length * 3);

    /** A teardown in {@code mode} has finished; counted if it ran (another owned the agent otherwise). */
    void count(TeardownMode mode, TeardownReport result, Throwable failure) {
        int outcome;
        if (failure != null) {
            outcome = FAILED;
        } else if (!result.ran()) {
            return;
        } else {
            outcome = wholly(result) ? COMPLETED : INCOMPLETE;
        }
        counts.incrementAndGet(mode.ordinal() * 3 + outcome);
    }

    private static boolean wholly(TeardownReport r) {
        boolean extracted = r.extraction() == Extraction.COMPLETED || r.extraction() == Extraction.NOT_RUN;
        return r.flushed() && extracted && r.drainReport()
                .map(d -> d.complete() && d.failed() == 0 && d.providersNotShutDown().isEmpty()).orElse(false);
    }

    /** The counts now, of the modes that ran at least once. */
    Map<TeardownMode, GatewayFigures.TeardownCounts> snapshot() {
        Map<TeardownMode, GatewayFigures.TeardownCounts> out = new EnumMap<>(TeardownMode.class);
        for (TeardownMode mode : TeardownMode.values()) {
            int i = mode.ordinal() * 3;
            GatewayFigures.TeardownCounts c = new GatewayFigures.TeardownCounts(counts.get(i + COMPLETED),
                    counts.get(i + INCOMPLETE), counts.get(i + FAILED));
            if (c.total() > 0) {
                out.put(mode, c);
            }
        }
        return out;
    }
}
