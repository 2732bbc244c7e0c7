package dev.memlife.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.memlife.Turn;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Stream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Hostile input through the real JDBC store, property-based (jqwik): session ids, write ids,
 * contents and messages from {@link HostileStrings} are written and read back, on SQLite and on
 * PostgreSQL (the subclasses). Every value read back equals what was written, and no two distinct
 * strings are stored as one: distinct sessions never see each other's turns, distinct write ids
 * are never skipped as replays of each other. Each try uses fresh tables. Tries are few, so the
 * class runs in seconds; the seed of a failure is printed to replay it. (The subclasses' names end
 * in {@code Test}: surefire runs only such classes unless told otherwise.)
 */
abstract class HostileInputProperties {

    static final Instant ACCEPTED = Instant.parse("2026-11-30T11:59:00Z");
    static final Instant NOW = Instant.parse("2026-11-30T12:00:00Z");

    private static final AtomicInteger TRIES = new AtomicInteger();

    /** A builder on this database whose tables are named with {@code prefix}. */
    abstract JdbcMemoryProvider.Builder builder(String prefix) throws Exception;

    /** Drops the tables named with {@code prefix}, where the database outlives the try. */
    abstract void dropTables(String prefix) throws Exception;

    /**
     * A batch of turns in one to three hostile sessions is stored; each session's turns, counts and
     * session end read back exactly as written, in order. The property also checks that its tries
     * wrote every kind of hostile string ({@link HostileStrings#countKinds}).
     */
    @Property(tries = 30)
    void everyValueIsReadBackExactly(@ForAll("batches") List<Turn> batch) throws Exception {
        HostileStrings.countKinds(batch.stream().flatMap(HostileInputProperties::strings).toList());
        withStore(store -> {
            store.syncBatch(batch);

            assertThat(store.countTurns()).isEqualTo(batch.size());
            for (String session : new LinkedHashSet<>(batch.stream().map(Turn::sessionId).toList())) {
                List<StoredTurn> expected = batch.stream().filter(t -> t.sessionId().equals(session))
                        .map(t -> new StoredTurn(t.writeId(), t.sessionId(), t.userContent(), t.assistantContent(),
                                t.messages(), ACCEPTED, NOW))
                        .toList();
                assertThat(store.turns(session)).isEqualTo(expected);
                assertThat(store.countTurns(session)).isEqualTo(expected.size());
            }
            Turn last = batch.get(batch.size() - 1);
            store.initialize(last.sessionId());
            store.onSessionEnd(last.messages());
            assertThat(store.sessionEnds()).containsExactly(
                    new StoredSessionEnd(last.sessionId(), last.messages().size(), NOW));
        });
    }

    /**
     * Strings that differ only where a lossy or non-injective encoding would merge them, used as
     * session ids and as write ids: every write is stored (none skipped as a replay of another),
     * and each session reads and prefetches only its own turn.
     */
    @Property(tries = 30)
    void distinctStringsAreNeverStoredAsOne(@ForAll("nearCollisions") List<String> strings) throws Exception {
        withStore(store -> {
            List<Turn> turns = new ArrayList<>();
            for (int i = 0; i < strings.size(); i++) {
                String id = strings.get(i).isBlank() ? "blank " + i : strings.get(i);
                turns.add(Turn.of(id, strings.get(i), marker(i), "", List.of(), ACCEPTED));
            }
            store.syncBatch(turns);

            assertThat(store.countTurns()).isEqualTo(strings.size());
            for (int i = 0; i < strings.size(); i++) {
                String session = strings.get(i);
                assertThat(store.turns(session)).extracting(StoredTurn::sessionId, StoredTurn::writeId,
                        StoredTurn::userContent).containsExactly(tuple(session,
                        turns.get(i).writeId(), marker(i)));
                String prefetched = store.prefetch("q", session);
                for (int j = 0; j < strings.size(); j++) {
                    assertThat(prefetched.contains(marker(j))).as("session %d's prefetch shows turn %d", i, j)
                            .isEqualTo(i == j);
                }
            }
        });
    }

    @Provide
    Arbitrary<List<Turn>> batches() {
        return HostileStrings.any().list().ofMinSize(1).ofMaxSize(3).flatMap(sessions -> {
            Arbitrary<String> writeIds = HostileStrings.any().filter(s -> !s.isBlank());
            return Combinators.combine(writeIds, Arbitraries.of(sessions), HostileStrings.any(), HostileStrings.any(),
                    HostileStrings.messageLists()).as((w, s, u, a, m) -> Turn.of(w, s, u, a, m, ACCEPTED))
                    .list().ofMinSize(1).ofMaxSize(5).uniqueElements(Turn::writeId);
        });
    }

    @Provide
    Arbitrary<List<String>> nearCollisions() {
        return HostileStrings.nearCollisions();
    }

    /** Runs {@code body} on a store with tables of its own, shut down and dropped after. */
    private void withStore(Consumer<JdbcMemoryProvider> body) throws Exception {
        String prefix = "h" + ProcessHandle.current().pid() + "_" + TRIES.incrementAndGet() + "_";
        JdbcMemoryProvider store = builder(prefix).wallClock(Clock.fixed(NOW, ZoneOffset.UTC)).build();
        try {
            body.accept(store);
        } finally {
            store.shutdown();
            dropTables(prefix);
        }
    }

    private static Stream<String> strings(Turn t) {
        return Stream.concat(Stream.of(t.writeId(), t.sessionId(), t.userContent(), t.assistantContent()),
                t.messages().stream().flatMap(m -> Stream.of(m.role(), m.content())));
    }

    /** A user content that names turn {@code i} and is no part of another turn's. */
    private static String marker(int i) {
        return "<turn " + i + ">";
    }
}
