package dev.memlife.springai;

import dev.memlife.StopReport;
import dev.memlife.internal.WriteBehind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@link WriteBehindChatMemoryRepository#stop(Duration)} did with every conversation whose
 * state was not in the repository yet, by conversation id. Immutable and thread-safe.
 *
 * <p>Every conversation still waiting when the shutdown began is in exactly one list: {@link
 * #writtenConversationIds() written} before the deadline, {@link #failedConversationIds() failed}
 * (the repository refused its latest state, also when tried again during the shutdown), {@link
 * #abandonedConversationIds() abandoned} (the deadline came before the writer started it) or {@link
 * #stillRunningConversationIds() still running} (the writer was handing it to the repository at the
 * deadline; how it ended is logged).
 */
public final class WriteBehindReport implements StopReport {

    private final List<String> written;
    private final Map<String, Throwable> failed;
    private final List<String> abandoned;
    private final List<String> stillRunning;
    private final WriteBehindFigures figures;
    private final Duration budget;
    private final Duration elapsed;

    WriteBehindReport(List<Object> written, Map<Object, Throwable> failed, List<Object> abandoned,
            List<Object> stillRunning, WriteBehindFigures figures, Duration budget, Duration elapsed) {
        this.written = ids(written);
        Map<String, Throwable> f = new LinkedHashMap<>();
        failed.forEach((id, t) -> f.put((String) id, t));
        this.failed = Collections.unmodifiableMap(f);
        this.abandoned = ids(abandoned);
        this.stillRunning = ids(stillRunning);
        this.figures = figures;
        this.budget = budget;
        this.elapsed = elapsed;
    }

    /** The engine keys conversations by their ids, which are strings here. */
    private static List<String> ids(List<Object> ids) {
        List<String> copy = new ArrayList<>(ids.size());
        for (Object id : ids) {
            copy.add((String) id);
        }
        return List.copyOf(copy);
    }

    /** {@return the conversation ids whose latest state the shutdown wrote, in the order it wrote them} */
    public List<String> writtenConversationIds() {
        return written;
    }

    /**
     * The conversation ids whose latest state the repository refused, each with what it threw last.
     * Their states were not written; they stay readable through {@link
     * WriteBehindChatMemoryRepository#findByConversationId}.
     *
     * @return failed conversation ids, in the order they first waited, and the repository's last
     *     exception for each
     */
    public Map<String, Throwable> failedConversationIds() {
        return failed;
    }

    /**
     * The conversation ids the deadline cut off before the writer started them: never written,
     * still readable through {@link WriteBehindChatMemoryRepository#findByConversationId}.
     *
     * @return abandoned conversation ids, in the order they waited
     */
    public List<String> abandonedConversationIds() {
        return abandoned;
    }

    /**
     * The conversation id the writer was handing to the repository at the deadline, if any: it goes
     * on, detached, and how it ended is logged.
     *
     * @return at most one conversation id
     */
    public List<String> stillRunningConversationIds() {
        return stillRunning;
    }

    /** {@return the repository's figures when the shutdown ended} */
    public WriteBehindFigures figures() {
        return figures;
    }

    /**
     * {@return whether every conversation's latest state is in the repository: nothing failed,
     * abandoned or still running}
     */
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
                + (failed.isEmpty() ? "" : ", failedConversationIds=" + failed.keySet())
                + (abandoned.isEmpty() ? "" : ", abandonedConversationIds=" + abandoned)
                + (stillRunning.isEmpty() ? "" : ", stillRunningConversationIds=" + stillRunning)
                + ", " + figures + "]";
    }
}
