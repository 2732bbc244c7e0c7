package dev.memlife.store;

import static java.util.Objects.requireNonNull;

import dev.memlife.MemoryProvider;
import dev.memlife.Message;
import dev.memlife.StoppedException;
import dev.memlife.Turn;
import dev.memlife.internal.Checks;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link MemoryProvider} that stores every turn in a relational database over plain JDBC: SQLite
 * (a file, the embedded default: {@link #sqlite(Path)}) or PostgreSQL (shared by several gateway
 * replicas: {@link #builder(String)} with a {@code jdbc:postgresql:} URL). The driver is an optional
 * dependency: add {@code org.xerial:sqlite-jdbc} or {@code org.postgresql:postgresql}.
 *
 * <p><b>Writes.</b> It overrides {@link #syncBatch}, so the manager hands it every write already
 * queued (up to the manager's {@code maxBatchSize}) and it stores them in one transaction. Writes
 * are idempotent by {@link Turn#writeId()}: a write id already stored is skipped (the first write
 * wins). A failed batch is rolled back and retried on a fresh connection, at most {@link
 * Builder#retryAttempts} times in all with a doubling backoff; then {@link JdbcStoreException} is
 * thrown and the manager counts every turn of the batch as failed. Every other database call
 * (session ends, prefetch, the read-back methods) follows the same retry rule.
 *
 * <p><b>Schema.</b> Created if missing: {@code <prefix>turns} (write id, session id, user and
 * assistant contents, messages, accepted-at and stored-at epoch milliseconds), {@code
 * <prefix>session_ends} (session id, message count, ended-at) and {@code <prefix>schema_version}.
 * Every Java string is stored and read back exactly, and two different strings are never stored
 * as one: normal text is stored as itself in {@code TEXT} columns, readable and queryable with
 * plain SQL ({@code WHERE session_id = 'chat:1'}); a string with NUL or an unpaired surrogate
 * (or one starting with U+FDD0) is stored escaped, see {@link Codec}. Message lists are stored as
 * bytes. Tables created by an earlier memlife (schema version 1: strings as UTF-8 bytes) are
 * migrated when the store starts, in one transaction; PostgreSQL needs a {@code UTF8} database.
 *
 * <p><b>SQLite file.</b> The store remembers the file it opened (device and inode). If that file
 * is deleted or replaced while the store runs, every later write and read fails at once with a
 * {@link JdbcStoreException} naming the path (so the manager counts those writes as failed), and
 * the store never opens a fresh file at the path: build a new store to go on. Note that SQLite
 * leaves the old file's {@code -wal} at the path, which it replays into the next file opened there.
 *
 * <p><b>Threads.</b> Thread-safe. One store serves any number of managers on two connections:
 * writes ({@link #syncBatch}, {@link #onSessionEnd}) go onto one, one transaction at a time, and
 * writes that wait for it are <i>group-committed</i>: the next transaction stores all of them
 * (up to 4,096 rows, first come first served), so one commit stores the batches of many managers.
 * Each caller waits until its own write is stored, and a manager hands over one batch at a time,
 * so every manager's writes are stored in its order. A combined transaction that fails blames
 * none of its writes: each is then stored alone under the retry rule. Reads ({@link #prefetch},
 * the read-back methods) share the second connection, one caller at a time. Every lock wait in
 * the database is bounded by {@link Builder#lockTimeout}. After {@link #shutdown()} writes are
 * refused and the read-back methods still work, each on a connection of its own.
 *
 * <p>One idea past 500 lines: the provider's contract over two connections, with its builder;
 * the parts with their own rules are classes of their own: {@code GroupCommit}, {@code Retry},
 * {@code Codec}, {@code Schema}, {@code Tables}, {@code Dialect}, {@code StoreFile}.
 */
public final class JdbcMemoryProvider implements MemoryProvider, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(JdbcMemoryProvider.class);

    /**
     * The most rows the store puts in one transaction when it combines the batches of several
     * managers ({@value}); a batch larger than this is stored in a transaction of its own. A
     * manager that replays a large backlog and owns its store (as the {@code spool replay} tool
     * does) may set its {@code maxBatchSize} to this.
     */
    public static final int LARGEST_COMBINED_TRANSACTION = GroupCommit.MAX_ROWS;

    /** Longest part of one message that {@link #prefetch} puts in the prompt. */
    static final int PREFETCH_MAX_CHARS = 2_000;

    /** The provider's lifecycle; moves only forward, by CAS. */
    private enum State {
        /** Stores and reads. */
        OPEN,
        /** {@link #shutdown()} ran: connections closed, writes refused, reads on one-off connections. */
        SHUT_DOWN
    }

    private final String name;
    private final Database database;
    private final Tables tables;
    private final Schema schema;
    private final int prefetchLimit;
    private final Retry retry;
    private final Clock wallClock;
    private final ConnectionHolder writes;
    private final ConnectionHolder others;
    private final GroupCommit groupCommit;
    private final AtomicReference<State> state = new AtomicReference<>(State.OPEN);
    // Counted for figures(), once per batch or session end.
    private final AtomicLong batchesStored = new AtomicLong();
    private final AtomicLong turnsStored = new AtomicLong();
    private final AtomicLong turnsSkipped = new AtomicLong();
    private final AtomicLong sessionEndsStored = new AtomicLong();
    /** The session last passed to {@link #initialize}; the one {@link #onSessionEnd} records. */
    private volatile String initializedSession;
    /** The session of the last turn written; recorded by {@link #onSessionEnd} if none was initialized. */
    private volatile String lastWrittenSession;

    private JdbcMemoryProvider(Builder b, Database database) {
        this.name = b.name;
        this.database = database;
        this.tables = new Tables(b.tablePrefix());
        this.schema = new Schema(tables, b.tablePrefix(), database.description());
        this.prefetchLimit = b.prefetchLimit;
        this.retry = new Retry(b.name, database.description(), b.retryAttempts, b.retryBackoff, b.sleeper);
        this.wallClock = b.wallClock;
        this.writes = new ConnectionHolder(database);
        this.others = new ConnectionHolder(database);
        this.groupCommit = new GroupCommit(writes, retry, tables::insertWrites);
    }

    /**
     * A provider on the SQLite file {@code file} (created if missing; its directory must exist),
     * with every other default of {@link Builder}.
     *
     * @param file the database file
     * @return the provider, connected, with its schema ready
     * @throws JdbcStoreException if the file cannot be opened or the schema cannot be created or
     *     migrated
     */
    public static JdbcMemoryProvider sqlite(Path file) {
        return builder("jdbc:sqlite:" + requireNonNull(file, "file").toAbsolutePath()).build();
    }

    /**
     * A builder for a provider on the database at {@code url} ({@code jdbc:sqlite:} or {@code
     * jdbc:postgresql:}).
     *
     * @param url the database's JDBC URL
     * @return a builder with every other default
     * @throws IllegalArgumentException if {@code url} does not start with {@code jdbc:}
     */
    public static Builder builder(String url) {
        return new Builder(url);
    }

    /**
     * A builder for a provider on the connections of {@code dataSource} (for example a pool).
     *
     * @param dataSource where the provider gets its connections; it brings its own credentials
     * @return a builder with every other default
     */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    @Override
    public String name() {
        return name;
    }

    /** Remembers {@code sessionId} as the session {@link #onSessionEnd} records. Does not block. */
    @Override
    public void initialize(String sessionId) {
        initializedSession = requireNonNull(sessionId, "sessionId");
    }

    /** Stores one turn: a batch of one. */
    @Override
    public void syncTurn(Turn turn) {
        syncBatch(List.of(requireNonNull(turn, "turn")));
    }

    /**
     * Stores {@code turns} in one transaction, skipping write ids already stored. Writes of other
     * managers waiting for the store's write connection at the same time share that transaction
     * (see the class comment); a combined transaction that fails is rolled back and each of its
     * batches stored alone, so a batch fails only by a failure of its own. Waits for the database,
     * each statement bounded by the lock timeout, and between failed attempts for the backoff; an
     * interrupt during a backoff ends the retries at once (flag restored).
     *
     * @throws JdbcStoreException if every attempt failed; nothing of the batch was stored
     * @throws StoppedException if the provider was shut down
     */
    @Override
    public void syncBatch(List<Turn> turns) {
        requireNonNull(turns, "turns");
        checkOpen("syncBatch");
        if (turns.isEmpty()) {
            return;
        }
        GroupCommit.Write write = GroupCommit.Write.turns(turns, wallClock.millis());
        groupCommit.store(write, "store " + describe(turns));
        batchesStored.incrementAndGet();
        turnsStored.addAndGet(write.stored);
        turnsSkipped.addAndGet(turns.size() - write.stored);
        lastWrittenSession = turns.get(turns.size() - 1).sessionId();
        if (write.stored < turns.size() && LOG.isDebugEnabled()) {
            LOG.debug("{}: {} of {} writes were already stored and were skipped", name, turns.size() - write.stored,
                    turns.size());
        }
    }

    /**
     * Records the end of the session last {@link #initialize initialized} (else of the last one
     * written, else {@code ""}) with the transcript's message count. A store that several managers
     * share is told the session by {@link #onSessionEnd(String, List)} instead, which the managers
     * call. Waits like {@link #syncBatch}.
     *
     * @throws JdbcStoreException if every attempt failed
     */
    @Override
    public void onSessionEnd(List<Message> messages) {
        String initialized = initializedSession;
        String written = lastWrittenSession;
        onSessionEnd(initialized != null ? initialized : written != null ? written : "", messages);
    }

    /**
     * Records the end of session {@code sessionId} with the transcript's message count, on the
     * write connection like a batch (and in the same transaction as the writes waiting with it);
     * what every manager calls, so a store shared by many agents records each session's own end.
     * Waits like {@link #syncBatch}.
     *
     * @throws JdbcStoreException if every attempt failed
     */
    @Override
    public void onSessionEnd(String sessionId, List<Message> messages) {
        requireNonNull(sessionId, "sessionId");
        requireNonNull(messages, "messages");
        checkOpen("onSessionEnd");
        groupCommit.store(GroupCommit.Write.sessionEnd(sessionId, messages.size(), wallClock.millis()),
                "record the end of session '" + sessionId + "'");
        sessionEndsStored.incrementAndGet();
    }

    /**
     * The session's most recent turns (at most the prefetch limit), oldest first, as text for the
     * prompt; empty if the session has none. {@code query} is not used. Waits for one query, retried
     * like a write; an interrupt during a backoff ends it with {@link JdbcStoreException}.
     */
    @Override
    public String prefetch(String query, String sessionId) {
        requireNonNull(sessionId, "sessionId");
        List<StoredTurn> recent = read("read the recent turns of session '" + sessionId + "'",
                c -> tables.turns(c, sessionId, prefetchLimit));
        if (recent.isEmpty()) {
            return "";
        }
        StringBuilder out = new StringBuilder("Recent turns of this session:");
        for (StoredTurn t : recent) {
            out.append("\nuser: ").append(clip(t.userContent()));
            out.append("\nassistant: ").append(clip(t.assistantContent()));
        }
        return out.toString();
    }

    /**
     * The store's figures now: batches and writes stored, writes skipped as already stored,
     * session ends, failed attempts and calls, connections open. Cheap: a few counter reads.
     *
     * @return a snapshot of this store's figures
     */
    public StoreFigures figures() {
        return new StoreFigures(batchesStored.get(), turnsStored.get(), turnsSkipped.get(), sessionEndsStored.get(),
                retry.failedAttempts(), retry.failedCalls(), writes.connectionsOpen() + others.connectionsOpen());
    }

    // The read-back methods: each waits for one query, retried like a write, and throws
    // JdbcStoreException when every attempt failed. They work after shutdown too.

    /** {@return how many turns are stored, in all sessions} */
    public long countTurns() {
        return read("count the turns", tables::countTurns);
    }

    /**
     * How many turns are stored for a session.
     *
     * @param sessionId the session
     * @return the number of its stored turns
     */
    public long countTurns(String sessionId) {
        requireNonNull(sessionId, "sessionId");
        return read("count the turns of session '" + sessionId + "'", c -> tables.countTurns(c, sessionId));
    }

    /**
     * The session's stored turns, in the order they were stored.
     *
     * @param sessionId the session
     * @return its stored turns; empty if it has none
     */
    public List<StoredTurn> turns(String sessionId) {
        requireNonNull(sessionId, "sessionId");
        return read("read the turns of session '" + sessionId + "'",
                c -> tables.turns(c, sessionId, Integer.MAX_VALUE));
    }

    /**
     * The sessions with stored turns: the listing a chat memory repository over this store answers
     * Spring AI's {@code ChatMemoryRepository.findConversationIds()} with. One query, retried like a
     * write.
     *
     * @return their ids, each once, in the order of their first stored turn; empty if none
     */
    public List<String> sessionIds() {
        return read("list the sessions", tables::sessionIds);
    }

    /** {@return every session boundary recorded, oldest first} */
    public List<StoredSessionEnd> sessionEnds() {
        return read("read the session ends", tables::sessionEnds);
    }

    /**
     * Closes both connections, after a statement in progress on them has finished. Idempotent.
     * Later writes are refused; the read-back methods open a connection per call.
     */
    @Override
    public void shutdown() {
        if (!state.compareAndSet(State.OPEN, State.SHUT_DOWN)) {
            return;
        }
        for (ConnectionHolder holder : List.of(writes, others)) {
            try {
                holder.close();
            } catch (SQLException | RuntimeException e) {
                LOG.warn("{}: closing a connection to {} failed", name, database.description(), e);
            }
        }
    }

    /**
     * {@link #shutdown()}, for try-with-resources and frameworks that close what they own (a store
     * the application builds once and hands to its managers). Waits at most for the statement in
     * progress (bounded by the lock timeout). Idempotent.
     */
    @Override
    public void close() {
        shutdown();
    }

    /** Writes waiting for the write connection, not yet in a transaction; for tests and diagnostics. */
    int queuedWrites() {
        return groupCommit.queued();
    }

    @Override
    public String toString() {
        return "JdbcMemoryProvider[" + name + ", " + database.description() + "]";
    }

    // ---- machinery -------------------------------------------------------------------------------

    /** Opens the writer's connection and creates, checks or migrates the schema; called once by the builder. */
    private JdbcMemoryProvider start() {
        retry.run("prepare the schema", writes, c -> {
            schema.prepare(c, database.dialect());
            return null;
        });
        return this;
    }

    private <T> T read(String what, ConnectionHolder.Work<T> work) {
        return retry.run(what, others, work);
    }

    private void checkOpen(String method) {
        if (state.get() != State.OPEN) {
            throw new StoppedException("store '" + name + "' (" + database.description() + ")", method);
        }
    }

    private static String describe(List<Turn> turns) {
        return turns.size() == 1 ? "write " + turns.get(0).writeId()
                : "a batch of " + turns.size() + " writes (" + turns.get(0).writeId() + " to "
                        + turns.get(turns.size() - 1).writeId() + ")";
    }

    private static String clip(String s) {
        if (s.length() <= PREFETCH_MAX_CHARS) {
            return s;
        }
        int end = Character.isHighSurrogate(s.charAt(PREFETCH_MAX_CHARS - 1)) ? PREFETCH_MAX_CHARS - 1 : PREFETCH_MAX_CHARS;
        return s.substring(0, end) + "…";
    }

    /**
     * Settings of a {@link JdbcMemoryProvider}; {@link #build()} connects and creates the schema. A
     * builder is not thread-safe; a provider it built never changes when the builder is reused.
     */
    public static final class Builder extends JdbcBuilder<Builder> {

        /** Default {@link #name(String) name}: {@value}. */
        public static final String DEFAULT_NAME = "jdbc";
        /** Default {@link #prefetchLimit(int) prefetch limit}: {@value} turns. */
        public static final int DEFAULT_PREFETCH_LIMIT = 10;
        /** Default {@link #retryAttempts(int) attempts} per write: {@value}. */
        public static final int DEFAULT_RETRY_ATTEMPTS = 3;
        /** Default {@link #retryBackoff(Duration) backoff} after the first failure: 100 ms. */
        public static final Duration DEFAULT_RETRY_BACKOFF = Duration.ofMillis(100);
        /** Default {@link #lockTimeout(Duration) lock timeout}: 5 s. */
        public static final Duration DEFAULT_LOCK_TIMEOUT = Duration.ofSeconds(5);
        /** Longest {@link #lockTimeout(Duration) lock timeout}: {@link Integer#MAX_VALUE} ms, about 24.8 days. */
        public static final Duration MAX_LOCK_TIMEOUT = Duration.ofMillis(Integer.MAX_VALUE);
        /** Longest {@link #retryBackoff(Duration) backoff}: the longest wait between two attempts, 30 s. */
        public static final Duration MAX_RETRY_BACKOFF = Retry.MAX_BACKOFF;

        private String name = DEFAULT_NAME;
        private int prefetchLimit = DEFAULT_PREFETCH_LIMIT;
        private int retryAttempts = DEFAULT_RETRY_ATTEMPTS;
        private Duration retryBackoff = DEFAULT_RETRY_BACKOFF;
        private Duration lockTimeout = DEFAULT_LOCK_TIMEOUT;
        private Sleeper sleeper = Sleeper.system();
        private Clock wallClock = Clock.systemUTC();

        private Builder(String url) {
            super(url);
        }

        private Builder(DataSource dataSource) {
            super(dataSource);
        }

        /**
         * The provider's name, unique within one manager; default {@value #DEFAULT_NAME}.
         *
         * @param name the name; not blank
         * @return this builder
         */
        public Builder name(String name) {
            this.name = Checks.notBlank(name, "name");
            return this;
        }

        /**
         * How many of the session's most recent turns {@link JdbcMemoryProvider#prefetch} returns;
         * default {@value #DEFAULT_PREFETCH_LIMIT}.
         *
         * @param turns the number of turns; at least 1
         * @return this builder
         */
        public Builder prefetchLimit(int turns) {
            this.prefetchLimit = Checks.atLeast(turns, 1, "prefetchLimit");
            return this;
        }

        /**
         * Attempts per write in all (1 means no retry) before the write fails; default {@value
         * #DEFAULT_RETRY_ATTEMPTS}.
         *
         * @param attempts the number of attempts; at least 1
         * @return this builder
         */
        public Builder retryAttempts(int attempts) {
            this.retryAttempts = Checks.atLeast(attempts, 1, "retryAttempts");
            return this;
        }

        /**
         * The wait after a write's first failed attempt; doubled after each next one, up to {@link
         * #MAX_RETRY_BACKOFF}. Zero retries at once. Default 100 ms.
         *
         * @param backoff the first wait
         * @return this builder
         * @throws IllegalArgumentException if {@code backoff} is negative or longer than {@link
         *     #MAX_RETRY_BACKOFF} (it would be shortened to it), naming the value
         */
        public Builder retryBackoff(Duration backoff) {
            requireNonNull(backoff, "backoff");
            this.retryBackoff = Checks.nonNegative(backoff, MAX_RETRY_BACKOFF,
                    MAX_RETRY_BACKOFF + " (the longest wait between two attempts)", "retryBackoff");
            return this;
        }

        /**
         * Longest wait for a database lock (SQLite busy timeout, PostgreSQL {@code lock_timeout}).
         * Both databases take it as an int of milliseconds, so it must be a whole number of
         * milliseconds from 1 ms to {@link #MAX_LOCK_TIMEOUT}: anything else is refused here rather
         * than changed (the SQLite driver would silently wait 3 s instead of a longer timeout, and
         * 0 ms means "never wait" to SQLite but "wait forever" to PostgreSQL). Default 5 s.
         *
         * @param timeout the longest wait for a lock
         * @return this builder
         * @throws IllegalArgumentException naming the value if it is not such a duration
         */
        public Builder lockTimeout(Duration timeout) {
            requireNonNull(timeout, "timeout");
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("lockTimeout must be positive, was " + timeout);
            }
            Checks.nonNegative(timeout, MAX_LOCK_TIMEOUT,
                    "24.8 days (" + Integer.MAX_VALUE + " ms, the databases take an int of milliseconds)", "lockTimeout");
            if (timeout.getNano() % 1_000_000 != 0) {
                throw new IllegalArgumentException("lockTimeout must be a whole number of milliseconds (the "
                        + "databases take milliseconds), was " + timeout);
            }
            this.lockTimeout = timeout;
            return this;
        }

        /**
         * How the provider waits between attempts; tests inject one that does not sleep.
         *
         * @param sleeper the sleeper; default {@link Sleeper#system()}
         * @return this builder
         */
        public Builder sleeper(Sleeper sleeper) {
            this.sleeper = requireNonNull(sleeper, "sleeper");
            return this;
        }

        /**
         * The wall clock (a {@link java.time.Clock}, in UTC by default) of the stored-at and ended-at
         * times.
         *
         * @param wallClock the clock
         * @return this builder
         */
        public Builder wallClock(Clock wallClock) {
            this.wallClock = requireNonNull(wallClock, "wallClock");
            return this;
        }

        /**
         * Connects, creates the schema if missing (or migrates an earlier one) and returns the
         * provider. Waits for the database, with the retry rule of writes.
         *
         * @return the provider, connected, with its schema ready
         * @throws JdbcStoreException naming the database (password masked) if it cannot be reached
         *     or the schema cannot be created or migrated, or if its tables have a schema version
         *     this code does not know, or a PostgreSQL database is not {@code UTF8}
         * @throws IllegalArgumentException if the database is neither SQLite nor PostgreSQL, or a
         *     user or password was set for a DataSource
         */
        public JdbcMemoryProvider build() {
            Properties credentials = credentials();
            Database database = dataSource() != null ? Database.ofDataSource(dataSource(), lockTimeout)
                    : Database.ofUrl(url(), credentials, lockTimeout);
            return new JdbcMemoryProvider(this, database).start();
        }
    }
}
