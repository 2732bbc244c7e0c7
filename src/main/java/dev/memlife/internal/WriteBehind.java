package dev.memlife.internal;

import static java.util.Objects.requireNonNull;

import dev.memlife.StoppedException;
import dev.memlife.Ticker;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;

/**
 * The write-behind engine of memlife's chat memory decorators ({@code
 * dev.memlife.langchain4j.WriteBehindChatMemoryStore}, {@code
 * dev.memlife.springai.WriteBehindChatMemoryRepository}): the latest state of each conversation id,
 * handed over by callers and written to a {@link Sink} by one writer thread. Not part of the API:
 * the package is not exported; each decorator is a thin adapter that translates its framework's
 * calls, checks their arguments and turns {@link Outcome} and {@link Counts} into its own public
 * report and figures. Every behaviour below is documented, from the user's side, on those
 * decorators.
 *
 * <ul>
 *   <li>At most one state per id waits: a handover replaces the state not yet written
 *       (coalesced).
 *   <li>{@link #waiting} returns the state not yet in the sink, so the adapter reads its own writes.
 *   <li>The writer writes one id at a time, its latest state, so the sink never sees an older state
 *       after a newer one; a delete ({@code null} state) is the sink's delete, after any save of
 *       that id in flight.
 *   <li>A write the sink fails is counted, logged (throttled), kept and written again with that
 *       id's next handover, a {@link #flush} or the {@link #stop}.
 *   <li>The writer starts with the first handover and retires after the keep-alive idle.
 * </ul>
 *
 * <p>Thread-safe.
 *
 * @param <S> the state of one conversation (its messages); {@code null} stands for a delete
 */
public final class WriteBehind<S> {

    /** Where the states go: the store or repository behind the decorator. */
    public interface Sink<S> {
        /** Writes {@code state} as the whole state of {@code id}. */
        void save(Object id, S state);

        /** Deletes {@code id}. */
        void delete(Object id);
    }

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
     * What a shutdown did, by id: every id still waiting when it began is in exactly one of {@code
     * written}, {@code failed}, {@code abandoned} or {@code stillRunning}.
     *
     * @param written ids written after the shutdown began, in the order written
     * @param failed ids whose latest state the sink refused, with what it threw last
     * @param abandoned ids the deadline cut off before the writer started them
     * @param stillRunning the id the writer was writing at the deadline, if any
     * @param counts the counters when the shutdown ended
     * @param budget the shutdown's budget
     * @param elapsed how long it took
     * @param closedHere whether this call ended the drain (the call that logs an incomplete one)
     */
    public record Outcome(List<Object> written, Map<Object, Throwable> failed, List<Object> abandoned,
            List<Object> stillRunning, Counts counts, Duration budget, Duration elapsed, boolean closedHere) {

        /** {@return whether nothing failed, was abandoned or is still running} */
        public boolean complete() {
            return failed.isEmpty() && abandoned.isEmpty() && stillRunning.isEmpty();
        }
    }

    /**
     * What a drain left unwritten, as a report's {@code unfinished()}: the failed ids, then the
     * abandoned, then the one still running.
     *
     * @param failed the failed ids (the map's keys)
     * @param abandoned the abandoned ids
     * @param stillRunning the id still running, if any
     * @return their ids as strings, in that order
     */
    public static List<String> unfinished(Map<?, ?> failed, List<?> abandoned, List<?> stillRunning) {
        List<String> ids = new ArrayList<>();
        failed.keySet().forEach(id -> ids.add(String.valueOf(id)));
        abandoned.forEach(id -> ids.add(String.valueOf(id)));
        stillRunning.forEach(id -> ids.add(String.valueOf(id)));
        return List.copyOf(ids);
    }

    /**
     * The counters; see the decorators' public figures for their meaning.
     *
     * @param saves save handovers taken
     * @param deletes delete handovers taken
     * @param coalesced handovers replaced before any write took them
     * @param sinkSaves saves the sink returned from
     * @param sinkDeletes deletes the sink returned from
     * @param sinkFailures sink calls that threw
     * @param rejected handovers refused
     * @param pending ids whose latest state is not in the sink yet
     */
    public record Counts(long saves, long deletes, long coalesced, long sinkSaves, long sinkDeletes,
            long sinkFailures, long rejected, int pending) {}

    /**
     * How logs and errors word things for one decorator.
     *
     * @param component the decorator, e.g. "write-behind chat memory store 'x'"
     * @param id an id, e.g. "memory id"
     * @param sink what the sink is, e.g. "store"
     * @param save a save, e.g. "update"
     */
    public record Words(String component, String id, String sink, String save) {
        public Words {
            requireNonNull(component, "component");
            requireNonNull(id, "id");
            requireNonNull(sink, "sink");
            requireNonNull(save, "save");
        }
    }

    /** The state waiting for an id: {@link #state} is null for a delete. */
    public record Waiting<S>(S state) {}

    private final Sink<S> sink;
    private final String component;
    private final String idNoun;
    private final Words words;
    private final long keepAliveNanos;
    private final Ticker ticker;
    private final Threads threads;
    private final Logger log;
    private final ThrottledLog failureLog;
    private final String name;

    /** Guards every field below; {@link #changed} is signalled whenever any of them changes. */
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();

    /** The latest state of every id not yet in the sink (in flight, queued or failed). */
    private final Map<Object, Pending<S>> pending = new LinkedHashMap<>();
    /** Entries whose latest state waits for the writer, in the order they first waited. */
    private final ArrayDeque<Pending<S>> queue = new ArrayDeque<>();
    /** The entry whose state the writer is handing to the sink now, or null. */
    private Pending<S> inFlight;
    /** The oldest handover the in-flight write covers (see {@link Pending#oldest}). */
    private long inFlightOldest;
    /** Handovers so far: the sequence number of the last one. */
    private long handovers;
    private Thread writer;
    private State state = State.OPEN;
    /** The ids written after a shutdown began, for its outcome. */
    private final List<Object> writtenWhileDraining = new ArrayList<>();
    private long saves;
    private long deletes;
    private long coalesced;
    private long sinkSaves;
    private long sinkDeletes;
    private long sinkFailures;
    private long rejected;

    /** One id's state that is not in the sink yet. Guarded by the engine's lock. */
    private static final class Pending<S> {
        final Object id;
        /** The latest state handed over, or null for a delete. */
        S state;
        /**
         * The sequence number of the oldest handover of this id that no write has taken yet (the
         * one {@link #state} replaced first); 0 when every handover of this id is written or being
         * written. A flush waits for every entry whose oldest is at most its barrier.
         */
        long oldest;
        /** Whether the entry is in the writer's queue. Not queued with {@code oldest != 0}: it failed. */
        boolean queued;
        /** What the sink threw on the last write of this id, or null. */
        Throwable failure;

        Pending(Object id) {
            this.id = id;
        }
    }

    /**
     * @param sink where the states go
     * @param name the decorator's name, the key of its throttled failure log
     * @param words how logs and errors word things
     * @param threads the writer thread's policy and name
     * @param keepAlive how long the writer waits idle before it retires (real clock)
     * @param ticker the time source of flush's and shutdown's deadlines
     * @param log the decorator's logger
     */
    public WriteBehind(Sink<S> sink, String name, Words words, Threads threads,
            Duration keepAlive, Ticker ticker, Logger log) {
        this.sink = requireNonNull(sink, "sink");
        this.name = requireNonNull(name, "name");
        this.words = requireNonNull(words, "words");
        this.component = words.component();
        this.idNoun = words.id();
        this.threads = requireNonNull(threads, "threads");
        this.keepAliveNanos = Checks.saturatedNanos(keepAlive);
        this.ticker = requireNonNull(ticker, "ticker");
        this.log = requireNonNull(log, "log");
        this.failureLog = new ThrottledLog(log);
    }

    /** {@return the threads of a decorator's writer: memlife's daemon thread {@code name}, or the user's factory's} */
    public static Threads writerThreads(String name, ThreadFactory user) {
        return Threads.named(name).orUser(user);
    }

    /**
     * The state of {@code id} not yet in the sink, or null if the sink has its latest state. An
     * entry leaves only after the sink returned from writing it, so after a null the sink may be
     * read.
     */
    public Waiting<S> waiting(Object id) {
        lock.lock();
        try {
            Pending<S> p = pending.get(id);
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
    public Map<Object, S> waitingStates() {
        lock.lock();
        try {
            Map<Object, S> copy = new LinkedHashMap<>();
            for (Pending<S> p : pending.values()) {
                copy.put(p.id, p.state);
            }
            return copy;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Makes {@code state} (null: a delete) the latest state of {@code id}.
     *
     * @param operation the caller's method, for the error
     * @throws StoppedException after a shutdown began; nothing was taken
     * @throws RejectedExecutionException if no writer thread could be started; nothing was taken
     */
    public void handOver(Object id, S state, String operation) {
        lock.lock();
        try {
            if (this.state != State.OPEN) {
                rejected++;
                throw new StoppedException(component, operation + " of " + idNoun + " " + id);
            }
            if (writer == null) {
                Throwable refused = startWriter();
                if (refused != null) {
                    rejected++;
                    throw new RejectedExecutionException(component + ": no writer thread could be started; "
                            + operation + " of " + idNoun + " " + id + " was not taken", refused);
                }
            }
            long seq = ++handovers;
            if (state == null) {
                deletes++;
            } else {
                saves++;
            }
            Pending<S> p = pending.computeIfAbsent(id, Pending::new);
            if (p.oldest != 0) {
                coalesced++; // the state it replaces was never written, and never will be
            } else {
                p.oldest = seq;
            }
            p.state = state;
            p.failure = null;
            if (!p.queued) {
                p.queued = true;
                queue.addLast(p);
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until every handover before this call is in the sink, or the timeout passes; failed
     * states are queued again first. {@return whether everything handed over before the call is
     * in the sink; false on timeout, a refusal, a closed engine or an interrupt (flag set again)}
     */
    public boolean flush(Duration timeout) {
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
        Barrier result = inFlight != null && inFlightOldest <= barrier ? Barrier.WAITING : Barrier.MET;
        for (Pending<S> p : pending.values()) {
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
        for (Pending<S> p : pending.values()) {
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
    public Outcome stop(Duration budget) {
        Deadline deadline = Deadline.after(ticker, budget);
        Outcome outcome;
        boolean interrupted = false;
        lock.lock();
        try {
            if (state == State.OPEN) {
                state = State.DRAINING;
                retryFailed();
            }
            while (state != State.CLOSED && (inFlight != null || !queue.isEmpty()) && !deadline.expired()) {
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
        } finally {
            lock.unlock();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return outcome;
    }

    /** The outcome of a shutdown ending now. Under the lock. */
    private Outcome outcome(Deadline deadline, boolean closedHere) {
        List<Object> abandoned = new ArrayList<>(queue.size());
        for (Pending<S> p : queue) {
            abandoned.add(p.id);
        }
        Map<Object, Throwable> failed = new LinkedHashMap<>();
        for (Pending<S> p : pending.values()) {
            if (p.oldest != 0 && !p.queued) {
                failed.put(p.id, p.failure);
            }
        }
        List<Object> stillRunning = inFlight != null && inFlight.oldest == 0 ? List.of(inFlight.id) : List.of();
        return new Outcome(List.copyOf(writtenWhileDraining), failed, abandoned, stillRunning, countsNow(),
                deadline.budget(), deadline.elapsed(), closedHere);
    }

    /** {@return the counters now: cheap, one short lock} */
    public Counts counts() {
        lock.lock();
        try {
            return countsNow();
        } finally {
            lock.unlock();
        }
    }

    private Counts countsNow() {
        return new Counts(saves, deletes, coalesced, sinkSaves, sinkDeletes, sinkFailures, rejected, pending.size());
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

    /** The writer thread's body: writes the queue's entries, one at a time, until idle or closed. */
    private void runWriter() {
        lock.lock();
        try {
            while (true) {
                Pending<S> p = state == State.CLOSED ? null : queue.pollFirst();
                if (p != null) {
                    write(p);
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

    /** Writes {@code p}'s latest state; called and returns under the lock, calls the sink without it. */
    private void write(Pending<S> p) {
        S value = p.state;
        p.queued = false;
        inFlight = p;
        inFlightOldest = p.oldest;
        p.oldest = 0;
        Throwable failure = null;
        lock.unlock();
        try {
            if (value == null) {
                sink.delete(p.id);
            } else {
                sink.save(p.id, value);
            }
        } catch (Throwable t) { // whatever the sink throws is its failure of this write, Errors too
            failure = t;
        } finally {
            Thread.interrupted(); // an interrupt the sink left is not the writer's
            lock.lock();
        }
        inFlight = null;
        String what = (value == null ? "delete" : words.save()) + " of " + idNoun + " " + p.id;
        if (failure == null) {
            if (value == null) {
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
            if (state == State.CLOSED) {
                log.info("{}: the {} still running at the shutdown deadline ended: written", component, what);
            }
        } else {
            sinkFailures++;
            p.failure = failure;
            // The handovers this write covered are unwritten again. If nothing newer came, the
            // failed state is the latest: kept, not queued, written again with the next handover,
            // a flush or the shutdown. If something newer came, it is queued and covers them.
            p.oldest = p.oldest == 0 ? inFlightOldest : Math.min(p.oldest, inFlightOldest);
            failureLog.warn(name, component + ": the " + words.sink() + " failed the " + what + " (" + failure
                    + "); the state is kept, readable, and written again with that id's next " + words.save()
                    + ", a flush or the shutdown", failure);
        }
        changed.signalAll();
    }
}
