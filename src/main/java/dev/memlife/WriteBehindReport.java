package dev.memlife;

import static java.util.Objects.requireNonNull;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a write-behind decorator's {@code stop(Duration)} ({@link WriteBehind#stop}) did with every
 * id whose state was not in the store behind it (the <em>backend</em>) yet: the report of {@code
 * dev.memlife.langchain4j.WriteBehindChatMemoryStore} (ids are LangChain4j's memory ids, {@code
 * Object}), of {@code dev.memlife.springai.WriteBehindChatMemoryRepository} (Spring AI's
 * conversation ids), and of the vector store and embedding ingestor (document and segment ids).
 * Immutable and thread-safe.
 *
 * <p>Every id still waiting when the shutdown began is in exactly one list: {@link #writtenIds()
 * written} before the deadline, {@link #failedIds() failed} (the backend refused its latest state,
 * also when tried again during the shutdown), {@link #abandonedIds() abandoned} (the deadline came
 * before the writer started it) or {@link #stillRunningIds() still running} (the writer was
 * handing it to the backend at the deadline; how it ended is logged). The failed and abandoned
 * states stay readable through the write-behind's reads, but are never written.
 *
 * @param writtenIds the ids whose latest state the shutdown wrote, in the order it wrote them
 * @param failedIds the ids whose latest state the backend refused, in the order they first waited,
 *     each with what the backend threw last
 * @param abandonedIds the ids the deadline cut off before the writer started them, in the order
 *     they waited
 * @param stillRunningIds the ids the writer was handing to the backend at the deadline, if any (one
 *     for a chat memory; a batch's for a vector store or an ingestor): that call goes on, detached,
 *     and how it ended is logged
 * @param figures the write-behind's figures when the shutdown ended
 * @param budget the budget the shutdown had
 * @param elapsed how long the shutdown took
 * @param <K> the type of the ids
 */
public record WriteBehindReport<K>(List<K> writtenIds, Map<K, Throwable> failedIds, List<K> abandonedIds,
        List<K> stillRunningIds, WriteBehindFigures figures, Duration budget, Duration elapsed) implements StopReport {

    /**
     * Copies the collections, keeping their order; nothing may be null.
     *
     * @param writtenIds the ids the shutdown wrote
     * @param failedIds the ids the backend refused, each with what it threw last
     * @param abandonedIds the ids the deadline cut off before the writer started them
     * @param stillRunningIds the ids the writer was writing at the deadline, if any
     * @param figures the figures when the shutdown ended
     * @param budget the budget the shutdown had
     * @param elapsed how long the shutdown took
     */
    public WriteBehindReport {
        writtenIds = List.copyOf(writtenIds);
        failedIds = Collections.unmodifiableMap(new LinkedHashMap<>(requireNonNull(failedIds, "failedIds")));
        abandonedIds = List.copyOf(abandonedIds);
        stillRunningIds = List.copyOf(stillRunningIds);
        requireNonNull(figures, "figures");
        requireNonNull(budget, "budget");
        requireNonNull(elapsed, "elapsed");
    }

    /** {@return whether every id's latest state is in the backend: nothing failed, abandoned or still running} */
    @Override
    public boolean complete() {
        return failedIds.isEmpty() && abandonedIds.isEmpty() && stillRunningIds.isEmpty();
    }

    /** {@return the ids left unwritten, as strings: the failed ones, then the abandoned, then the one still running} */
    @Override
    public List<String> unfinished() {
        List<String> ids = new ArrayList<>();
        failedIds.keySet().forEach(id -> ids.add(String.valueOf(id)));
        abandonedIds.forEach(id -> ids.add(String.valueOf(id)));
        stillRunningIds.forEach(id -> ids.add(String.valueOf(id)));
        return List.copyOf(ids);
    }

    @Override
    public String toString() {
        return "WriteBehindReport[written=" + writtenIds.size() + ", failed=" + failedIds.size() + ", abandoned="
                + abandonedIds.size() + ", stillRunning=" + stillRunningIds.size() + ", elapsed=" + elapsed.toMillis()
                + "ms of " + budget.toMillis() + "ms"
                + (failedIds.isEmpty() ? "" : ", failedIds=" + failedIds.keySet())
                + (abandonedIds.isEmpty() ? "" : ", abandonedIds=" + abandonedIds)
                + (stillRunningIds.isEmpty() ? "" : ", stillRunningIds=" + stillRunningIds)
                + ", " + figures + "]";
    }
}
