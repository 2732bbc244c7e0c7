package dev.memlife.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.MemoryProvider;
import dev.memlife.Message;
import dev.memlife.StoppedException;
import dev.memlife.Turn;
import dev.memlife.WriteStatus;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
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

    /** The database's dialect, for tables a test creates by hand. */
    abstract Dialect dialect();

    JdbcMemoryProvider provider(JdbcMemoryProvider.Builder b) {
        JdbcMemoryProvider p = b.name("store").tablePrefix(prefix).sleeper(sleeper)
                .wallClock(Clock.fixed(NOW, ZoneOffset.UTC)).build();
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
        managers.forEach(MemoryManager::stop);
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
        assertThat(memory.stop().delivered()).isEqualTo(3);
    }

    @Test
    void sessionIdsListsEverySessionWithStoredTurnsOnceInTheOrderOfItsFirstTurn() {
        JdbcMemoryProvider store = provider();
        assertThat(store.sessionIds()).isEmpty();
        String escaped = "\\nul\0id"; // stored escaped (a backslash, a NUL): listed as given
        MemoryManager memory = manager(256, store);

        memory.syncAll("u1", "a1", "s-2");
        memory.syncAll("u2", "a2", "s-1");
        memory.syncAll("u3", "a3", "s-2");
        memory.syncAll("u4", "a4", escaped);
        memory.syncAll("u5", "a5", "s-1");
        assertThat(memory.flushPending(FLUSH)).isTrue();

        assertThat(store.sessionIds()).containsExactly("s-2", "s-1", escaped);
        assertThat(store.countTurns(escaped)).isEqualTo(1);
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
    void oneStoreSharedByManyManagersStoresEveryWriteOnceAndOutlivesThem() throws Exception {
        ObservedDataSource db = new ObservedDataSource(dataSource());
        JdbcMemoryProvider store = provider(JdbcMemoryProvider.builder(db));
        int managers = 20;
        int turnsEach = 5;
        List<MemoryManager> all = new ArrayList<>();
        for (int m = 0; m < managers; m++) {
            MemoryManager memory = MemoryManager.builder().name("agent-" + m).build();
            assertThat(memory.useProvider(store)).isTrue();
            all.add(memory);
        }
        writeAtOnce(all, turnsEach);

        List<String> delivered = new ArrayList<>();
        for (MemoryManager memory : all) {
            DrainReport report = memory.stop();
            assertThat(report.delivered()).as("%s", report).isEqualTo(turnsEach);
            assertThat(report.providersNotShutDown()).isEmpty();
            for (int m = 0; m < managers; m++) {
                for (StoredTurn t : store.turns("s-" + m)) {
                    if (report.statusOf(t.writeId()) == dev.memlife.WriteStatus.DELIVERED) {
                        delivered.add(t.writeId());
                    }
                }
            }
        }
        assertThat(delivered).as("every write, by id, stored once").hasSize(managers * turnsEach)
                .doesNotHaveDuplicates();
        assertThat(store.countTurns()).isEqualTo(managers * turnsEach);
        assertThat(db.maxOpenConnections()).as("two connections at most, whatever the number of managers")
                .isBetween(1L, 2L);
        assertThat(db.openConnections()).as("borrowed per unit of work: an idle store holds none").isZero();
        StoreFigures figures = store.figures();
        assertThat(figures.turnsStored()).isEqualTo(managers * turnsEach);
        assertThat(figures.turnsSkipped()).isZero();
        assertThat(figures.batchesStored()).isBetween(1L, (long) managers * turnsEach);
        assertThat(figures.failedCalls()).isZero();
        assertThat(figures.connectionsOpen()).isZero();

        store.close(); // the application's to close, once every manager is done with it
        assertThat(db.openConnections()).isZero();
    }

    /** A manager named {@code name} that uses (does not own) {@code store}; shut down after the test. */
    MemoryManager sharing(String name, JdbcMemoryProvider store) {
        MemoryManager m = MemoryManager.builder().name(name).build();
        assertThat(m.useProvider(store)).isTrue();
        managers.add(m);
        return m;
    }

    /** Waits until {@code n} writes wait for the store's write connection. */
    static void awaitQueued(JdbcMemoryProvider store, int n) {
        await().atMost(Duration.ofSeconds(30)).until(() -> store.queuedWrites() == n);
    }

    /** Every write id in the turns table, in the order the rows were inserted. */
    List<String> writeIdsInInsertionOrder() throws SQLException {
        List<String> ids = new ArrayList<>();
        try (Connection c = dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT write_id FROM " + prefix + "turns ORDER BY id")) {
            while (rs.next()) {
                ids.add(rs.getString(1));
            }
        }
        return ids;
    }

    @Test
    void writesWaitingForTheWriteConnectionAreCommittedTogetherInOneTransactionInArrivalOrder() throws Exception {
        ObservedDataSource db = new ObservedDataSource(dataSource());
        JdbcMemoryProvider store = provider(JdbcMemoryProvider.builder(db));
        int commitsAtStart = db.commits();
        CountDownLatch release = db.holdNextCommit();
        CompletableFuture<Void> first = CompletableFuture.runAsync(() -> store.syncBatch(List.of(turn("a-1", "s-a", "a"))));
        assertThat(db.awaitHeld()).isTrue();
        List<CompletableFuture<Void>> waiting = new ArrayList<>();
        List<String> expected = new ArrayList<>(List.of("a-1"));
        for (int m = 0; m < 10; m++) {
            String s = "s-" + m;
            waiting.add(CompletableFuture.runAsync(() -> store.syncBatch(List.of(turn(s + ":1", s, "one"),
                    turn(s + ":2", s, "two"), turn(s + ":3", s, "three")))));
            awaitQueued(store, m + 1); // one at a time, so the order they wait in is known
            expected.addAll(List.of(s + ":1", s + ":2", s + ":3"));
        }
        store.initialize("s-end");
        waiting.add(CompletableFuture.runAsync(() -> store.onSessionEnd(List.of(Message.user("bye")))));
        awaitQueued(store, 11);

        release.countDown();
        first.get(30, TimeUnit.SECONDS);
        CompletableFuture.allOf(waiting.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);

        assertThat(db.commits() - commitsAtStart).as("the held commit, then one for all 11 writes that waited")
                .isEqualTo(2);
        assertThat(writeIdsInInsertionOrder()).isEqualTo(expected);
        assertThat(store.sessionEnds()).containsExactly(new StoredSessionEnd("s-end", 1, NOW));
        assertThat(store.queuedWrites()).isZero();
    }

    @Test
    void aBatchThatFailsInACombinedTransactionFailsAloneAndEveryOtherBatchIsStoredById() throws Exception {
        ObservedDataSource db = new ObservedDataSource(dataSource());
        JdbcMemoryProvider store = provider(JdbcMemoryProvider.builder(db).retryAttempts(2)
                .retryBackoff(Duration.ofMillis(100)));
        rejectUserContent(prefix, "poison");
        MemoryManager a = sharing("a", store);
        MemoryManager b = sharing("b", store);
        MemoryManager c = sharing("c", store);
        MemoryManager d = sharing("d", store);
        CountDownLatch release = db.holdNextCommit();
        a.syncAll("held", "x", "s-a");
        assertThat(db.awaitHeld()).isTrue();
        b.syncAll("poison", "x", "s-b"); // the database rejects this one, whatever transaction it is in
        awaitQueued(store, 1);
        c.syncAll("fine", "x", "s-c");
        awaitQueued(store, 2);
        d.syncAll("also fine", "x", "s-d");
        awaitQueued(store, 3);

        release.countDown();
        for (MemoryManager m : List.of(a, b, c, d)) {
            assertThat(m.flushPending(FLUSH)).isTrue();
        }
        Map<String, DrainReport> reports = Map.of("s-a", a.stop(), "s-b", b.stop(), "s-c",
                c.stop(), "s-d", d.stop());

        DrainReport failed = reports.get("s-b");
        assertThat(failed.failed()).isEqualTo(1);
        assertThat(failed.failuresByProvider()).isEqualTo(Map.of("store", 1L));
        String poisonId = failed.failedWriteIds().get(0);
        for (String s : List.of("s-a", "s-c", "s-d")) {
            assertThat(reports.get(s).delivered()).as(s).isEqualTo(1);
            assertThat(reports.get(s).failed()).as(s).isZero();
        }
        List<String> stored = writeIdsInInsertionOrder();
        assertThat(stored).hasSize(3).doesNotContain(poisonId);
        for (String s : List.of("s-a", "s-c", "s-d")) {
            List<StoredTurn> turns = store.turns(s);
            assertThat(turns).hasSize(1);
            assertThat(reports.get(s).statusOf(turns.get(0).writeId())).as(s).isEqualTo(WriteStatus.DELIVERED);
        }
        assertThat(failed.statusOf(poisonId)).isEqualTo(WriteStatus.FAILED);
        assertThat(sleeper.waits()).as("only the failing batch waited between attempts of its own")
                .containsExactly(Duration.ofMillis(100));
    }

    @Test
    void aCombinedTransactionThatFailsBlamesNoBatchEachIsStoredAlone() throws Exception {
        ObservedDataSource db = new ObservedDataSource(dataSource());
        JdbcMemoryProvider store = provider(JdbcMemoryProvider.builder(db));
        int commitsAtStart = db.commits();
        CountDownLatch release = db.holdNextCommit();
        CompletableFuture<Void> first = CompletableFuture.runAsync(() -> store.syncBatch(List.of(turn("w1", "s-1", "one"))));
        assertThat(db.awaitHeld()).isTrue();
        CompletableFuture<Void> second = CompletableFuture.runAsync(() -> store.syncBatch(List.of(turn("w2", "s-2", "two"))));
        awaitQueued(store, 1);
        CompletableFuture<Void> third = CompletableFuture.runAsync(() -> store.syncBatch(List.of(turn("w3", "s-3", "three"),
                turn("w4", "s-3", "four"))));
        awaitQueued(store, 2);
        db.failNextCommits(1); // the combined commit of the two that waited

        release.countDown();
        CompletableFuture.allOf(first, second, third).get(30, TimeUnit.SECONDS);

        assertThat(db.commits() - commitsAtStart).as("held, combined (failed), then each alone").isEqualTo(4);
        assertThat(writeIdsInInsertionOrder()).containsExactlyInAnyOrder("w1", "w2", "w3", "w4");
        assertThat(store.turns("s-3")).extracting(StoredTurn::userContent).containsExactly("three", "four");
        assertThat(sleeper.waits()).as("each alone succeeded at its first attempt").isEmpty();
    }

    @Test
    void managersWritingAtOnceThroughOneStoreKeepEachManagersOrderAndStoreEveryWriteOnce() throws Exception {
        JdbcMemoryProvider store = provider();
        int agents = 16;
        int turnsEach = 150;
        List<MemoryManager> all = new ArrayList<>();
        for (int m = 0; m < agents; m++) {
            all.add(sharing("agent-" + m, store));
        }
        writeAtOnce(all, turnsEach);

        List<String> expected = new ArrayList<>();
        for (int t = 0; t < turnsEach; t++) {
            expected.add("turn " + t);
        }
        for (int m = 0; m < agents; m++) {
            DrainReport report = all.get(m).stop();
            assertThat(report.delivered()).as("%s", report).isEqualTo(turnsEach);
            List<StoredTurn> turns = store.turns("s-" + m);
            assertThat(turns).extracting(StoredTurn::userContent).as("s-%d in its order", m).isEqualTo(expected);
            assertThat(turns).allSatisfy(t -> assertThat(report.statusOf(t.writeId())).isEqualTo(WriteStatus.DELIVERED));
        }
        assertThat(writeIdsInInsertionOrder()).hasSize(agents * turnsEach).doesNotHaveDuplicates();
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
        DrainReport report = memory.stop();
        assertThat(report.failed()).isEqualTo(1);
        assertThat(report.failuresByProvider()).isEqualTo(Map.of("store", 1L));
        assertThat(sleeper.waits()).hasSize(2);
        assertThat(store.countTurns()).isZero();
        assertThat(store.figures()).isEqualTo(new StoreFigures(0, 0, 0, 0, 3, 1, 0));
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
        StoreFigures figures = store.figures();
        assertThat(figures.batchesStored()).isEqualTo(4);
        assertThat(figures.turnsStored()).isEqualTo(3);
        assertThat(figures.turnsSkipped()).isEqualTo(5); // a, b; then c; then a once more
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
        DrainReport report = memory.stop();

        assertThat(report.delivered()).isEqualTo(5);
        assertThat(report.failed()).isEqualTo(5);
        assertThat(report.failuresByProvider()).isEqualTo(Map.of("store", 5L));
        assertThat(report.complete()).isTrue();
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
        assertThat(db.maxOpenConnections()).isBetween(1L, 2L);
        assertThat(db.openConnections()).as("a DataSource's connections are handed back after each use").isZero();

        try (JdbcMemoryProvider closing = store) {
            closing.shutdown();
        } // close() after shutdown(): both idempotent

        assertThat(db.openConnections()).isZero();
        assertThatThrownBy(() -> store.syncTurn(turn("w2", "s", "two")))
                .isInstanceOf(StoppedException.class).hasMessageContaining("is stopped; sync");
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
        assertThat(memory.stop().failed()).isZero();
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

    /**
     * Regression, defect "an unpaired surrogate becomes '?'": session {@code "alice\ud800"} was
     * stored as {@code "alice?"}, so the two sessions were one and each saw the other's turns in
     * its reads and prefetch; write ids merged the same way, so a write was skipped as a replay.
     * Now every string is stored exactly and the two stay apart.
     */
    @Test
    void sessionsThatDifferOnlyByAnUnpairedSurrogateStayApart() {
        JdbcMemoryProvider store = provider();
        String alice = "alice\ud800";
        String question = "alice?";

        store.syncBatch(List.of(turn("w\udc00", alice, "lone surrogate"), turn("w?", question, "question mark")));

        assertThat(store.turns(alice)).extracting(StoredTurn::sessionId, StoredTurn::writeId,
                StoredTurn::userContent).containsExactly(tuple(alice, "w\udc00", "lone surrogate"));
        assertThat(store.turns(question)).extracting(StoredTurn::sessionId, StoredTurn::writeId,
                StoredTurn::userContent).containsExactly(tuple(question, "w?", "question mark"));
        assertThat(store.countTurns(alice)).isEqualTo(1);
        assertThat(store.countTurns(question)).isEqualTo(1);
        assertThat(store.prefetch("q", alice)).contains("lone surrogate").doesNotContain("question mark");
        assertThat(store.prefetch("q", question)).contains("question mark").doesNotContain("lone surrogate");
    }

    /** Normal text is stored as itself: a person can find it with plain SQL; other strings are marked. */
    @Test
    void normalTextIsStoredAsItselfAndQueryableWithPlainSql() throws Exception {
        JdbcMemoryProvider store = provider();
        store.syncBatch(List.of(turn("w-1", "chat:1", "hello \uD83D\uDE42 'quoted' \\ back"),
                turn("w-2", "chat:\u0000", "nul")));

        try (Connection c = dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT session_id, user_content FROM " + prefix + "turns "
                        + "WHERE session_id = 'chat:1'")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(2)).isEqualTo("hello \uD83D\uDE42 'quoted' \\ back");
            assertThat(rs.next()).isFalse();
        }
        try (Connection c = dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT session_id FROM " + prefix + "turns WHERE write_id = 'w-2'")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("\uFDD0chat:\\0");
        }
    }

    /**
     * Tables created by the previous memlife (schema version 1: every string as UTF-8 bytes, no
     * version table) are migrated when a store starts: every row reads back as it was written, in
     * order, and new writes and replays work on the migrated tables.
     */
    @Test
    void tablesOfSchemaVersion1AreMigratedWithEveryRowIntact() throws Exception {
        Instant accepted = NOW.minusSeconds(60);
        List<StoredTurn> old = List.of(
                new StoredTurn("w-1", "s-1", "hello", "re: hello", List.of(Message.user("hello")), accepted, NOW),
                new StoredTurn("w-2", "\uFDD0starts with U+FDD0", "nul\u0000 \uD83D\uDE42 \\0", "", List.of(), accepted,
                        NOW),
                new StoredTurn("w-3", "s-1", "again", "re", List.of(new Message("to\u0000ol", "")), accepted, NOW));
        createVersion1Tables(old, new StoredSessionEnd("s-1", 4, NOW));

        JdbcMemoryProvider store = provider();

        assertThat(store.turns("s-1")).containsExactly(old.get(0), old.get(2));
        assertThat(store.turns("\uFDD0starts with U+FDD0")).containsExactly(old.get(1));
        assertThat(store.sessionEnds()).containsExactly(new StoredSessionEnd("s-1", 4, NOW));
        store.syncBatch(List.of(old.get(0).toTurn(), turn("w-4", "s-1", "new")));
        assertThat(store.turns("s-1")).extracting(StoredTurn::writeId).containsExactly("w-1", "w-3", "w-4");
        assertThat(provider().countTurns()).isEqualTo(4); // a second start leaves the migrated tables alone
        try (Connection c = dataSource().getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT version FROM " + prefix + "schema_version")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getInt(1)).isEqualTo(Schema.VERSION);
            assertThat(rs.next()).isFalse();
        }
    }

    @Test
    void tablesOfAnUnknownSchemaVersionAreRefusedByName() throws Exception {
        provider().shutdown();
        try (Connection c = dataSource().getConnection();
                Statement s = c.createStatement()) {
            s.execute("UPDATE " + prefix + "schema_version SET version = 3");
        }

        assertThatThrownBy(this::provider).isInstanceOf(JdbcStoreException.class)
                .hasMessageContaining("the tables " + prefix + "turns and " + prefix + "session_ends")
                .hasMessageContaining("have schema version 3, which this memlife does not know (it uses version 2)");
        assertThat(sleeper.waits()).isEmpty();
    }

    /** Creates the tables as the previous memlife did and fills them as it would have. */
    private void createVersion1Tables(List<StoredTurn> turns, StoredSessionEnd end) throws SQLException {
        Dialect d = dialect();
        try (Connection c = dataSource().getConnection();
                Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + prefix + "turns (id " + d.idColumn + ", write_id " + d.bytesType
                    + " NOT NULL UNIQUE, session_id " + d.bytesType + " NOT NULL, user_content " + d.bytesType
                    + " NOT NULL, assistant_content " + d.bytesType + " NOT NULL, messages " + d.bytesType
                    + " NOT NULL, accepted_at BIGINT NOT NULL, stored_at BIGINT NOT NULL)");
            s.execute("CREATE INDEX " + prefix + "turns_by_session ON " + prefix + "turns (session_id, id)");
            s.execute("CREATE TABLE " + prefix + "session_ends (id " + d.idColumn + ", session_id " + d.bytesType
                    + " NOT NULL, message_count INTEGER NOT NULL, ended_at BIGINT NOT NULL)");
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + prefix + "turns (write_id, "
                    + "session_id, user_content, assistant_content, messages, accepted_at, stored_at) "
                    + "VALUES (?, ?, ?, ?, ?, ?, ?)")) {
                for (StoredTurn t : turns) {
                    ps.setBytes(1, utf8(t.writeId()));
                    ps.setBytes(2, utf8(t.sessionId()));
                    ps.setBytes(3, utf8(t.userContent()));
                    ps.setBytes(4, utf8(t.assistantContent()));
                    ps.setBytes(5, version1Messages(t.messages()));
                    ps.setLong(6, t.acceptedAt().toEpochMilli());
                    ps.setLong(7, t.storedAt().toEpochMilli());
                    ps.executeUpdate();
                }
            }
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + prefix + "session_ends (session_id, "
                    + "message_count, ended_at) VALUES (?, ?, ?)")) {
                ps.setBytes(1, utf8(end.sessionId()));
                ps.setInt(2, end.messageCount());
                ps.setLong(3, end.endedAt().toEpochMilli());
                ps.executeUpdate();
            }
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** A message list in format 1: version byte 1, the count, each role and content as length and UTF-8. */
    private static byte[] version1Messages(List<Message> messages) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(1);
        writeInt(out, messages.size());
        for (Message m : messages) {
            for (String part : List.of(m.role(), m.content())) {
                writeInt(out, utf8(part).length);
                out.writeBytes(utf8(part));
            }
        }
        return out.toByteArray();
    }

    private static void writeInt(ByteArrayOutputStream out, int v) {
        out.writeBytes(ByteBuffer.allocate(4).putInt(v).array());
    }

    /** Every manager writes {@code turnsEach} turns ("turn 0", ...) into its session "s-<index>", all starting at once. */
    private static void writeAtOnce(List<MemoryManager> all, int turnsEach) throws Exception {
        CountDownLatch go = new CountDownLatch(1);
        List<CompletableFuture<Void>> writers = new ArrayList<>();
        for (int m = 0; m < all.size(); m++) {
            MemoryManager memory = all.get(m);
            String session = "s-" + m;
            writers.add(CompletableFuture.runAsync(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                for (int t = 0; t < turnsEach; t++) {
                    assertThat(memory.syncAll("turn " + t, "a", session)).isTrue();
                }
            }));
        }
        go.countDown();
        CompletableFuture.allOf(writers.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
    }
}
