package dev.memlife;

import dev.memlife.internal.Threads;
import dev.memlife.internal.ThrottledLog;
import dev.memlife.internal.WriteAheadLog;
import java.util.function.Supplier;

/**
 * The parts of one manager's write path that its callers' side ({@link Writer}) and its writer
 * thread ({@link WriteLoop}) share: built once, from what the manager hands over, and given to
 * both. It holds no logic of its own.
 *
 * <p><b>Four locks, and the order they are taken in.</b> Each lives in one of these parts.
 * <ul>
 *   <li>The <em>start lock</em> ({@link WriterThread}) guards starting the writer thread and
 *       forgetting a dead or retired one ({@link WriteLoop}: an idle writer gives its thread up
 *       after its keep-alive). The user's thread factory runs under it; nothing else does.
 *   <li>The <em>batch lock</em> ({@link BatchClaim#lock}) guards the taker's end of the queue,
 *       the batch in progress and the session {@link Boundaries}. The writer holds it while it
 *       takes a batch; the drain, while it claims what the writer has not started and takes its
 *       snapshot; a caller, briefly, to queue a boundary or read the {@link Writer#figures()}.
 *   <li>{@code waits} ({@link Lifecycle}) guards changes of the state and its two conditions:
 *       callers waiting for room, flushes and the drain waiting for progress.
 *   <li>The <em>failed-ids lock</em> ({@code Progress.failedLock}) guards the ids of failed
 *       writes: the writer adds to them when a write fails; the drain copies them.
 * </ul>
 * The one nesting allowed is the drain's: the batch lock, then {@code waits} (to mark the writer
 * abandoned and wake the flushes) or the failed-ids lock (for its snapshot), one at a time. {@code
 * waits} and the failed-ids lock are leaves: no lock is taken while either is held. The start lock
 * is never held with another. So no two threads can wait for each other. <b>No lock is held while
 * a provider runs</b>: the writer calls the providers between two batch-lock sections, and the
 * providers' {@code shutdown()} runs after {@link Writer#drain} has returned. Ending the writer's
 * leases under the batch lock ({@link WriteLoop#releaseLeases}) cannot run a {@code shutdown()}
 * there: a provider's gate closes only after the drain.
 */
final class WriterContext {

    /**
     * The writer's settings.
     *
     * @param capacity how many writes the queue holds
     * @param maxBatchSize the most writes the writer takes at once
     * @param keepAliveNanos how long the writer stays parked with nothing to do before it gives
     *     its thread up
     * @param lingerNanos how long the writer lingers for a fuller batch; 0 never
     */
    record Settings(int capacity, int maxBatchSize, long keepAliveNanos, long lingerNanos) {}

    final String managerName;
    /** The prefix of this manager's write ids. */
    final String idPrefix;
    final Settings settings;
    /** What every timeout of the write path is measured on. */
    final Ticker ticker;
    final ThrottledLog warnings;
    final ProviderCalls calls;
    /** Every provider of the manager, for the writer's standing leases on their gates. */
    final Supplier<RegisteredProvider[]> providers;
    /** The durable spool every write is appended to before it is queued; null without one. */
    final WriteAheadLog log;

    final TurnQueue queue;
    final Progress progress;
    final BatchClaim claim = new BatchClaim();
    final Boundaries boundaries = new Boundaries();
    final WriterThread thread;
    final Lifecycle lifecycle;

    WriterContext(String managerName, String idPrefix, Settings settings, Threads threads, Ticker ticker,
            ThrottledLog warnings, ProviderCalls calls, Supplier<RegisteredProvider[]> providers, WriteAheadLog log) {
        this.managerName = managerName;
        this.idPrefix = idPrefix;
        this.settings = settings;
        this.ticker = ticker;
        this.warnings = warnings;
        this.calls = calls;
        this.providers = providers;
        this.log = log;
        this.queue = new TurnQueue(settings.capacity());
        this.progress = new Progress(idPrefix);
        this.thread = new WriterThread(managerName, threads);
        this.lifecycle = new Lifecycle(managerName, queue, thread);
    }
}
