package dev.memlife.internal;

import dev.memlife.StoppedException;
import dev.memlife.Ticker;
import dev.memlife.WriteBehindBuilder;
import dev.memlife.WriteBehindFigures;
import dev.memlife.WriteBehindReport;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;

/**
 * The mechanics of {@link WriteBehindEngine}: the latest state of each id, handed over by callers and
 * written to the {@link WriteBehindEngine.Sink} by one writer thread.
 *
 * <ul>
 *   <li>At most one state per id waits: a handover replaces the state not yet written
 *       (coalesced).
 *   <li>{@link #waiting} returns the state not yet in the sink, so the front reads its own writes.
 *   <li>The writer writes one id at a time, its latest state, so the sink never sees an older state
 *       after a newer one; a delete ({@code null} state) is the sink's delete, after any save of
 *       that id in flight.
 *   <li>A write the sink fails is counted, logged (throttled), kept and written again with that
 *       id's next handover, a {@link #flush} or the {@link #stop}.
 *   <li>The writer starts with the first handover and retires after the keep-alive idle.
 *   <li>With a spool ({@link StateJournal}), every handover is appended to it before it is taken,
 *       what an earlier run left is {@linkplain #replay replayed} before anything reads, and the
 *       spool is emptied whenever nothing waits.
 * </ul>
 *
 * <p>Thread-safe.
 *
 * <p>One idea past 500 lines: the queue, its writer thread and its accounting share one lock and
 * one map of the ids not yet in the sink. Handing over, flushing, stopping and writing a batch each
 * move an id through the same states (queued, being written, failed and kept, written), so they
 * read together. The spool is {@link StateJournal}'s, the API {@link WriteBehindEngine}'s.
 *
 * @param <K> the ids
 * @param <M> the messages; the state of one id is a list of them, {@code null} for a delete
 */
final class WriteBehindQueue<K, M> {

    /** The lifecycle; moves only forward, under {@link #lock}. */
    private enum State {
        /** Takes handovers. */
        OPEN,
        /** A shutdown is draining: handovers are refused, the writer writes what waits. */
        DRAINING,
        /** A shutdown's deadline passed or everything was written: the writer takes nothing more. */
        CLOSED
    }

    /**
     * What a shutdown did.
     *
     * @param report by id: every id still waiting when it began is in exactly one of its lists
     * @param closedHere whether this call ended the drain (the call that logs an incomplete one)
     */
    record Outcome<K>(WriteBehindReport<K> report, boolean closedHere) {}

    /** The state waiting for an id: {@link #state} is null for a delete. */
    record Waiting<S>(S state) {}

    private final WriteBehindEngine.Sink<K, M> sink;
    private final String name;
    private final String component;
    private final WriteBehindEngine.Words words;
    private final Threads threads;
    private final long keepAliveNanos;
    private final Ticker ticker;
    private final Logger log;
    private final ThrottledLog failureLog;
    /** The spool, or null; appended to, emptied and closed under {@link #lock}. */
    private final StateJournal<K, M> journal;

    /** Guards every field below; {@link #changed} is signalled whenever any of them changes. */
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();

    /** The latest state of every id not yet in the sink (in flight, queued or failed). */
    private final Map<K, Pending<K, M>> pending = new LinkedHashMap<>();
    /** Entries whose latest state waits for the writer, in the order they first waited. */
    private final ArrayDeque<Pending<K, M>> queue = new ArrayDeque<>();
    /** The entries whose states the writer is handing to the sink now, in one call; empty between calls. */
    private final List<Pending<K, M>> inFlight = new ArrayList<>();
    /** The most entries one sink call takes: 1 writes one id at a time. */
    private final int maxBatch;
    /** Writes the sink failed since it last took one: how long it has kept failing. */
    private long failingWrites;
    /** Handovers so far: the sequence number of the last one. */
    private long handovers;
    private Thread writer;
    private State state = State.OPEN;
    /** The ids written after a shutdown began, for its outcome. */
    private final List<K> writtenWhileDraining = new ArrayList<>();
    private long saves;
    private long deletes;
    private long coalesced;
    private long sinkSaves;
    private long sinkDeletes;
    private long sinkFailures;
    private long rejected;

    /** One id's state that is not in the sink yet. Guarded by the queue's lock. */
    private static final class Pending<K, M> {
        final K id;
        /** The latest state handed over, or null for a delete. */
        List<M> state;
        /**
         * The sequence number of the oldest handover of this id that no write has taken yet (the
         * one {@link #state} replaced first); 0 when every handover of this id is written or being
         * written. A flush waits for every entry whose oldest is at most its barrier.
         */
        long oldest;
        /** When the handover {@link #oldest} names came, on the ticker; meaningful while it is not 0. */
        long oldestSince;
        /** Whether the entry is in the writer's queue. Not queued with {@code oldest != 0}: it failed. */
        boolean queued;
        /** Whether the writer is handing this entry's state to the sink now. */
        boolean flying;
        /** While flying: the oldest handover the write covers (see {@link #oldest}), and when it came. */
        long flightOldest;
        long flightSince;
        /** What the sink threw on the last write of this id, or null. */
        Throwable failure;

        Pending(K id) {
            this.id = id;
        }
    }

    /**
     * @param sink where the states go
     * @param name the front's name, the key of its throttled failure log
     * @param component the front as logs and errors name it
     * @param words how logs and errors word things
     * @param settings the writer's threads, keep-alive (real clock) and the ticker of flush's and
     *     shutdown's deadlines
     * @param log the front's logger
     * @param journal the spool every handover is appended to before it is taken; null for none
     * @param maxBatch the most entries one sink call takes; 1 for one at a time
     */
    WriteBehindQueue(WriteBehindEngine.Sink<K, M> sink, String name, String component, WriteBehindEngine.Words words,
            WriteBehindBuilder<?> settings, Logger log, StateJournal<K, M> journal, int maxBatch) {
        this.journal = journal;
        this.maxBatch = maxBatch;
        this.sink = sink;
        this.name = name;
        this.component = component;
        this.words = words;
        this.threads = Threads.named(words.writerThread() + name).orUser(settings.threadFactory().orElse(null));
        this.keepAliveNanos = Checks.saturatedNanos(settings.writerKeepAlive());
        this.ticker = settings.ticker();
        this.log = log;
        this.failureLog = new ThrottledLog(log);
    }

    /**
     * The state of {@code id} not yet in the sink, or null if the sink has its latest state. An
     * entry leaves only after the sink returned from writing it, so after a null the sink may be
     * read.
     */
    Waiting<List<M>> waiting(K id) {
        lock.lock();
        try {
            Pending<K, M> p = pending.get(id);
            return p == null ? null : new Waiting<>(p.state);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Every id whose latest state is not in the sink yet, with that state (null for a delete), in
     * the order they first waited. Taken before the sink is read, it is what the sink's answer
     * misses: an entry leaves only after the sink has it.
     */
    Map<K, List<M>> waitingStates() {
        lock.lock();
        try {
            Map<K, List<M>> copy = new LinkedHashMap<>();
            for (Pending<K, M> p : pending.values()) {
                copy.put(p.id, p.state);
            }
            return copy;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Makes each entry's state (null: a delete) the latest state of its id, all or none.
     *
     * @param entries the ids and their new states, in the order they were handed over
     * @param operation the caller's method, for the error
     * @throws StoppedException after a shutdown began; nothing was taken
     * @throws RejectedExecutionException if no writer thread could be started; nothing was taken
     */
    void handOver(List<StateJournal.Entry<K, M>> entries, String operation) {
        lock.lock();
        try {
            if (this.state != State.OPEN) {
                rejected += entries.size();
                throw new StoppedException(component, operation + " of " + describe(entries));
            }
            if (writer == null) {
                Throwable refused = startWriter();
                if (refused != null) {
                    rejected += entries.size();
                    throw new RejectedExecutionException(component + ": no writer thread could be started; "
                            + operation + " of " + describe(entries) + " was not taken", refused);
                }
            }
            if (journal != null) {
                try {
                    journal.append(entries, this::liveStates); // before it is taken: it survives a crash
                } catch (RuntimeException e) {
                    rejected += entries.size();
                    throw e;
                }
            }
            for (StateJournal.Entry<K, M> e : entries) {
                take(e.id(), e.state());
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** {@return "memory id c1", or "3 document ids [a, b, c]", for errors} */
    private String describe(List<StateJournal.Entry<K, M>> entries) {
        if (entries.size() == 1) {
            return words.id() + " " + entries.get(0).id();
        }
        List<K> ids = new ArrayList<>(entries.size());
        entries.forEach(e -> ids.add(e.id()));
        return entries.size() + " " + words.id() + "s " + ids;
    }

    /**
     * Queues what an earlier run left in the spool, before anything can read: each id's last state
     * (or deletion) waits as if just handed over, and is written like any other.
     */
    void replay(List<StateJournal.Entry<K, M>> entries) {
        if (entries.isEmpty()) {
            return;
        }
        lock.lock();
        try {
            for (StateJournal.Entry<K, M> e : entries) {
                take(e.id(), e.state());
            }
            if (writer == null) {
                Throwable refused = startWriter();
                if (refused != null) {
                    log.warn("{}: no writer thread could be started for the {} states replayed from the spool; "
                            + "they are written with the next {}, a flush or the shutdown", component, entries.size(),
                            words.save(), refused);
                }
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** What still waits, as the spool keeps it: each pending id's latest state. Under the lock. */
    private List<StateJournal.Entry<K, M>> liveStates() {
        List<StateJournal.Entry<K, M>> live = new ArrayList<>(pending.size());
        for (Pending<K, M> p : pending.values()) {
            live.add(new StateJournal.Entry<>(p.id, p.state));
        }
        return live;
    }

    /** Takes one handover into the queue. Under the lock. */
    private void take(K id, List<M> state) {
        long seq = ++handovers;
        if (state == null) {
            deletes++;
        } else {
            saves++;
        }
        Pending<K, M> p = pending.computeIfAbsent(id, Pending::new);
        if (p.oldest != 0) {
            coalesced++; // the state it replaces was never written, and never will be
        } else {
            p.oldest = seq;
            p.oldestSince = ticker.read();
        }
        p.state = state;
        p.failure = null;
        if (!p.queued) {
            p.queued = true;
            queue.addLast(p);
        }
    }

    /**
     * Waits until every handover before this call is in the sink, or the timeout passes; failed
     * states are queued again first. {@return whether everything handed over before the call is
     * in the sink; false on timeout, a refusal, a closed engine or an interrupt (flag set again)}
     */
    boolean flush(Duration timeout) {
        Deadline deadline = Deadline.after(ticker, timeout);
        lock.lock();
        try {
            long barrier = handovers;
            if (state != State.CLOSED) {
                retryFailed();
            }
            while (true) {
                Barrier b = barrier(barrier);
                if (b == Barrier.MET) {
                    return true;
                }
                if (b == Barrier.FAILED || state == State.CLOSED || deadline.expired()) {
                    return false;
                }
                if (writer == null && !queue.isEmpty() && startWriter() != null) {
                    return false;
                }
                changed.awaitNanos(deadline.sliceNanos());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            lock.unlock();
        }
    }

    private enum Barrier { MET, WAITING, FAILED }

    /** Where the handovers up to {@code barrier} stand. Under the lock. */
    private Barrier barrier(long barrier) {
        Barrier result = Barrier.MET;
        for (Pending<K, M> p : inFlight) {
            if (p.flightOldest <= barrier) {
                result = Barrier.WAITING;
            }
        }
        for (Pending<K, M> p : pending.values()) {
            if (p.oldest != 0 && p.oldest <= barrier) {
                if (!p.queued) {
                    return Barrier.FAILED; // refused, and not queued again: nothing will write it now
                }
                result = Barrier.WAITING;
            }
        }
        return result;
    }

    /** Queues every entry whose write failed again. Under the lock. */
    private void retryFailed() {
        for (Pending<K, M> p : pending.values()) {
            if (p.oldest != 0 && !p.queued) {
                p.queued = true;
                queue.addLast(p);
            }
        }
        if (!queue.isEmpty()) {
            changed.signalAll();
        }
    }

    /**
     * Refuses later handovers, writes what waits (failed states included) until everything is
     * written or {@code budget} has passed, and reports by id; at the deadline the writer takes
     * nothing more, and a write in flight goes on, detached. Later calls wait for the same drain
     * within their own budget; a call after the end reports at once.
     */
    Outcome<K> stop(Duration budget) {
        Deadline deadline = Deadline.after(ticker, budget);
        Outcome<K> outcome;
        boolean interrupted = false;
        lock.lock();
        try {
            if (state == State.OPEN) {
                state = State.DRAINING;
                retryFailed();
            }
            while (state != State.CLOSED && (!inFlight.isEmpty() || !queue.isEmpty()) && !deadline.expired()) {
                if (writer == null && !queue.isEmpty() && startWriter() != null) {
                    break; // no thread to write with: what waits is abandoned
                }
                try {
                    changed.awaitNanos(deadline.sliceNanos());
                } catch (InterruptedException e) {
                    interrupted = true;
                    break;
                }
            }
            boolean closedHere = state != State.CLOSED;
            state = State.CLOSED;
            changed.signalAll();
            outcome = outcome(deadline, closedHere);
            if (closedHere && journal != null) {
                if (outcome.report().complete()) {
                    clearJournal();
                } // else it keeps what was not written, for the next start
                journal.close();
            }
        } finally {
            lock.unlock();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return outcome;
    }

    /** Empties the spool, everything in it being in the sink; a failure is logged (it only replays more). Under the lock. */
    private void clearJournal() {
        try {
            journal.clear();
        } catch (RuntimeException e) {
            log.warn("{}: could not empty its spool ({}); what it holds is written again at the next start", component,
                    e.toString());
        }
    }

    /** The outcome of a shutdown ending now. Under the lock. */
    private Outcome<K> outcome(Deadline deadline, boolean closedHere) {
        List<K> abandoned = new ArrayList<>(queue.size());
        for (Pending<K, M> p : queue) {
            abandoned.add(p.id);
        }
        Map<K, Throwable> failed = new LinkedHashMap<>();
        for (Pending<K, M> p : pending.values()) {
            if (p.oldest != 0 && !p.queued) {
                failed.put(p.id, p.failure);
            }
        }
        List<K> stillRunning = new ArrayList<>(inFlight.size());
        for (Pending<K, M> p : inFlight) {
            if (p.oldest == 0) { // nothing newer waits for this id: the write in flight decides it
                stillRunning.add(p.id);
            }
        }
        return new Outcome<>(new WriteBehindReport<>(writtenWhileDraining, failed, abandoned, stillRunning,
                figuresNow(), deadline.budget(), deadline.elapsed()), closedHere);
    }

    /** {@return the figures now: cheap, one short lock} */
    WriteBehindFigures figures() {
        lock.lock();
        try {
            return figuresNow();
        } finally {
            lock.unlock();
        }
    }

    private WriteBehindFigures figuresNow() {
        long oldestSince = Long.MAX_VALUE;
        for (Pending<K, M> p : pending.values()) { // bounded by conversations, not messages
            // the in-flight write's handovers are older than any that came while it runs
            long since = p.flying ? p.flightSince : p.oldest != 0 ? p.oldestSince : Long.MAX_VALUE;
            oldestSince = Math.min(oldestSince, since);
        }
        Duration oldestAge = oldestSince == Long.MAX_VALUE ? Duration.ZERO
                : Duration.ofNanos(Math.max(0, ticker.read() - oldestSince));
        return new WriteBehindFigures(saves, deletes, coalesced, sinkSaves, sinkDeletes, sinkFailures, rejected,
                pending.size(), oldestAge, failingWrites);
    }

    /** Starts the writer; under the lock. {@return null, or why no thread could be started} */
    private Throwable startWriter() {
        Throwable[] refused = new Throwable[1];
        writer = threads.start(this::runWriter, t -> refused[0] = t);
        if (writer == null) {
            log.warn("{}: no writer thread could be started", component, refused[0]);
        }
        return writer == null ? refused[0] : null;
    }

    /**
     * The writer thread's body: writes the queue's entries, in the order they first waited, up to
     * {@link #maxBatch} saves or deletes a call, until idle or closed.
     */
    private void runWriter() {
        lock.lock();
        try {
            while (true) {
                List<Pending<K, M>> batch = state == State.CLOSED ? List.of() : nextBatch();
                if (!batch.isEmpty()) {
                    write(batch);
                } else if (!awaitWork()) {
                    return;
                }
            }
        } finally {
            if (writer == Thread.currentThread()) {
                writer = null; // under the lock: the next handover sees it and starts another
            }
            changed.signalAll();
            lock.unlock();
        }
    }

    /**
     * Waits, idle, for the queue to fill, at most the keep-alive (on the real clock). Under the
     * lock. {@return whether there is work; false: the writer retires}
     */
    private boolean awaitWork() {
        long end = System.nanoTime() + keepAliveNanos;
        while (queue.isEmpty() && state != State.CLOSED) {
            long left = end - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            try {
                changed.awaitNanos(left);
            } catch (InterruptedException e) {
                // Nobody should interrupt memlife's writer; the flag is cleared, the wait goes on.
            }
        }
        return state != State.CLOSED;
    }

    /** The queue's first entry and those after it of the same kind (saves or deletes), up to {@link #maxBatch}. Under the lock. */
    private List<Pending<K, M>> nextBatch() {
        Pending<K, M> first = queue.pollFirst();
        if (first == null) {
            return List.of();
        }
        if (maxBatch == 1) {
            return List.of(first);
        }
        List<Pending<K, M>> batch = new ArrayList<>();
        batch.add(first);
        boolean deletes = first.state == null;
        while (batch.size() < maxBatch && !queue.isEmpty() && (queue.peekFirst().state == null) == deletes) {
            batch.add(queue.pollFirst());
        }
        return batch;
    }

    /**
     * Writes the latest states of {@code batch} (all saves or all deletes) in one sink call; called
     * and returns under the lock, calls the sink without it.
     */
    private void write(List<Pending<K, M>> batch) {
        boolean deletes = batch.get(0).state == null;
        Map<K, List<M>> states = new LinkedHashMap<>();
        for (Pending<K, M> p : batch) {
            states.put(p.id, p.state);
            p.queued = false;
            p.flying = true;
            p.flightOldest = p.oldest;
            p.flightSince = p.oldestSince;
            p.oldest = 0;
            inFlight.add(p);
        }
        Throwable failure = null;
        lock.unlock();
        try {
            if (deletes) {
                sink.deleteAll(List.copyOf(states.keySet()));
            } else {
                sink.saveAll(states);
            }
        } catch (Throwable t) { // whatever the sink throws is its failure of these writes, Errors too
            failure = t;
        } finally {
            Thread.interrupted(); // an interrupt the sink left is not the writer's
            lock.lock();
        }
        inFlight.clear();
        String what = (deletes ? "delete" : words.save()) + " of " + (batch.size() == 1
                ? words.id() + " " + batch.get(0).id : batch.size() + " " + words.id() + "s " + states.keySet());
        if (failure == null) {
            failingWrites = 0;
            for (Pending<K, M> p : batch) {
                written(p, deletes);
            }
            if (journal != null && pending.isEmpty() && state != State.CLOSED) {
                clearJournal(); // every state handed over is in the sink
            }
            if (state == State.CLOSED) {
                log.info("{}: the {} still running at the shutdown deadline ended: written", component, what);
            }
        } else {
            sinkFailures += batch.size();
            failingWrites += batch.size();
            for (Pending<K, M> p : batch) {
                failed(p, failure);
            }
            failureLog.warn(name, component + ": the " + words.sink() + " failed the " + what + " (" + failure
                    + "); the state is kept, readable, and written again with that id's next " + words.save()
                    + ", a flush or the shutdown", failure);
        }
        changed.signalAll();
    }

    /** {@code p}'s write returned. Under the lock. */
    private void written(Pending<K, M> p, boolean delete) {
        p.flying = false;
        if (delete) {
            sinkDeletes++;
        } else {
            sinkSaves++;
        }
        if (p.oldest == 0) { // nothing newer was handed over meanwhile: the sink has the latest
            pending.remove(p.id);
            if (state != State.OPEN) {
                writtenWhileDraining.add(p.id);
            }
        }
    }

    /** {@code p}'s write threw {@code failure}. Under the lock. */
    private void failed(Pending<K, M> p, Throwable failure) {
        p.flying = false;
        p.failure = failure;
        // The handovers this write covered are unwritten again. If nothing newer came, the failed
        // state is the latest: kept, not queued, written again with the next handover, a flush or
        // the shutdown. If something newer came, it is queued and covers them.
        p.oldest = p.oldest == 0 ? p.flightOldest : Math.min(p.oldest, p.flightOldest);
        p.oldestSince = p.flightSince; // the failed write's handovers are the oldest unwritten ones
    }
}
