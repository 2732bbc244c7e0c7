package dev.memlife.langchain4j;

import static java.util.Objects.requireNonNull;

import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.store.memory.chat.ChatMemoryStore;
import dev.memlife.StoppedException;
import dev.memlife.Ticker;
import dev.memlife.internal.Checks;
import dev.memlife.internal.Deadline;
import dev.memlife.internal.ThrottledLog;
import dev.memlife.internal.Threads;
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
import org.slf4j.LoggerFactory;

/**
 * A write-behind {@link ChatMemoryStore} over any other: {@link #updateMessages} and {@link
 * #deleteMessages} return at once, and one writer thread hands the latest state of each memory id
 * to the store behind it.
 *
 * <p>LangChain4j's chat memories ({@code MessageWindowChatMemory}, {@code TokenWindowChatMemory})
 * write the whole conversation to their store on every message, on the caller's thread. Over a
 * slow store that is a database round trip per message on the request path, and nothing drains at
 * shutdown. Put this store between them:
 *
 * <pre>{@code
 * WriteBehindChatMemoryStore store = WriteBehindChatMemoryStore.over(myStore);
 * ChatMemory memory = MessageWindowChatMemory.builder().id(userId).maxMessages(20)
 *         .chatMemoryStore(store).build();
 * memory.add(UserMessage.from("hi"));          // returns without waiting for myStore
 * ...
 * WriteBehindReport report = store.shutdown(Duration.ofSeconds(5));   // at shutdown: drains, reports
 * }</pre>
 *
 * <ul>
 *   <li><b>Coalesced.</b> At most one state per memory id waits: a new update replaces the one not
 *       yet written, so ten updates of one conversation while the store is busy cost one write, of
 *       the last. The memory this store holds is bounded by the conversations written to recently,
 *       never by the number of messages.
 *   <li><b>Read-your-writes.</b> {@link #getMessages} returns the state waiting to be written if
 *       there is one (an empty list if a delete waits), and reads the store otherwise.
 *   <li><b>Ordered per memory id.</b> The writer writes one memory id at a time, always its latest
 *       state, so the store never sees an older state after a newer one. A delete is a real {@link
 *       ChatMemoryStore#deleteMessages} on the store, not a marker: it replaces the states waiting
 *       before it, and reaches the store after any save of that id already being written.
 *   <li><b>Failures are kept, counted and reported.</b> Whatever the store throws is its failure of
 *       that write: it is logged (once per burst) and counted ({@link #figures()}), the writer goes
 *       on with the other memory ids, and the state stays here, read by {@link #getMessages}, so a
 *       chat memory's next update builds on it. It is written again with that id's next update or
 *       delete, by {@link #flush}, and by {@link #shutdown}; one the store still refuses at
 *       shutdown is in the report's {@link WriteBehindReport#failedMemoryIds()}. Nothing is dropped
 *       silently.
 *   <li><b>Bounded at shutdown.</b> {@link #flush(Duration)} is a barrier for every update handed
 *       over before it; {@link #shutdown(Duration)} (and {@link #close()}) refuses later updates,
 *       writes what waits within its budget and says, by memory id, what was written and what was
 *       not. A store that hangs does not hold it past its budget.
 * </ul>
 *
 * <p><b>Threads.</b> Thread-safe. The writer is a daemon thread named {@code
 * memlife-chat-writer-<name>}, started by the first update and ended after it has been idle for
 * {@link Builder#writerKeepAlive} (1 s by default), so an idle store holds no thread. It writes to
 * the store one call at a time. {@link #getMessages} of a memory id with nothing waiting reads the
 * store on the caller's thread, possibly while the writer writes another memory id, so the store
 * behind must allow that, as LangChain4j's stores do. A store that hangs holds the writer, and the
 * updates of other memory ids wait behind it. The store behind is the application's: this one
 * never closes it.
 */
public final class WriteBehindChatMemoryStore implements ChatMemoryStore, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(WriteBehindChatMemoryStore.class);

    /** The lifecycle; moves only forward, under {@link #lock}. */
    private enum State {
        /** Takes updates. */
        OPEN,
        /** A shutdown is draining: updates are refused, the writer writes what waits. */
        DRAINING,
        /** A shutdown's deadline passed or everything was written: the writer takes nothing more. */
        CLOSED
    }

    private final ChatMemoryStore store;
    private final String name;
    private final Duration closeTimeout;
    private final long keepAliveNanos;
    private final Ticker ticker;
    private final Threads threads;
    private final ThrottledLog failureLog = new ThrottledLog(LOG);

    /** Guards every field below; {@link #changed} is signalled whenever any of them changes. */
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();

    /** The latest state of every memory id not yet in the store (in flight, queued or failed). */
    private final Map<Object, Pending> pending = new LinkedHashMap<>();
    /** Entries whose latest state waits for the writer, in the order they first waited. */
    private final ArrayDeque<Pending> queue = new ArrayDeque<>();
    /** The entry whose state the writer is handing to the store now, or null. */
    private Pending inFlight;
    /** The oldest handover the in-flight write covers (see {@link Pending#oldest}). */
    private long inFlightOldest;
    /** Handovers so far: the sequence number of the last one. */
    private long handovers;
    private Thread writer;
    private State state = State.OPEN;
    /** The memory ids written after a shutdown began, for its report. */
    private final List<Object> writtenWhileDraining = new ArrayList<>();
    private long updates;
    private long deletes;
    private long coalesced;
    private long storeUpdates;
    private long storeDeletes;
    private long storeFailures;
    private long rejected;

    /**
     * One memory id's state that is not in the store yet. Guarded by the store's lock.
     */
    private static final class Pending {
        final Object memoryId;
        /** The latest state handed over: the messages, or null for a delete. */
        List<ChatMessage> messages;
        /**
         * The sequence number of the oldest handover of this id that no write has taken yet (the
         * one {@link #messages} replaced first); 0 when every handover of this id is written or
         * being written. A flush waits for every entry whose oldest is at most its barrier.
         */
        long oldest;
        /** Whether the entry is in the writer's queue. Not queued with {@code oldest != 0}: it failed. */
        boolean queued;
        /** What the store threw on the last write of this id, or null. */
        Throwable failure;

        Pending(Object memoryId) {
            this.memoryId = memoryId;
        }
    }

    private WriteBehindChatMemoryStore(Builder b) {
        this.store = b.store;
        this.name = b.name;
        this.closeTimeout = b.closeTimeout;
        this.keepAliveNanos = Checks.saturatedNanos(b.writerKeepAlive);
        this.ticker = b.ticker;
        this.threads = Threads.named("memlife-chat-writer-" + b.name).orUser(b.threadFactory);
    }

    /**
     * A write-behind store over {@code store}, with every default of {@link Builder}.
     *
     * @param store the store to write to; the application keeps owning it
     * @return the write-behind store
     */
    public static WriteBehindChatMemoryStore over(ChatMemoryStore store) {
        return builder(store).build();
    }

    /**
     * A builder for a write-behind store over {@code store}.
     *
     * @param store the store to write to; the application keeps owning it
     * @return a builder with every default
     */
    public static Builder builder(ChatMemoryStore store) {
        return new Builder(requireNonNull(store, "store"));
    }

    /** {@return the store's name, as its thread, logs and errors use it} */
    public String name() {
        return name;
    }

    /**
     * The messages of {@code memoryId}: the state waiting to be written if there is one (an empty
     * list if a delete waits), else what the store behind returns, read on the caller's thread.
     *
     * @param memoryId the conversation's id
     * @return the messages: a copy of the waiting state, which the caller may change, or the
     *     store's own list as it returns it (an empty list for null)
     * @throws NullPointerException if {@code memoryId} is null
     */
    @Override
    public List<ChatMessage> getMessages(Object memoryId) {
        requireNonNull(memoryId, "memoryId");
        lock.lock();
        try {
            Pending p = pending.get(memoryId);
            if (p != null) {
                return p.messages == null ? new ArrayList<>() : new ArrayList<>(p.messages);
            }
        } finally {
            lock.unlock();
        }
        // Nothing waits for this id, so the store has its latest state: an entry leaves the
        // pending map only after the store returned from writing it.
        List<ChatMessage> stored = store.getMessages(memoryId);
        return stored == null ? new ArrayList<>() : stored;
    }

    /**
     * Hands {@code messages} over as the new state of {@code memoryId} and returns at once; the
     * writer writes it, or a later state of the same id that replaces it. The list is copied.
     *
     * @param memoryId the conversation's id
     * @param messages the conversation's messages, oldest first
     * @throws NullPointerException if {@code memoryId}, {@code messages} or one of the messages is
     *     null (naming which)
     * @throws StoppedException after {@link #shutdown} began; nothing was taken
     * @throws RejectedExecutionException if no writer thread could be started; nothing was taken
     */
    @Override
    public void updateMessages(Object memoryId, List<ChatMessage> messages) {
        requireNonNull(memoryId, "memoryId");
        handOver(memoryId, copyOf(messages), "updateMessages");
    }

    /**
     * Hands over the deletion of {@code memoryId} and returns at once: the writer calls the store's
     * {@link ChatMemoryStore#deleteMessages deleteMessages} after any save of that id it is already
     * writing, and the states of that id still waiting are never written. Until then {@link
     * #getMessages} returns an empty list for it.
     *
     * @param memoryId the conversation's id
     * @throws NullPointerException if {@code memoryId} is null
     * @throws StoppedException after {@link #shutdown} began; nothing was taken
     * @throws RejectedExecutionException if no writer thread could be started; nothing was taken
     */
    @Override
    public void deleteMessages(Object memoryId) {
        requireNonNull(memoryId, "memoryId");
        handOver(memoryId, null, "deleteMessages");
    }

    private static List<ChatMessage> copyOf(List<ChatMessage> messages) {
        requireNonNull(messages, "messages");
        List<ChatMessage> copy = new ArrayList<>(messages.size());
        for (ChatMessage m : messages) {
            if (m == null) {
                throw new NullPointerException("messages[" + copy.size() + "]");
            }
            copy.add(m);
        }
        return List.copyOf(copy);
    }

    /** Makes {@code messages} (null: a delete) the latest state of {@code memoryId}. */
    private void handOver(Object memoryId, List<ChatMessage> messages, String operation) {
        lock.lock();
        try {
            if (state != State.OPEN) {
                rejected++;
                throw new StoppedException(component(), operation + " of memory id " + memoryId);
            }
            if (writer == null) {
                Throwable refused = startWriter();
                if (refused != null) {
                    rejected++;
                    throw new RejectedExecutionException(component() + ": no writer thread could be started; "
                            + operation + " of memory id " + memoryId + " was not taken", refused);
                }
            }
            long seq = ++handovers;
            if (messages == null) {
                deletes++;
            } else {
                updates++;
            }
            Pending p = pending.computeIfAbsent(memoryId, Pending::new);
            if (p.oldest != 0) {
                coalesced++; // the state it replaces was never written, and never will be
            } else {
                p.oldest = seq;
            }
            p.messages = messages;
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
     * Waits until every update and delete handed over before this call is in the store, or the
     * timeout passes. States the store refused earlier are written again first. Updates handed over
     * later do not extend the wait. Idle, it returns true at once.
     *
     * @param timeout the longest wait; zero or more
     * @return true if everything handed over before the call is in the store; false if the timeout
     *     passed, the store refused one of those states again, the store was shut down with some
     *     still waiting, or the calling thread was interrupted (its flag is set again)
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is negative or too large to measure
     */
    public boolean flush(Duration timeout) {
        Deadline deadline = Deadline.after(ticker, Checks.nonNegative(timeout, "timeout"));
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
        for (Pending p : pending.values()) {
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
        for (Pending p : pending.values()) {
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
     * Shuts the store down within {@link Builder#closeTimeout} (5 s by default): {@link
     * #shutdown(Duration)}, for try-with-resources and frameworks. An incomplete shutdown is
     * logged with its report.
     */
    @Override
    public void close() {
        shutdown(closeTimeout);
    }

    /**
     * Refuses every later update and delete ({@link StoppedException}), writes what waits, states
     * the store refused earlier included, until everything is written or {@code budget} has
     * passed, and reports by memory id. At the deadline the writer takes nothing more: what it has
     * not started is abandoned (it stays readable through {@link #getMessages}, but is never
     * written), and a write it is in the middle of goes on, detached; how it ended is logged. The
     * call that ends an incomplete shutdown logs its report. Calls after the first wait for the same
     * drain within their own budget, the earliest deadline holds, and a call after the end reports
     * at once. {@link #getMessages} goes on working. The store behind is not closed: it is the
     * application's.
     *
     * @param budget the longest the call takes; zero or more
     * @return what became of every memory id that was waiting
     * @throws NullPointerException if {@code budget} is null
     * @throws IllegalArgumentException if {@code budget} is negative or too large to measure
     */
    public WriteBehindReport shutdown(Duration budget) {
        Deadline deadline = Deadline.after(ticker, Checks.nonNegative(budget, "budget"));
        WriteBehindReport report;
        boolean interrupted = false;
        boolean closedHere;
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
            closedHere = state != State.CLOSED;
            state = State.CLOSED;
            changed.signalAll();
            report = report(deadline);
        } finally {
            lock.unlock();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (closedHere && !report.complete()) {
            LOG.warn("{}: shutdown left memory ids unwritten: {}", component(), report);
        }
        return report;
    }

    /** The report of a shutdown ending now. Under the lock. */
    private WriteBehindReport report(Deadline deadline) {
        List<Object> abandoned = new ArrayList<>(queue.size());
        for (Pending p : queue) {
            abandoned.add(p.memoryId);
        }
        Map<Object, Throwable> failed = new LinkedHashMap<>();
        for (Pending p : pending.values()) {
            if (p.oldest != 0 && !p.queued) {
                failed.put(p.memoryId, p.failure);
            }
        }
        List<Object> stillRunning = inFlight != null && inFlight.oldest == 0 ? List.of(inFlight.memoryId) : List.of();
        return new WriteBehindReport(writtenWhileDraining, failed, abandoned, stillRunning, figuresNow(),
                deadline.budget(), deadline.elapsed());
    }

    /**
     * The store's figures now: cheap, one short lock.
     *
     * @return the counters and the number of memory ids waiting
     */
    public WriteBehindFigures figures() {
        lock.lock();
        try {
            return figuresNow();
        } finally {
            lock.unlock();
        }
    }

    private WriteBehindFigures figuresNow() {
        return new WriteBehindFigures(updates, deletes, coalesced, storeUpdates, storeDeletes, storeFailures, rejected,
                pending.size());
    }

    /** Starts the writer; under the lock. {@return null, or why no thread could be started} */
    private Throwable startWriter() {
        Throwable[] refused = new Throwable[1];
        writer = threads.start(this::runWriter, t -> refused[0] = t);
        if (writer == null) {
            LOG.warn("{}: no writer thread could be started", component(), refused[0]);
        }
        return writer == null ? refused[0] : null;
    }

    /** The writer thread's body: writes the queue's entries, one at a time, until idle or closed. */
    private void runWriter() {
        lock.lock();
        try {
            while (true) {
                Pending p = state == State.CLOSED ? null : queue.pollFirst();
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

    /** Writes {@code p}'s latest state; called and returns under the lock, calls the store without it. */
    private void write(Pending p) {
        List<ChatMessage> messages = p.messages;
        p.queued = false;
        inFlight = p;
        inFlightOldest = p.oldest;
        p.oldest = 0;
        Throwable failure = null;
        lock.unlock();
        try {
            if (messages == null) {
                store.deleteMessages(p.memoryId);
            } else {
                store.updateMessages(p.memoryId, messages);
            }
        } catch (Throwable t) { // whatever the store throws is its failure of this write, Errors too
            failure = t;
        } finally {
            Thread.interrupted(); // an interrupt the store left is not the writer's
            lock.lock();
        }
        inFlight = null;
        String what = (messages == null ? "delete of memory id " : "update of memory id ") + p.memoryId;
        if (failure == null) {
            if (messages == null) {
                storeDeletes++;
            } else {
                storeUpdates++;
            }
            if (p.oldest == 0) { // nothing newer was handed over meanwhile: the store has the latest
                pending.remove(p.memoryId);
                if (state != State.OPEN) {
                    writtenWhileDraining.add(p.memoryId);
                }
            }
            if (state == State.CLOSED) {
                LOG.info("{}: the {} still running at the shutdown deadline ended: written", component(), what);
            }
        } else {
            storeFailures++;
            p.failure = failure;
            // The handovers this write covered are unwritten again. If nothing newer came, the
            // failed state is the latest: kept, not queued, written again with the next handover,
            // a flush or the shutdown. If something newer came, it is queued and covers them.
            p.oldest = p.oldest == 0 ? inFlightOldest : Math.min(p.oldest, inFlightOldest);
            failureLog.warn(name, component() + ": the store failed the " + what + " (" + failure
                    + "); the state is kept, readable, and written again with that id's next update, a flush or the"
                    + " shutdown", failure);
        }
        changed.signalAll();
    }

    private String component() {
        return "write-behind chat memory store '" + name + "'";
    }

    @Override
    public String toString() {
        return "WriteBehindChatMemoryStore[" + name + " over " + store + "]";
    }

    /**
     * Builds a {@link WriteBehindChatMemoryStore}. Every setter checks its argument and names it
     * when it refuses one.
     */
    public static final class Builder {

        /** Default name: {@value}. */
        public static final String DEFAULT_NAME = "chat-memory";
        /** Default budget of {@link WriteBehindChatMemoryStore#close()}. */
        public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(5);
        /** Default time an idle writer thread waits for work before it exits. */
        public static final Duration DEFAULT_WRITER_KEEP_ALIVE = Duration.ofSeconds(1);

        private final ChatMemoryStore store;
        private String name = DEFAULT_NAME;
        private Duration closeTimeout = DEFAULT_CLOSE_TIMEOUT;
        private Duration writerKeepAlive = DEFAULT_WRITER_KEEP_ALIVE;
        private ThreadFactory threadFactory;
        private Ticker ticker = Ticker.system();

        private Builder(ChatMemoryStore store) {
            this.store = store;
        }

        /**
         * The store's name in its thread's name ({@code memlife-chat-writer-<name>}), logs and
         * errors; default {@value #DEFAULT_NAME}.
         *
         * @param name the name; not blank
         * @return this builder
         */
        public Builder name(String name) {
            this.name = Checks.notBlank(name, "name");
            return this;
        }

        /**
         * The budget of {@link WriteBehindChatMemoryStore#close()}; default 5 s.
         *
         * @param closeTimeout the longest {@code close()} takes; zero or more
         * @return this builder
         */
        public Builder closeTimeout(Duration closeTimeout) {
            this.closeTimeout = Checks.nonNegative(closeTimeout, "closeTimeout");
            return this;
        }

        /**
         * How long the writer thread waits for work, idle, before it exits; default 1 s. The next
         * update starts a new one. Measured on the real clock, whatever the {@link #ticker}.
         *
         * @param writerKeepAlive the idle time before the writer exits; zero or more
         * @return this builder
         */
        public Builder writerKeepAlive(Duration writerKeepAlive) {
            this.writerKeepAlive = Checks.nonNegative(writerKeepAlive, "writerKeepAlive");
            return this;
        }

        /**
         * Makes the writer thread; by default a daemon thread named {@code
         * memlife-chat-writer-<name>}. A custom factory should make daemon threads too.
         *
         * @param threadFactory the factory of the writer thread
         * @return this builder
         */
        public Builder threadFactory(ThreadFactory threadFactory) {
            this.threadFactory = requireNonNull(threadFactory, "threadFactory");
            return this;
        }

        /**
         * The time source of {@link WriteBehindChatMemoryStore#flush} and {@link
         * WriteBehindChatMemoryStore#shutdown}'s deadlines; default the system ticker.
         *
         * @param ticker the time source
         * @return this builder
         */
        public Builder ticker(Ticker ticker) {
            this.ticker = requireNonNull(ticker, "ticker");
            return this;
        }

        /** {@return a new write-behind store with these settings; it starts no thread until the first update} */
        public WriteBehindChatMemoryStore build() {
            return new WriteBehindChatMemoryStore(this);
        }
    }
}
