package dev.memlife.langchain4j;

import dev.memlife.StopReport;
import dev.memlife.internal.WriteBehind;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@link WriteBehindChatMemoryStore#stop(Duration)} did with every memory id whose state
 * was not in the store yet, by memory id. Immutable and thread-safe.
 *
 * <p>Every memory id still waiting when the shutdown began is in exactly one list: {@link
 * #writtenMemoryIds() written} before the deadline, {@link #failedMemoryIds() failed} (the store
 * refused its latest state, also when tried again during the shutdown), {@link
 * #abandonedMemoryIds() abandoned} (the deadline came before the writer started it) or {@link
 * #stillRunningMemoryIds() still running} (the writer was handing it to the store at the deadline;
 * how it ended is logged).
 */
public final class WriteBehindReport implements StopReport {

    private final List<Object> written;
    private final Map<Object, Throwable> failed;
    private final List<Object> abandoned;
    private final List<Object> stillRunning;
    private final WriteBehindFigures figures;
    private final Duration budget;
    private final Duration elapsed;

    WriteBehindReport(List<Object> written, Map<Object, Throwable> failed, List<Object> abandoned,
            List<Object> stillRunning, WriteBehindFigures figures, Duration budget, Duration elapsed) {
        this.written = List.copyOf(written);
        this.failed = Collections.unmodifiableMap(new LinkedHashMap<>(failed));
        this.abandoned = List.copyOf(abandoned);
        this.stillRunning = List.copyOf(stillRunning);
        this.figures = figures;
        this.budget = budget;
        this.elapsed = elapsed;
    }

    /** {@return the memory ids whose latest state the shutdown wrote, in the order it wrote them} */
    public List<Object> writtenMemoryIds() {
        return written;
    }

    /**
     * The memory ids whose latest state the store refused, each with what it threw last. Their
     * states were not written; they stay readable through {@link
     * WriteBehindChatMemoryStore#getMessages}.
     *
     * @return failed memory ids, in the order they first waited, and the store's last exception for each
     */
    public Map<Object, Throwable> failedMemoryIds() {
        return failed;
    }

    /**
     * The memory ids the deadline cut off before the writer started them: never written, still
     * readable through {@link WriteBehindChatMemoryStore#getMessages}.
     *
     * @return abandoned memory ids, in the order they waited
     */
    public List<Object> abandonedMemoryIds() {
        return abandoned;
    }

    /**
     * The memory id the writer was handing to the store at the deadline, if any: it goes on,
     * detached, and how it ended is logged.
     *
     * @return at most one memory id
     */
    public List<Object> stillRunningMemoryIds() {
        return stillRunning;
    }

    /** {@return the store's figures when the shutdown ended} */
    public WriteBehindFigures figures() {
        return figures;
    }

    /** {@return whether every memory id's latest state is in the store: nothing failed, abandoned or still running} */
    @Override
    public boolean complete() {
        return failed.isEmpty() && abandoned.isEmpty() && stillRunning.isEmpty();
    }

    /** {@return the budget the shutdown had} */
    @Override
    public Duration budget() {
        return budget;
    }

    /** {@return how long the shutdown took} */
    @Override
    public Duration elapsed() {
        return elapsed;
    }

    /** {@return the ids left unwritten: the failed ones, then the abandoned, then the one still running} */
    @Override
    public List<String> unfinished() {
        return WriteBehind.unfinished(failed, abandoned, stillRunning);
    }

    @Override
    public String toString() {
        return "WriteBehindReport[written=" + written.size() + ", failed=" + failed.size() + ", abandoned="
                + abandoned.size() + ", stillRunning=" + stillRunning.size() + ", elapsed=" + elapsed.toMillis()
                + "ms of " + budget.toMillis() + "ms"
                + (failed.isEmpty() ? "" : ", failedMemoryIds=" + failed.keySet())
                + (abandoned.isEmpty() ? "" : ", abandonedMemoryIds=" + abandoned)
                + (stillRunning.isEmpty() ? "" : ", stillRunningMemoryIds=" + stillRunning)
                + ", " + figures + "]";
    }
}
