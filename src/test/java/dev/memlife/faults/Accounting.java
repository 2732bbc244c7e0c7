package dev.memlife.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.memlife.DrainReport;
import dev.memlife.WriteStatus;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks a {@link DrainReport} per write id, not only its sums: every accepted write is in exactly
 * one bucket, the buckets' sizes are the report's counts, and what a recording provider saw agrees
 * with the buckets.
 *
 * <p>{@link DrainReport#statusOf} answers by precedence (abandoned, then still running, then
 * failed), so an id listed in two buckets would look like one outcome there; {@link
 * #assertDisjointBuckets} reads the id lists themselves to catch that.
 */
public final class Accounting {

    private Accounting() {}

    /**
     * @param accepted how many {@code syncAll} calls returned true
     * @param recorded the write ids a provider that never fails recorded, in delivery order
     * @param recorderFirst whether that provider is first in every write's route (then it saw every
     *     write the writer started, even one still running at the deadline)
     * @return each accepted id's outcome, in acceptance order
     */
    public static Map<String, WriteStatus> assertExact(DrainReport report, long accepted, List<String> recorded,
            boolean recorderFirst) {
        assertThat(report.submitted() - report.rejected()).as("accepted writes in %s", report).isEqualTo(accepted);
        assertThat(new HashSet<>(recorded)).as("a write recorded twice").hasSize(recorded.size());
        assertDisjointBuckets(report);
        String prefix = prefixOf(report, recorded);
        assertThat(prefix == null && accepted > 0)
                .as("%s writes accepted, yet no provider recorded one and no bucket lists one: %s", accepted, report)
                .isFalse();
        Map<String, WriteStatus> outcomes = new LinkedHashMap<>();
        for (long seq = 1; seq <= accepted; seq++) {
            String id = prefix + ':' + seq;
            outcomes.put(id, report.statusOf(id));
        }
        if (prefix != null) {
            assertThat(report.statusOf(prefix + ':' + (accepted + 1))).isEqualTo(WriteStatus.UNKNOWN);
        }
        Map<WriteStatus, Long> counts = new EnumMap<>(WriteStatus.class);
        outcomes.values().forEach(o -> counts.merge(o, 1L, Long::sum));
        assertThat(counts.getOrDefault(WriteStatus.UNKNOWN, 0L)).as("ids in no bucket: %s", report).isZero();
        assertThat(counts.getOrDefault(WriteStatus.DELIVERED, 0L)).as("delivered: %s", report)
                .isEqualTo(report.delivered());
        assertThat(counts.getOrDefault(WriteStatus.FAILED, 0L)).as("failed: %s", report).isEqualTo(report.failed());
        assertThat(counts.getOrDefault(WriteStatus.ABANDONED, 0L)).as("abandoned: %s", report)
                .isEqualTo(report.abandoned());
        assertThat(counts.getOrDefault(WriteStatus.STILL_RUNNING, 0L)).as("still running: %s", report)
                .isEqualTo(report.stillRunning());

        Set<String> seen = new HashSet<>(recorded);
        List<String> finishedButUnseen = new ArrayList<>();
        for (Map.Entry<String, WriteStatus> e : outcomes.entrySet()) {
            switch (e.getValue()) {
                case ABANDONED:
                    assertThat(seen).as("abandoned write %s reached a provider", e.getKey()).doesNotContain(e.getKey());
                    break;
                case DELIVERED:
                case FAILED:
                    if (!seen.contains(e.getKey())) {
                        finishedButUnseen.add(e.getKey());
                    }
                    break;
                case STILL_RUNNING:
                    if (recorderFirst) {
                        assertThat(seen).as("a still-running write the writer started").contains(e.getKey());
                    }
                    break;
                default:
                    throw new AssertionError(e);
            }
        }
        assertThat(finishedButUnseen).as("finished writes the recorder never got: %s", report).isEmpty();
        for (String id : recorded) {
            assertThat(outcomes).as("recorded id %s not accepted by this manager", id).containsKey(id);
        }
        return outcomes;
    }

    /**
     * The id lists of the report: none holds an id twice, no id is in two of them, and each list's
     * size is its count.
     */
    public static void assertDisjointBuckets(DrainReport report) {
        List<String> failed = report.failedWriteIds();
        List<String> abandoned = report.abandonedWriteIds();
        List<String> running = report.stillRunningWriteIds();
        assertThat(failed).as("failed ids of %s", report).doesNotHaveDuplicates().hasSize((int) report.failed());
        assertThat(abandoned).as("abandoned ids of %s", report).doesNotHaveDuplicates()
                .hasSize((int) report.abandoned());
        assertThat(running).as("still-running ids of %s", report).doesNotHaveDuplicates()
                .hasSizeLessThanOrEqualTo((int) report.stillRunning()); // writes never linked have no id
        assertThat(common(failed, abandoned)).as("failed and abandoned: %s", report).isEmpty();
        assertThat(common(failed, running)).as("failed and still running: %s", report).isEmpty();
        assertThat(common(abandoned, running)).as("abandoned and still running: %s", report).isEmpty();
    }

    /** The elements in both. */
    public static Set<String> common(Collection<String> a, Collection<String> b) {
        Set<String> out = new LinkedHashSet<>(a);
        out.retainAll(new HashSet<>(b));
        return out;
    }

    /** The ids whose outcome is one of {@code wanted}, in acceptance order. */
    public static Set<String> idsWith(Map<String, WriteStatus> outcomes, WriteStatus... wanted) {
        Set<WriteStatus> w = Set.of(wanted);
        Set<String> out = new LinkedHashSet<>();
        outcomes.forEach((id, o) -> {
            if (w.contains(o)) {
                out.add(id);
            }
        });
        return out;
    }

    private static String prefixOf(DrainReport report, Collection<String> recorded) {
        for (Collection<String> ids : List.of(recorded, report.abandonedWriteIds(), report.stillRunningWriteIds(),
                report.failedWriteIds())) {
            for (String id : ids) {
                return id.substring(0, id.lastIndexOf(':'));
            }
        }
        return null;
    }
}
