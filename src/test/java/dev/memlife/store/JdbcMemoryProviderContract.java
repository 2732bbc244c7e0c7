package dev.memlife.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.MemoryProvider;
import dev.memlife.Message;
import dev.memlife.Turn;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The behaviour every database behind {@link JdbcMemoryProvider} must show, run against a real
 * SQLite file and a real PostgreSQL server by the subclasses. Each test uses tables of its own
 * (a random prefix), so the tests can share one PostgreSQL database.
 */
@Timeout(60)
abstract class JdbcMemoryProviderContract {

    static final Duration FLUSH = Duration.ofSeconds(30);
    static final Instant NOW = Instant.parse("2026-11-30T12:00:00Z");

    final String prefix = "t" + Long.toHexString(ThreadLocalRandom.current().nextLong() & Long.MAX_VALUE) + "_";
    final RecordingSleeper sleeper = new RecordingSleeper();
    private final List<JdbcMemoryProvider> providers = new ArrayList<>();
    private final List<MemoryManager> managers = new ArrayList<>();

    /** A builder on this database's URL. */
    abstract JdbcMemoryProvider.Builder urlBuilder();

    /** A real DataSource on this database. */
    abstract DataSource dataSource();

    /** Installs a trigger that makes inserting a turn with this user content fail. */
    abstract void rejectUserContent(String prefix, String userContent) throws Exception;

    /** Drops this test's tables, where the database outlives the test. */
    abstract void dropTables(String prefix) throws Exception;

    JdbcMemoryProvider provider(JdbcMemoryProvider.Builder b) {
        JdbcMemoryProvider p = b.name("store").tablePrefix(prefix).sleeper(sleeper)
                .clock(Clock.fixed(NOW, ZoneOffset.UTC)).build();
        providers.add(p);
        return p;
    }

    JdbcMemoryProvider provider() {
        return provider(urlBuilder());
    }

    MemoryManager manager(int maxBatchSize, MemoryProvider... stores) {
        MemoryManager m = MemoryManager.builder().maxBatchSize(maxBatchSize).build();
        for (MemoryProvider p : stores) {
            m.addProvider(p);
        }
        managers.add(m);
        return m;
    }

    static Turn turn(String writeId, String sessionId, String user) {
        return Turn.of(writeId, sessionId, user, "re: " + user, List.of(), NOW);
    }

    @AfterEach
    void closeEverything() throws Exception {
        managers.forEach(MemoryManager::shutdownAll);
        providers.forEach(JdbcMemoryProvider::shutdown);
        dropTables(prefix);
    }

    @Test
    void writesThroughTheManagerLandInTheDatabaseInOrder() {
        JdbcMemoryProvider store = provider();
        MemoryManager memory = manager(256, store);
        List<Message> messages = List.of(Message.user("u1"), Message.assistant("a1"));

        memory.syncAll("u1", "a1", "s-1", messages);
        memory.syncAll("u2", "a2", "s-1");
        memory.syncAll("other", "x", "s-2");

        assertThat(memory.flushPending(FLUSH)).isTrue();
        assertThat(store.countTurns()).isEqualTo(3);
        assertThat(store.countTurns("s-1")).isEqualTo(2);
        List<StoredTurn> stored = store.turns("s-1");
        assertThat(stored).extracting(StoredTurn::userContent).containsExactly("u1", "u2");
        assertThat(stored.get(0).assistantContent()).isEqualTo("a1");
        assertThat(stored.get(0).messages()).isEqualTo(messages);
        assertThat(stored.get(1).messages()).isEmpty();
        assertThat(stored.get(0).storedAt()).isEqualTo(NOW);
        assertThat(stored.get(0).acceptedAt()).isBefore(Instant.now().plusSeconds(1)).isAfter(NOW.minusSeconds(86400 * 365));
        assertThat(stored).extracting(StoredTurn::writeId).doesNotHaveDuplicates();
        assertThat(memory.shutdownAll().delivered()).isEqualTo(3);
    }

    @Test
    void theManagerHandsQueuedWritesOverAsOneBatchInOneTransaction() {
        ObservedDataSource db = new ObservedDataSource(dataSource());
        JdbcMemoryProvider store = provider(JdbcMemoryProvider.builder(db));
        int commitsAtStart = db.commits();
        BatchGate gate = new BatchGate();
        MemoryManager memory = manager(256, gate, store);

        memory.syncAll("first", "a", "s-1");
        assertThat(gate.awaitHeld(FLUSH)).isTrue();
        for (int i = 0; i < 10; i++) {
            memory.syncAll("queued " + i, "a", "s-1");
        }
        gate.open();

        assertThat(memory.flushPending(FLUSH)).isTrue();
        assertThat(gate.batchSizes()).containsExactly(1, 10);
        assertThat(db.commits() - commitsAtStart).isEqualTo(2);
        assertThat(store.countTurns("s-1")).isEqualTo(11);
    }

    @Test
    void aBatchIsAllOrNothing() throws Exception {
        JdbcMemoryProvider store = provider(urlBuilder().retryAttempts(1));
        rejectUserContent(prefix, "poison");
        List<Turn> batch = List.of(turn("w1", "s", "one"), turn("w2", "s", "two"), turn("w3", "s", "poison"));

        assertThatThrownBy(() -> store.syncBatch(batch)).isInstanceOf(JdbcStoreException.class)
                .hasMessageContaining("a batch of 3 writes (w1 to w3)").hasMessageContaining("after 1 attempt");
        assertThat(store.countTurns()).isZero();

        store.syncBatch(batch.subList(0, 2));
        assertThat(store.countTurns()).isEqualTo(2);
    }

    @Test
    void aFailedBatchIsRetriedWithADoublingBackoffOnAFreshConnection() {
        ObservedDataSource db = new ObservedDataSource(dataSource());
        JdbcMemoryProvider store = provider(JdbcMemoryProvider.builder(db).retryAttempts(3)
                .retryBackoff(Duration.ofMillis(100)));
        int commitsAtStart = db.commits();
        db.failNextCommits(2);

        store.syncBatch(List.of(turn("w1", "s", "one"), turn("w2", "s", "two")));

        assertThat(store.countTurns()).isEqualTo(2);
        assertThat(db.commits() - commitsAtStart).isEqualTo(3);
        assertThat(sleeper.waits()).containsExactly(Duration.ofMillis(100), Duration.ofMillis(200));
    }

    @Test
    void aBatchThatFailsEveryAttemptIsThrownAndCountedAsFailedByTheManager() {
        ObservedDataSource db = new ObservedDataSource(dataSource());
        JdbcMemoryProvider store = provider(JdbcMemoryProvider.builder(db).retryAttempts(3));
        MemoryManager memory = manager(256, store);
        db.failNextCommits(Integer.MAX_VALUE);

        memory.syncAll("u", "a", "s-1");

        assertThat(memory.flushPending(FLUSH)).isTrue();
        DrainReport report = memory.shutdownAll();
        assertThat(report.failed()).isEqualTo(1);
        assertThat(report.failuresByProvider()).isEqualTo(Map.of("store", 1L));
        assertThat(sleeper.waits()).hasSize(2);
        assertThat(store.countTurns()).isZero();
    }

    @Test
    void replayingTheSameTurnStoresNothingTwice() {
        JdbcMemoryProvider store = provider();
        Turn a = turn("w-a", "s-1", "a");
        Turn b = turn("w-b", "s-1", "b");
        Turn c = turn("w-c", "s-1", "c");

        store.syncBatch(List.of(a, b));
        store.syncBatch(List.of(a, b, c));
        store.syncBatch(List.of(c, c));
        store.syncTurn(Turn.of("w-a", "s-1", "changed", "changed", List.of(), NOW));

        assertThat(store.countTurns()).isEqualTo(3);
        assertThat(store.turns("s-1")).extracting(StoredTurn::userContent).containsExactly("a", "b", "c");
    }

    @Test
    void replayingStoredTurnsThroughTheManagersWritesStoresNothingTwice() {
        JdbcMemoryProvider store = provider();
        MemoryManager memory = manager(256, store);
        memory.syncAll("u1", "a1", "s-1");
        memory.syncAll("u2", "a2", "s-1");
        assertThat(memory.flushPending(FLUSH)).isTrue();
        List<Turn> replay = new ArrayList<>();
        store.turns("s-1").forEach(t -> replay.add(t.toTurn()));

        store.syncBatch(replay);

        assertThat(store.countTurns()).isEqualTo(2);
        assertThat(store.turns("s-1")).extracting(StoredTurn::toTurn).isEqualTo(replay);
    }

    @Test
    void onSessionEndRecordsTheSessionBoundary() {
        JdbcMemoryProvider store = provider();
        MemoryManager memory = manager(256, store);
        memory.initializeAll("s-1");
        memory.syncAll("u1", "a1", "s-1");
        assertThat(memory.flushPending(FLUSH)).isTrue();

        memory.onSessionEnd(List.of(Message.user("u1"), Message.assistant("a1"), Message.user("u2"),
                Message.assistant("a2")));

        assertThat(store.sessionEnds()).containsExactly(new StoredSessionEnd("s-1", 4, NOW));
    }

    @Test
    void onSessionEndWithoutInitializeRecordsTheSessionOfTheLastWrite() {
        JdbcMemoryProvider store = provider();
        MemoryManager memory = manager(256, store);
        memory.syncAll("u1", "a1", "s-8");
        memory.syncAll("u2", "a2", "s-9");
        assertThat(memory.flushPending(FLUSH)).isTrue();

        memory.onSessionEnd(List.of());

        assertThat(store.sessionEnds()).containsExactly(new StoredSessionEnd("s-9", 0, NOW));
    }

    @Test
    void prefetchReturnsTheSessionsMostRecentTurnsOldestFirst() {
        JdbcMemoryProvider store = provider(urlBuilder().prefetchLimit(2));
        MemoryManager memory = manager(256, store);
        memory.syncAll("u1", "a1", "s-1");
        memory.syncAll("u2", "a2", "s-1");
        memory.syncAll("u3", "a3", "s-1");
        memory.syncAll("elsewhere", "x", "s-2");
        assertThat(memory.flushPending(FLUSH)).isTrue();

        assertThat(memory.prefetchAll("what did we say?", "s-1"))
                .isEqualTo("Recent turns of this session:\nuser: u2\nassistant: a2\nuser: u3\nassistant: a3");
        assertThat(memory.prefetchAll("anything", "s-none")).isEmpty();
    }

    @Test
    void hostileStringsRoundTripByteForByte() {
        JdbcMemoryProvider store = provider();
        MemoryManager memory = manager(256, store);
        String session = "it's \"s\"; DROP TABLE " + prefix + "turns; -- \u0000 \uD83D\uDE42";
        String user = "Robert'); DELETE FROM " + prefix + "turns WHERE ''=''; --\u0000nul\u0000 \uD83D\uDC4D\u00e9\\";
        String megabyte = "\uD83C\uDF0D 1 MB \u0000 '\" ".repeat(81_000); // 13 chars, 17 UTF-8 bytes each
        List<Message> messages = List.of(new Message("to\u0000ol", "\u0000"), Message.user(user),
                Message.assistant(megabyte), new Message("", ""));
        memory.initializeAll(session);

        memory.syncAll(user, megabyte, session, messages);
        assertThat(memory.flushPending(FLUSH)).isTrue();
        memory.onSessionEnd(messages);

        List<StoredTurn> stored = store.turns(session);
        assertThat(stored).hasSize(1);
        StoredTurn t = stored.get(0);
        assertThat(t.sessionId()).isEqualTo(session);
        assertThat(t.userContent()).isEqualTo(user);
        assertThat(t.assistantContent()).isEqualTo(megabyte);
        assertThat(t.messages()).isEqualTo(messages);
        assertThat(store.countTurns(session)).isEqualTo(1);
        assertThat(store.countTurns(session.replace("\u0000", ""))).isZero();
        assertThat(store.countTurns()).isEqualTo(1);
        assertThat(store.sessionEnds()).containsExactly(new StoredSessionEnd(session, 4, NOW));
        assertThat(memory.prefetchAll("q", session)).contains("user: " + user);
    }

    @Test
    void aDatabaseThatGoesAwayMidRunBecomesCountedFailuresAndACleanShutdown() throws Exception {
        ObservedDataSource db = new ObservedDataSource(dataSource());
        JdbcMemoryProvider store = provider(JdbcMemoryProvider.builder(db).retryAttempts(2));
        MemoryManager memory = manager(256, store);
        for (int i = 0; i < 5; i++) {
            memory.syncAll("before " + i, "a", "s-1");
        }
        assertThat(memory.flushPending(FLUSH)).isTrue();

        db.goAway();
        for (int i = 0; i < 5; i++) {
            memory.syncAll("after " + i, "a", "s-1");
        }
        assertThat(memory.flushPending(FLUSH)).isTrue();
        DrainReport report = memory.shutdownAll();

        assertThat(report.delivered()).isEqualTo(5);
        assertThat(report.failed()).isEqualTo(5);
        assertThat(report.failuresByProvider()).isEqualTo(Map.of("store", 5L));
        assertThat(report.drainedCompletely()).isTrue();
        assertThat(report.providersNotShutDown()).isEmpty();
        assertThat(memory.syncAll("late", "a", "s-1")).isFalse();
        db.comeBack();
        assertThat(store.countTurns("s-1")).isEqualTo(5);
    }

    @Test
    void shutdownClosesItsConnectionsRefusesWritesAndStillReads() throws Exception {
        ObservedDataSource db = new ObservedDataSource(dataSource());
        JdbcMemoryProvider store = provider(JdbcMemoryProvider.builder(db));
        store.syncTurn(turn("w1", "s", "one"));
        assertThat(store.countTurns()).isEqualTo(1);
        assertThat(db.openConnections()).isEqualTo(2);

        store.shutdown();
        store.shutdown();

        assertThat(db.openConnections()).isZero();
        assertThatThrownBy(() -> store.syncTurn(turn("w2", "s", "two")))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("shut down");
        assertThat(store.countTurns()).isEqualTo(1);
        assertThat(db.openConnections()).isZero();
    }

    @Test
    void readsFromOtherThreadsRunWhileTheWriterWrites() throws InterruptedException {
        JdbcMemoryProvider store = provider();
        MemoryManager memory = manager(16, store);
        AtomicBoolean writing = new AtomicBoolean(true);
        CountDownLatch readerStarted = new CountDownLatch(1);
        CompletableFuture<Long> reader = CompletableFuture.supplyAsync(() -> {
            long reads = 0;
            do {
                store.countTurns("s-1");
                store.prefetch("q", "s-1");
                readerStarted.countDown();
                reads++;
            } while (writing.get());
            return reads;
        });
        assertThat(readerStarted.await(30, TimeUnit.SECONDS)).isTrue();

        for (int i = 0; i < 300; i++) {
            memory.syncAll("u" + i, "a" + i, "s-1");
        }
        assertThat(memory.flushPending(FLUSH)).isTrue();
        writing.set(false);

        assertThat(reader.join()).isPositive();
        assertThat(store.countTurns("s-1")).isEqualTo(300);
        assertThat(memory.shutdownAll().failed()).isZero();
    }

    @Test
    void twoProvidersOnTheSameTablesShareTheTurnsLikeReplicas() {
        JdbcMemoryProvider replicaA = provider();
        JdbcMemoryProvider replicaB = provider();
        MemoryManager a = manager(256, replicaA);
        MemoryManager b = manager(256, replicaB);

        a.syncAll("from a", "x", "s-1");
        b.syncAll("from b", "x", "s-1");
        assertThat(a.flushPending(FLUSH)).isTrue();
        assertThat(b.flushPending(FLUSH)).isTrue();

        assertThat(replicaA.turns("s-1")).extracting(StoredTurn::userContent)
                .containsExactlyInAnyOrder("from a", "from b");
        assertThat(replicaB.countTurns()).isEqualTo(2);
    }
}
