package dev.memlife;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * What {@link MemoryManager#stop()} did with every write the manager was ever handed, per
 * write id. Immutable and thread-safe.
 *
 * <p>The counts always add up: {@code submitted() == delivered() + failed() + abandoned() +
 * stillRunning() + rejected()}, and every accepted write is in exactly one bucket:
 * <ul>
 *   <li><em>delivered</em>: every provider of its route took it without throwing;
 *   <li><em>failed</em>: at least one provider threw on it ({@link #failuresByProvider()} says
 *       which, and how often), and every other provider still got it ({@link #failedWriteIds()});
 *   <li><em>abandoned</em>: the drain deadline passed before the writer started it, so no provider
 *       got it ({@link #abandonedWriteIds()});
 *   <li><em>still running</em>: the writer was handing it to its providers at the deadline; it
 *       goes on to every one of them, detached, and how it ended is logged ({@link
 *       #stillRunningWriteIds()});
 *   <li><em>rejected</em>: it arrived after shutdown began, found the queue full, or no writer
 *       thread could be started; its caller was told, and it has no id.
 * </ul>
 * {@link #statusOf(String)} says which bucket an id is in. The report is made when the
 * shutdown ends; writes rejected later are counted by {@link MemoryManager#rejectedWrites()}.
 */
public final class DrainReport implements StopReport {

    private final long delivered;
    private final long failed;
    private final WriteIds failedWriteIds;
    private final WriteIds abandonedWriteIds;
    private final WriteIds stillRunningWriteIds;
    private final long unlinked;
    private final long rejected;
    private final long blankTurns;
    private final Map<String, Long> failuresByProvider;
    private final Map<String, Long> interruptsByProvider;
    private final List<String> providersNotShutDown;
    private final List<String> providersShutDownLater;
    private final Duration drainTimeout;
    private final Duration elapsed;

    DrainReport(long delivered, long failed, WriteIds failedWriteIds, WriteIds abandonedWriteIds,
            WriteIds stillRunningWriteIds, long unlinked, long rejected, long blankTurns,
            Map<String, Long> failuresByProvider, Map<String, Long> interruptsByProvider,
            List<String> providersNotShutDown, List<String> providersShutDownLater, Duration drainTimeout,
            Duration elapsed) {
        this.delivered = delivered;
        this.failed = failed;
        this.failedWriteIds = failedWriteIds; // immutable; a copy would spell out every id now
        this.abandonedWriteIds = abandonedWriteIds;
        this.stillRunningWriteIds = stillRunningWriteIds;
        this.unlinked = unlinked;
        this.rejected = rejected;
        this.blankTurns = blankTurns;
        this.failuresByProvider = Map.copyOf(failuresByProvider);
        this.interruptsByProvider = Map.copyOf(interruptsByProvider);
        this.providersNotShutDown = List.copyOf(providersNotShutDown);
        this.providersShutDownLater = List.copyOf(providersShutDownLater);
        this.drainTimeout = drainTimeout;
        this.elapsed = elapsed;
    }

    /** {@return every write the manager was handed, accepted or not (blank turns are not writes)} */
    public long submitted() {
        return accepted() + rejected;
    }

    /** {@return writes every provider took without throwing} */
    public long delivered() {
        return delivered;
    }

    /** {@return writes at least one provider threw on; every other provider of their route still got them} */
    public long failed() {
        return failed;
    }

    /** {@return the write ids of the {@link #failed()} writes, in the order the writer finished them} */
    public List<String> failedWriteIds() {
        return failedWriteIds;
    }

    /**
     * Writes the drain deadline cut off before the writer started them. With a spool, they stay
     * in it and are replayed at the next start.
     *
     * @return how many
     */
    public long abandoned() {
        return abandonedWriteIds.size();
    }

    /** {@return the write ids of the {@link #abandoned()} writes, in the order they were accepted} */
    public List<String> abandonedWriteIds() {
        return abandonedWriteIds;
    }

    /**
     * Writes the writer was still handing to its providers at the deadline; it finishes them
     * detached. Also counts, without ids, writes whose caller was stopped between the two steps of
     * {@code syncAll} for longer than the drain could wait (a thread that died of a stack overflow
     * right there); this is logged when it happens.
     *
     * @return how many writes were still running at the deadline
     */
    public long stillRunning() {
        return stillRunningWriteIds.size() + unlinked;
    }

    /** {@return the write ids of the {@link #stillRunning()} writes} */
    public List<String> stillRunningWriteIds() {
        return stillRunningWriteIds;
    }

    /** {@return writes refused: after shutdown began, on a full queue, or with no writer thread to be had} */
    public long rejected() {
        return rejected;
    }

    /**
     * Turns handed to {@code syncAll} with blank user content: not writes (not in {@link
     * #submitted()}), never queued, counted here so that none disappears unseen.
     *
     * @return how many blank turns the manager was handed
     */
    public long blankTurns() {
        return blankTurns;
    }

    /**
     * What became of the write with this id, in this report.
     *
     * @param writeId a write id, as {@link Turn#writeId()} gave it to the providers
     * @return its bucket; {@link WriteStatus#UNKNOWN} for an id this manager never accepted, and
     *     for a write it replayed from its spool and delivered (a replayed write keeps the id of the
     *     run that first accepted it; the report lists only the replayed writes that were not delivered)
     * @throws NullPointerException if {@code writeId} is null
     */
    public WriteStatus statusOf(String writeId) {
        String prefix = abandonedWriteIds.idPrefix();
        if (!writeId.startsWith(prefix) || writeId.length() <= prefix.length() + 1
                || writeId.charAt(prefix.length()) != ':') {
            return replayedStatusOf(writeId);
        }
        long seq;
        try {
            seq = Long.parseLong(writeId.substring(prefix.length() + 1));
        } catch (NumberFormatException e) {
            return WriteStatus.UNKNOWN;
        }
        if (seq < 1 || seq > accepted()) {
            return WriteStatus.UNKNOWN;
        }
        if (abandonedWriteIds.containsSeq(seq)) {
            return WriteStatus.ABANDONED;
        }
        if (stillRunningWriteIds.containsSeq(seq)) {
            return WriteStatus.STILL_RUNNING;
        }
        return failedWriteIds.containsSeq(seq) ? WriteStatus.FAILED : WriteStatus.DELIVERED;
    }

    /** The bucket of a replayed write, which keeps its first run's id; delivered ones are not listed. */
    private WriteStatus replayedStatusOf(String writeId) {
        if (abandonedWriteIds.containsGiven(writeId)) {
            return WriteStatus.ABANDONED;
        }
        if (stillRunningWriteIds.containsGiven(writeId)) {
            return WriteStatus.STILL_RUNNING;
        }
        return failedWriteIds.containsGiven(writeId) ? WriteStatus.FAILED : WriteStatus.UNKNOWN;
    }

    private long accepted() {
        return delivered + failed + abandoned() + stillRunning();
    }

    /**
     * For each provider that threw on a write hook, how many writes it failed. Read when the
     * shutdown ended, so it may already include a {@link #stillRunning() still running} write that
     * failed at one provider before the deadline.
     *
     * @return failed writes by provider name; only providers that failed at least once
     */
    public Map<String, Long> failuresByProvider() {
        return failuresByProvider;
    }

    /**
     * For each provider that returned to the writer with the thread's interrupt flag set, how often.
     * The writer cleared the flag each time, so the next provider's I/O was not cut short by it.
     *
     * @return interrupts by provider name; only providers that left one at least once
     */
    public Map<String, Long> interruptsByProvider() {
        return interruptsByProvider;
    }

    /** {@return providers whose {@code shutdown()} had not returned when the shutdown budget ran out} */
    public List<String> providersNotShutDown() {
        return providersNotShutDown;
    }

    /**
     * Providers still running a hook when the shutdown came (a write past the drain deadline, an
     * extraction past its timeout, a prefetch): each is shut down by that hook's thread as soon as
     * the hook returns, never while it runs, so no hook of a provider runs after its shutdown.
     *
     * @return their names, in registration order
     */
    public List<String> providersShutDownLater() {
        return providersShutDownLater;
    }

    /** {@return whether every accepted write was handed to every provider before the deadline} */
    @Override
    public boolean complete() {
        return abandonedWriteIds.isEmpty() && stillRunning() == 0;
    }

    /** {@return the budget the shutdown had} */
    @Override
    public Duration budget() {
        return drainTimeout;
    }

    /** {@return how long the whole shutdown took: drain plus provider shutdown} */
    @Override
    public Duration elapsed() {
        return elapsed;
    }

    /**
     * {@return the write ids the stop left unfinished: the {@link #abandonedWriteIds() abandoned}
     * ones, then those {@link #stillRunningWriteIds() still running}}
     */
    @Override
    public List<String> unfinished() {
        List<String> ids = new ArrayList<>(abandonedWriteIds.size() + stillRunningWriteIds.size());
        ids.addAll(abandonedWriteIds);
        ids.addAll(stillRunningWriteIds);
        return Collections.unmodifiableList(ids);
    }

    @Override
    public String toString() {
        return "DrainReport[submitted=" + submitted() + ", delivered=" + delivered + ", failed=" + failed
                + ", abandoned=" + abandoned() + ", stillRunning=" + stillRunning() + ", rejected=" + rejected
                + ", elapsed=" + elapsed.toMillis() + "ms of " + drainTimeout.toMillis() + "ms"
                + (blankTurns == 0 ? "" : ", blankTurns=" + blankTurns)
                + (failuresByProvider.isEmpty() ? "" : ", failuresByProvider=" + failuresByProvider)
                + (interruptsByProvider.isEmpty() ? "" : ", interruptsByProvider=" + interruptsByProvider)
                + (providersNotShutDown.isEmpty() ? "" : ", providersNotShutDown=" + providersNotShutDown)
                + (providersShutDownLater.isEmpty() ? "" : ", providersShutDownLater=" + providersShutDownLater)
                + "]";
    }
}
