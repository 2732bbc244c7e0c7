package dev.memlife.internal;

import static java.util.Objects.requireNonNull;

import dev.memlife.StoppedException;
import dev.memlife.WriteBehindBuilder;
import dev.memlife.WriteBehindFigures;
import dev.memlife.WriteBehindReport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The write-behind engine of memlife's decorators (the chat memories {@code
 * dev.memlife.langchain4j.WriteBehindChatMemoryStore} and {@code
 * dev.memlife.springai.WriteBehindChatMemoryRepository}, the {@code WriteBehindVectorStore} and
 * the {@code WriteBehindEmbeddingIngestor}), written once for all: the settings of their builders
 * ({@link WriteBehindBuilder}), the coalescing per id and the writer ({@link WriteBehindQueue}),
 * batches of ids per backend call, read-your-writes, the copies and checks of what is handed over,
 * flush, the bounded stop and its {@link WriteBehindReport}, the {@link WriteBehindFigures}, the
 * logs and {@code toString}. Each decorator is a thin adapter: it checks its framework's id, calls
 * one method here, and documents the behaviour from its users' side. Not part of the API: the
 * package is not exported.
 *
 * <p>The ids are the framework's ({@code Object} memory ids, {@code String} conversation, document
 * and segment ids); the state of an id is a list (a conversation's messages; one document or
 * segment), which the {@link Sink} (the store behind) reads, saves and deletes.
 *
 * <p>Thread-safe.
 *
 * @param <K> the ids
 * @param <M> the messages
 */
public final class WriteBehindEngine<K, M> implements dev.memlife.WriteBehind<K> {

    /**
     * The store or repository behind a decorator. {@link #save} and {@link #delete} are called on
     * the writer thread, one call at a time; {@link #read} on the callers' threads, possibly while
     * the writer writes another id.
     */
    public interface Sink<K, M> {
        /** {@return the stored messages of {@code id}; null counts as none} */
        List<M> read(K id);

        /** Writes {@code messages} as the whole state of {@code id}. */
        void save(K id, List<M> messages);

        /** Deletes {@code id}. */
        void delete(K id);

        /**
         * Writes several ids' states in one call, in the order they first waited; a throw fails
         * them all. Called only when the engine batches; by default one {@link #save} each.
         *
         * @param states the ids and their states, in order
         */
        default void saveAll(Map<K, List<M>> states) {
            states.forEach(this::save);
        }

        /**
         * Deletes several ids in one call; a throw fails them all. Called only when the engine
         * batches; by default one {@link #delete} each.
         *
         * @param ids the ids, in order
         */
        default void deleteAll(List<K> ids) {
            ids.forEach(this::delete);
        }

        /**
         * A sink of three calls of the backend, e.g. {@code Sink.of(store::getMessages,
         * store::updateMessages, store::deleteMessages)}.
         *
         * @return the sink
         */
        static <K, M> Sink<K, M> of(Function<? super K, ? extends List<M>> read,
                BiConsumer<? super K, ? super List<M>> save, Consumer<? super K> delete) {
            requireNonNull(read, "read");
            requireNonNull(save, "save");
            requireNonNull(delete, "delete");
            return new Sink<>() {
                @Override
                public List<M> read(K id) {
                    return read.apply(id);
                }

                @Override
                public void save(K id, List<M> messages) {
                    save.accept(id, messages);
                }

                @Override
                public void delete(K id) {
                    delete.accept(id);
                }
            };
        }
    }

    /**
     * How logs, errors and {@code toString} word one decorator.
     *
     * @param owner the decorator's class: its logger, and its simple name in {@code toString}
     * @param noun what it is, e.g. "write-behind chat memory store" (its name follows)
     * @param id what an id is, e.g. "memory id"
     * @param sink what the backend is, e.g. "store"
     * @param save what a save is, e.g. "update"
     * @param writerThread the writer thread's name before the decorator's name, e.g. "memlife-chat-writer-"
     */
    public record Words(Class<?> owner, String noun, String id, String sink, String save, String writerThread) {
        /** Checks that nothing is null. */
        public Words {
            requireNonNull(writerThread, "writerThread");
            requireNonNull(owner, "owner");
            requireNonNull(noun, "noun");
            requireNonNull(id, "id");
            requireNonNull(sink, "sink");
            requireNonNull(save, "save");
        }
    }

    private final String name;
    private final String component;
    private final Words words;
    private final Object target;
    private final Sink<K, M> sink;
    private final Duration closeTimeout;
    private final Logger log;
    private final WriteBehindQueue<K, M> queue;

    /**
     * An engine with the settings of {@code settings}, read now: a builder reused later does not
     * change it. It starts no thread until the first save or delete.
     *
     * @param settings the decorator's builder
     * @param words how logs, errors and {@code toString} word the decorator
     * @param target the backend, as {@code toString} shows it
     * @param sink the backend's calls
     * @param codec how ids and states are kept in a spool, when the settings ask for one
     * @throws IllegalStateException if {@code durable} is set without a spool, or the spool's
     *     directory is in use
     * @throws java.io.UncheckedIOException if the spool cannot be opened or read
     */
    public WriteBehindEngine(WriteBehindBuilder<?> settings, Words words, Object target, Sink<K, M> sink,
            StateJournal.Codec<K, M> codec) {
        this(settings, words, target, sink, codec, 1);
    }

    /**
     * An engine whose writer hands the sink up to {@code maxBatch} saves (or deletes) in one call,
     * {@link Sink#saveAll} ({@link Sink#deleteAll}), in the order they first waited.
     *
     * @param settings the decorator's builder
     * @param words how logs, errors and {@code toString} word the decorator
     * @param target the backend, as {@code toString} shows it
     * @param sink the backend's calls
     * @param codec how ids and states are kept in a spool, when the settings ask for one
     * @param maxBatch the most ids one sink call takes; at least 1
     * @throws IllegalStateException if {@code durable} is set without a spool, or the spool's
     *     directory is in use
     * @throws java.io.UncheckedIOException if the spool cannot be opened or read
     */
    public WriteBehindEngine(WriteBehindBuilder<?> settings, Words words, Object target, Sink<K, M> sink,
            StateJournal.Codec<K, M> codec, int maxBatch) {
        Checks.atLeast(maxBatch, 1, "maxBatch");
        requireNonNull(settings, "settings");
        this.name = settings.name();
        this.words = requireNonNull(words, "words");
        this.component = words.noun() + " '" + name + "'";
        this.target = requireNonNull(target, "target");
        this.sink = requireNonNull(sink, "sink");
        requireNonNull(codec, "codec");
        this.closeTimeout = settings.closeTimeout();
        this.log = LoggerFactory.getLogger(words.owner());
        if (settings.durable() && settings.spool().isEmpty()) {
            throw new IllegalStateException(component + ": durable(true) needs a spool: set spool(dir) too");
        }
        StateJournal<K, M> journal = settings.spool().map(dir -> StateJournal.open(dir, codec, settings.durable()))
                .orElse(null);
        this.queue = new WriteBehindQueue<>(sink, name, component, words, settings, log, journal, maxBatch);
        if (journal != null) {
            queue.replay(journal.replayed()); // before anything can read: reads see the last acknowledged states
        }
    }

    @Override
    public String name() {
        return name;
    }

    /**
     * The messages of {@code id}: the state waiting to be written if there is one (an empty list
     * if a delete waits), else what the backend returns, read on the caller's thread.
     *
     * @param id the id, checked by the caller
     * @return a copy of the waiting state, which the caller may change, or the backend's own list
     *     as it returns it (an empty list for null)
     */
    public List<M> read(K id) {
        WriteBehindQueue.Waiting<List<M>> waiting = queue.waiting(id);
        if (waiting != null) {
            return waiting.state() == null ? new ArrayList<>() : new ArrayList<>(waiting.state());
        }
        // Nothing waits for this id, so the backend has its latest state: an entry leaves the
        // queue only after the backend returned from writing it.
        List<M> stored = sink.read(id);
        return stored == null ? new ArrayList<>() : stored;
    }

    /**
     * The backend's ids ({@code stored}) plus those with a save waiting, minus those with a delete
     * waiting. The waiting states are taken before the backend is read, so an id written meanwhile
     * is not missed.
     *
     * @param stored reads the backend's ids; null counts as none
     * @return the backend's ids first (in its order), then those only waiting here (in the order
     *     they first waited); a new list, which the caller may change
     */
    public List<K> ids(Supplier<? extends Collection<K>> stored) {
        Map<K, List<M>> waiting = queue.waitingStates();
        Collection<K> read = stored.get();
        Set<K> ids = new LinkedHashSet<>(read == null ? List.of() : read);
        waiting.forEach((id, state) -> {
            if (state == null) {
                ids.remove(id);
            } else {
                ids.add(id);
            }
        });
        return new ArrayList<>(ids);
    }

    /**
     * Hands a copy of {@code messages} over as the new state of {@code id} and returns at once.
     *
     * @param id the id, checked by the caller
     * @param messages the messages, oldest first
     * @param operation the caller's method, for the errors
     * @throws NullPointerException if {@code messages} or one of them is null (naming which)
     * @throws StoppedException after {@link #stop} began; nothing was taken
     * @throws RejectedExecutionException if no writer thread could be started; nothing was taken
     */
    public void save(K id, List<M> messages, String operation) {
        queue.handOver(List.of(new StateJournal.Entry<>(id, copyOf(messages))), operation);
    }

    /**
     * Hands copies of several ids' states over at once, all or none, and returns at once: one
     * spool append for all of them.
     *
     * @param states the ids (checked by the caller) and their messages, in the order handed over
     * @param operation the caller's method, for the errors
     * @throws NullPointerException if a state or one of its messages is null (naming which)
     * @throws StoppedException after {@link #stop} began; nothing was taken
     * @throws RejectedExecutionException if no writer thread could be started; nothing was taken
     */
    public void saveAll(Map<K, List<M>> states, String operation) {
        List<StateJournal.Entry<K, M>> entries = new ArrayList<>(states.size());
        states.forEach((id, messages) -> entries.add(new StateJournal.Entry<>(id, copyOf(messages))));
        if (!entries.isEmpty()) {
            queue.handOver(entries, operation);
        }
    }

    /**
     * Hands over the deletion of several ids at once, all or none, and returns at once.
     *
     * @param ids the ids, checked by the caller
     * @param operation the caller's method, for the errors
     * @throws StoppedException after {@link #stop} began; nothing was taken
     * @throws RejectedExecutionException if no writer thread could be started; nothing was taken
     */
    public void deleteAll(List<K> ids, String operation) {
        List<StateJournal.Entry<K, M>> entries = new ArrayList<>(ids.size());
        ids.forEach(id -> entries.add(new StateJournal.Entry<>(id, null)));
        if (!entries.isEmpty()) {
            queue.handOver(entries, operation);
        }
    }

    /**
     * Hands over the deletion of {@code id} and returns at once.
     *
     * @param id the id, checked by the caller
     * @param operation the caller's method, for the errors
     * @throws StoppedException after {@link #stop} began; nothing was taken
     * @throws RejectedExecutionException if no writer thread could be started; nothing was taken
     */
    public void delete(K id, String operation) {
        queue.handOver(List.of(new StateJournal.Entry<>(id, null)), operation);
    }

    private static <M> List<M> copyOf(List<M> messages) {
        requireNonNull(messages, "messages");
        List<M> copy = new ArrayList<>(messages.size());
        for (M m : messages) {
            if (m == null) {
                throw new NullPointerException("messages[" + copy.size() + "]");
            }
            copy.add(m);
        }
        return List.copyOf(copy);
    }

    /**
     * Waits until every save and delete handed over before this call is in the backend, or the
     * timeout passes; states the backend refused earlier are written again first.
     *
     * @param timeout the longest wait; zero or more
     * @return whether everything handed over before the call is in the backend; false on timeout,
     *     a refusal, a stopped engine or an interrupt (the flag is set again)
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is negative or too large to measure
     */
    @Override
    public boolean flush(Duration timeout) {
        return queue.flush(Checks.nonNegative(timeout, "timeout"));
    }

    /**
     * Refuses later saves and deletes, writes what waits (refused states included) until
     * everything is written or {@code budget} has passed, and reports by id; the call that ends the
     * stop logs it: a summary at INFO when nothing was left unwritten, the report at WARN otherwise. Later calls wait for the same drain within their own
     * budget; a call after the end reports at once.
     *
     * @param budget the longest the call takes; zero or more
     * @return what became of every id that was waiting
     * @throws NullPointerException if {@code budget} is null
     * @throws IllegalArgumentException if {@code budget} is negative or too large to measure
     */
    @Override
    public WriteBehindReport<K> stop(Duration budget) {
        WriteBehindQueue.Outcome<K> o = queue.stop(Checks.nonNegative(budget, "budget"));
        if (o.closedHere()) {
            WriteBehindReport<K> r = o.report();
            if (r.complete()) {
                WriteBehindFigures f = r.figures();
                log.info("{}: stopped in {} ms of {} ms, nothing left unwritten: {} written at shutdown; {} saves and "
                        + "{} deletes taken in all, {} coalesced, {} written, {} backend calls failed", component,
                        r.elapsed().toMillis(), r.budget().toMillis(), r.writtenIds().size(), f.saves(), f.deletes(),
                        f.coalesced(), f.writtenSaves() + f.writtenDeletes(), f.failedWrites());
            } else {
                log.warn("{}: shutdown left {}s unwritten: {}", component, words.id(), r);
            }
        }
        return o.report();
    }

    /** Stops within the builder's close timeout; an incomplete stop is logged with its report. */
    @Override
    public void close() {
        stop(closeTimeout);
    }

    @Override
    public WriteBehindFigures figures() {
        return queue.figures();
    }

    @Override
    public String toString() {
        return words.owner().getSimpleName() + "[" + name + " over " + target + "]";
    }
}
