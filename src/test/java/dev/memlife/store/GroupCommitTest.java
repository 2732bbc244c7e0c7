package dev.memlife.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.memlife.Turn;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link GroupCommit} on its own: which writes share a transaction, in which order, and whom a
 * failure blames, with a transaction the test writes (it records each group and may hold or fail
 * it) on a real connection it never uses.
 */
@Timeout(60)
class GroupCommitTest {

    @TempDir
    Path dir;

    private final RecordingSleeper sleeper = new RecordingSleeper();
    private final List<List<String>> groups = Collections.synchronizedList(new ArrayList<>());
    private final CountDownLatch firstHeld = new CountDownLatch(1);
    private final CountDownLatch releaseFirst = new CountDownLatch(1);
    private final AtomicInteger transactions = new AtomicInteger();
    /** Fails a transaction (before it commits) whose group has a write this matches. */
    private volatile Predicate<String> failing = name -> false;
    private volatile Supplier<Throwable> failure = () -> new SQLException("the test failed this transaction");
    private ConnectionHolder connection;

    @BeforeEach
    void connect() {
        connection = new ConnectionHolder(Database.ofUrl("jdbc:sqlite:" + dir.resolve("unused.db"), new java.util.Properties(),
                Duration.ofSeconds(5)));
    }

    private GroupCommit groupCommit(int attempts) {
        Retry retry = new Retry("store", "test database", attempts, Duration.ofMillis(100), sleeper);
        return new GroupCommit(connection, retry, (c, writes) -> {
            List<String> names = new ArrayList<>();
            for (GroupCommit.Write w : writes) {
                names.add(name(w));
            }
            groups.add(names);
            if (transactions.getAndIncrement() == 0) {
                firstHeld.countDown();
                try {
                    if (!releaseFirst.await(30, TimeUnit.SECONDS)) {
                        throw new SQLException("never released");
                    }
                } catch (InterruptedException e) {
                    throw new SQLException("interrupted", e);
                }
            }
            if (names.stream().anyMatch(failing)) {
                Throwable t = failure.get();
                if (t instanceof SQLException) {
                    throw (SQLException) t;
                }
                if (t instanceof RuntimeException) {
                    throw (RuntimeException) t;
                }
                throw (Error) t;
            }
            for (GroupCommit.Write w : writes) {
                w.stored = w.rows;
            }
        });
    }

    /** A batch of {@code rows} turns, named by its first turn's user content. */
    private static GroupCommit.Write batch(String name, int rows) {
        Turn t = Turn.of(name + "-1", "s", name, "a", List.of(), Instant.EPOCH);
        return GroupCommit.Write.turns(Collections.nCopies(rows, t), 0);
    }

    private static String name(GroupCommit.Write w) {
        return w.turns != null ? w.turns.get(0).userContent() : "end:" + w.endedSession;
    }

    /** Stores {@code write} on a thread of its own, once the writes before it are queued. */
    private CompletableFuture<Void> queue(GroupCommit gc, GroupCommit.Write write, int queuedBefore) {
        CompletableFuture<Void> done = CompletableFuture.runAsync(() -> gc.store(write, "store " + name(write)));
        await().atMost(Duration.ofSeconds(30)).until(() -> gc.queued() == queuedBefore + 1);
        return done;
    }

    @Test
    void writesThatWaitedShareATransactionInArrivalOrderUpToMaxRowsAndABiggerWriteGoesAlone() throws Exception {
        GroupCommit gc = groupCommit(3);
        CompletableFuture<Void> held = CompletableFuture.runAsync(() -> gc.store(batch("held", 1), "held"));
        assertThat(firstHeld.await(30, TimeUnit.SECONDS)).isTrue();
        List<CompletableFuture<Void>> waiting = new ArrayList<>();
        List<GroupCommit.Write> writes = List.of(batch("a", 1_000), batch("b", 1_000), batch("c", 1_000),
                GroupCommit.Write.sessionEnd("s-1", 3, 0), batch("d", 1_000), batch("e", 100), batch("big", 5_000),
                batch("f", 1));
        for (int i = 0; i < writes.size(); i++) {
            waiting.add(queue(gc, writes.get(i), i));
        }

        releaseFirst.countDown();
        held.get(30, TimeUnit.SECONDS);
        CompletableFuture.allOf(waiting.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);

        assertThat(GroupCommit.MAX_ROWS).isEqualTo(4_096);
        // 4,001 rows, and e's 100 more would pass 4,096; e and big together too; big is bigger on its own
        assertThat(groups).containsExactly(List.of("held"), List.of("a", "b", "c", "end:s-1", "d"), List.of("e"),
                List.of("big"), List.of("f"));
        assertThat(writes).allSatisfy(w -> assertThat(w.stored).isEqualTo(w.rows));
        assertThat(gc.queued()).isZero();
    }

    @Test
    void aWriteThatFailsInACombinedTransactionIsRetriedAloneAndOnlyItFails() throws Exception {
        GroupCommit gc = groupCommit(2);
        failing = "poison"::equals;
        CompletableFuture<Void> held = CompletableFuture.runAsync(() -> gc.store(batch("held", 1), "held"));
        assertThat(firstHeld.await(30, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Void> before = queue(gc, batch("before", 3), 0);
        CompletableFuture<Void> poison = queue(gc, batch("poison", 2), 1);
        CompletableFuture<Void> after = queue(gc, batch("after", 1), 2);

        releaseFirst.countDown();
        held.get(30, TimeUnit.SECONDS);
        before.get(30, TimeUnit.SECONDS);
        after.get(30, TimeUnit.SECONDS);

        assertThatThrownBy(() -> poison.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .cause().isInstanceOf(JdbcStoreException.class)
                .hasMessageContaining("could not store poison").hasMessageContaining("after 2 attempts");
        assertThat(groups.subList(0, 2)).containsExactly(List.of("held"), List.of("before", "poison", "after"));
        assertThat(groups.subList(2, groups.size())).as("then each alone, the failing one twice")
                .containsExactlyInAnyOrder(List.of("before"), List.of("poison"), List.of("poison"), List.of("after"));
        assertThat(sleeper.waits()).as("only the failing write waited between its own attempts")
                .containsExactly(Duration.ofMillis(100));
    }

    @Test
    void aTransactionOfOneWriteIsItsFirstAttemptAndTheRetryRuleGoesOnFromTheSecond() throws Exception {
        GroupCommit gc = groupCommit(3);
        releaseFirst.countDown();
        AtomicInteger failures = new AtomicInteger(2);
        failing = name -> failures.getAndDecrement() > 0;

        gc.store(batch("w", 2), "store w");

        assertThat(groups).containsExactly(List.of("w"), List.of("w"), List.of("w"));
        assertThat(sleeper.waits()).containsExactly(Duration.ofMillis(100), Duration.ofMillis(200));
    }

    @Test
    void whatATransactionOfOneThrowsReachesItsCallerOnlyAndTheWritesBehindItStillCommit() throws Exception {
        GroupCommit gc = groupCommit(3);
        failing = "broken"::equals;
        failure = () -> new IllegalStateException("a bug in a driver");
        CompletableFuture<Void> broken = CompletableFuture.runAsync(() -> gc.store(batch("broken", 1), "broken"));
        assertThat(firstHeld.await(30, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Void> next = queue(gc, batch("next", 1), 0);

        releaseFirst.countDown();

        assertThatThrownBy(() -> broken.get(30, TimeUnit.SECONDS)).cause()
                .isInstanceOf(IllegalStateException.class).hasMessage("a bug in a driver");
        next.get(30, TimeUnit.SECONDS);
        assertThat(groups).containsExactly(List.of("broken"), List.of("next"));
        assertThat(sleeper.waits()).as("not retried, as before group commit").isEmpty();
    }

    @Test
    void anErrorInACombinedTransactionBlamesNoneOfItsWrites() throws Exception {
        GroupCommit gc = groupCommit(1);
        AtomicInteger errors = new AtomicInteger(1);
        failing = name -> name.equals("x") && errors.getAndDecrement() > 0;
        failure = () -> new StackOverflowError("deep in a driver");
        CompletableFuture<Void> held = CompletableFuture.runAsync(() -> gc.store(batch("held", 1), "held"));
        assertThat(firstHeld.await(30, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<Void> x = queue(gc, batch("x", 1), 0);
        CompletableFuture<Void> y = queue(gc, batch("y", 1), 1);

        releaseFirst.countDown();
        held.get(30, TimeUnit.SECONDS);
        x.get(30, TimeUnit.SECONDS);
        y.get(30, TimeUnit.SECONDS);

        assertThat(groups.subList(0, 2)).containsExactly(List.of("held"), List.of("x", "y"));
        assertThat(groups.subList(2, groups.size())).containsExactlyInAnyOrder(List.of("x"), List.of("y"));
    }
}
