package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.Turn;
import dev.memlife.store.CuttableDataSource;
import dev.memlife.store.PostgresAvailability;
import dev.memlife.testing.GatedProvider;
import dev.memlife.testing.RecordingProvider;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The shared log on a real PostgreSQL, with two replicas in this JVM, each with its own
 * connections: one that the test cuts off the database (it "dies" or "freezes"), one that takes
 * its agents over. Leases of 1 s, sweeps of 200 ms.
 */
@Timeout(60)
class SharedLogTest {

    private static final Duration LEASE = Duration.ofSeconds(1);
    private static final Duration SWEEP = Duration.ofMillis(200);
    private static final Duration WAIT = Duration.ofSeconds(20);

    private final String prefix = "sl_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10) + "_";
    private final List<AutoCloseable> opened = new ArrayList<>();

    @BeforeEach
    void requirePostgres() {
        PostgresAvailability.require();
    }

    @AfterEach
    void dropTables() throws Exception {
        for (AutoCloseable c : opened) {
            c.close();
        }
        PostgresAvailability.dropTables(prefix, "shared_log", "shared_log_leases");
    }

    private SharedLog replica(String name, CuttableDataSource db, Consumer<String> adopter) {
        SharedLog.Builder b = SharedLog.postgres(db).tablePrefix(prefix).replica(name).lease(LEASE)
                .sweepInterval(SWEEP).claimTimeout(Duration.ofSeconds(10)).closeTimeout(Duration.ofSeconds(5));
        if (adopter != null) {
            b.adopt(adopter);
        }
        SharedLog log = b.open();
        opened.add(log);
        return log;
    }

    private static MemoryManager manager(String name, AgentLog log, RecordingProvider provider) {
        MemoryManager m = MemoryManager.builder().name(name).spool(log).build();
        m.addProvider(provider);
        return m;
    }

    private static List<String> contents(List<Turn> turns) {
        return turns.stream().map(Turn::userContent).toList();
    }

    private static List<String> markers(String run, int n) {
        return IntStream.range(0, n).mapToObj(i -> run + "-" + i).toList();
    }

    @Test
    void aReplicaCutOffPastItsLeaseLeavesItsCommittedWritesToTheNextHolderAndDeliversNothingMore() {
        CuttableDataSource dbA = new CuttableDataSource();
        SharedLog a = replica("A", dbA, null);
        SharedLog b = replica("B", new CuttableDataSource(), null);
        GatedProvider heldAtA = new GatedProvider("store-at-A");
        MemoryManager atA = manager("A/agent-1", a.agent("agent-1"), heldAtA);
        List<String> accepted = markers("a", 20);
        for (String m : accepted) {
            assertThat(atA.syncAll(m, "reply " + m, "s-1")).isTrue();
        }
        assertThat(atA.awaitDurable(WAIT)).isTrue();
        assertThat(heldAtA.awaitHeld(WAIT)).isTrue(); // A's writer is inside the first delivery

        dbA.cut(); // A can neither renew nor commit: its lease runs out
        RecordingProvider atB = new RecordingProvider("store-at-B");
        AgentLog taken = b.agent("agent-1"); // waits for A's lease to expire, then takes it over
        assertThat(taken.epoch()).isEqualTo(2);
        MemoryManager managerB = manager("B/agent-1", taken, atB);
        assertThat(managerB.replaySpool()).isEqualTo(20);
        assertThat(atB.awaitTurns(20, WAIT)).isTrue();
        assertThat(contents(atB.turns())).containsExactlyElementsOf(accepted);
        String prefixA = atB.turns().get(0).writeId().substring(0, atB.turns().get(0).writeId().lastIndexOf(':'));
        assertThat(atB.turns()).extracting(Turn::writeId)
                .containsExactlyElementsOf(IntStream.rangeClosed(1, 20).mapToObj(i -> prefixA + ":" + i).toList());

        heldAtA.open(); // the delivery A had begun before it was cut off ends; nothing after it starts
        dbA.restore(); // A's next renewal finds the lease taken
        await().atMost(WAIT).until(() -> a.figures().fencedLeases() == 1);
        assertThatThrownBy(() -> atA.syncAll("a-late", "r", "s-1")).isInstanceOf(LeaseLostException.class)
                .hasMessageContaining("agent-1").hasMessageContaining("epoch 1");
        DrainReport stopA = atA.stop();
        assertThat(contents(heldAtA.turns())).containsExactly("a-0");
        assertThat(stopA.delivered()).isEqualTo(1);
        assertThat(stopA.failedWriteIds()).hasSize(19).containsExactlyElementsOf(
                IntStream.rangeClosed(2, 20).mapToObj(i -> prefixA + ":" + i).toList());
        assertThat(a.figures().fencedWrites()).isEqualTo(1); // a-late
        assertThat(b.figures().takeovers()).isEqualTo(1);

        DrainReport stopB = managerB.stop();
        assertThat(stopB.delivered()).isEqualTo(20);
        assertThat(stopB.complete()).isTrue();
    }

    @Test
    void aStoppedManagerReleasesItsLeaseSoTheNextReplicaClaimsAtOnceWithNothingToReplay() throws Exception {
        SharedLog a = replica("A", new CuttableDataSource(), null);
        SharedLog b = replica("B", new CuttableDataSource(), null);
        RecordingProvider atA = new RecordingProvider("store");
        MemoryManager m = manager("A/agent-2", a.agent("agent-2"), atA);
        for (String s : markers("x", 50)) {
            m.syncAll(s, "r", "s");
        }
        assertThat(m.awaitDurable(WAIT)).isTrue();
        assertThat(m.stop().delivered()).isEqualTo(50);
        assertThat(contents(atA.turns())).containsExactlyElementsOf(markers("x", 50));

        long before = System.nanoTime();
        AgentLog next = b.agent("agent-2");
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - before)).isLessThan(LEASE.toMillis());
        RecordingProvider atB = new RecordingProvider("store");
        MemoryManager mb = manager("B/agent-2", next, atB);
        assertThat(mb.replaySpool()).isZero();
        mb.syncAll("y-0", "r", "s");
        assertThat(mb.awaitDurable(WAIT)).isTrue();
        mb.stop();
        assertThat(contents(atB.turns())).containsExactly("y-0");
        try (Connection c = PostgresAvailability.connect()) {
            SharedLog.Lease lease = SharedLog.inspect(c, prefix).get(0);
            assertThat(lease.agent()).isEqualTo("agent-2");
            assertThat(lease.owner()).isEqualTo("B");
            assertThat(lease.epoch()).isEqualTo(2);
            assertThat(lease.released()).isTrue();
            assertThat(lease.backlog()).isZero();
        }
        assertThat(b.figures().takeovers()).isZero(); // released, not taken over
    }

    @Test
    void writesFromManyThreadsShareGroupCommits() throws Exception {
        SharedLog a = replica("A", new CuttableDataSource(), null);
        int agents = 4;
        int producers = 8;
        int each = 250;
        List<MemoryManager> managers = new ArrayList<>();
        List<RecordingProvider> stores = new ArrayList<>();
        for (int i = 0; i < agents; i++) {
            RecordingProvider store = new RecordingProvider("store-" + i);
            stores.add(store);
            managers.add(manager("A/agent-" + i, a.agent("agent-" + i), store));
        }
        CountDownLatch done = new CountDownLatch(producers);
        Map<Integer, Throwable> failures = new ConcurrentHashMap<>();
        for (int p = 0; p < producers; p++) {
            int producer = p;
            Thread t = new Thread(() -> {
                try {
                    MemoryManager m = managers.get(producer % agents);
                    for (int i = 0; i < each; i++) {
                        m.syncAll("p" + producer + "-" + i, "r", "s-" + producer);
                        if (i % 25 == 24 && !m.awaitDurable(WAIT)) {
                            throw new AssertionError("not durable");
                        }
                    }
                } catch (Throwable e) {
                    failures.put(producer, e);
                } finally {
                    done.countDown();
                }
            });
            t.start();
        }
        assertThat(done.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(failures).isEmpty();
        long writes = (long) producers * each;
        assertThat(a.figures().committed()).isEqualTo(writes);
        assertThat(a.figures().groupCommits()).isLessThan(writes / 4);
        for (MemoryManager m : managers) {
            m.stop();
        }
        for (int p = 0; p < producers; p++) {
            int producer = p;
            assertThat(stores.get(p % agents).turns()).extracting(Turn::userContent)
                    .filteredOn(s -> s.startsWith("p" + producer + "-"))
                    .containsExactlyElementsOf(markers("p" + producer, each));
        }
    }

    @Test
    void theSweeperHandsADeadReplicasBacklogToTheAdopterWithinTheLeasePlusASweep() {
        CuttableDataSource dbA = new CuttableDataSource();
        SharedLog a = replica("A", dbA, null);
        RecordingProvider atB = new RecordingProvider("store-at-B");
        SharedLog[] b = new SharedLog[1];
        b[0] = replica("B", new CuttableDataSource(), agent -> {
            MemoryManager m = manager("B/" + agent, b[0].agent(agent), atB);
            m.replaySpool();
            m.stop();
        });
        GatedProvider heldAtA = new GatedProvider("store-at-A");
        MemoryManager atA = manager("A/agent-3", a.agent("agent-3"), heldAtA);
        for (String s : markers("d", 10)) {
            atA.syncAll(s, "r", "s");
        }
        assertThat(atA.awaitDurable(WAIT)).isTrue();
        assertThat(heldAtA.awaitHeld(WAIT)).isTrue();
        long died = System.nanoTime();
        dbA.cut(); // A dies: it never renews again

        await().atMost(WAIT).until(() -> atB.turns().size() == 10);
        long deliveredAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - died);
        assertThat(contents(atB.turns())).containsExactlyElementsOf(markers("d", 10));
        assertThat(b[0].figures().adoptions()).isGreaterThanOrEqualTo(1);
        assertThat(b[0].figures().takeovers()).isEqualTo(1);
        // the lease, one sweep, and a margin for a busy machine
        assertThat(deliveredAfter).isLessThan(LEASE.plus(SWEEP).plusSeconds(3).toMillis());
        assertThat(b[0].figures().lastTakeoverLag()).isLessThan(SWEEP.plusSeconds(3));
        heldAtA.open();
        atA.stop();
    }

    @Test
    void aManagerStoppedWhileTheDatabaseIsOutOfReachReturnsWithinItsBudgetAndTheLeaseIsReleasedLater()
            throws Exception {
        CuttableDataSource db = new CuttableDataSource();
        SharedLog a = replica("A", db, null);
        RecordingProvider store = new RecordingProvider("store");
        MemoryManager m = manager("A/agent-5", a.agent("agent-5"), store);
        for (String s : markers("o", 3)) {
            m.syncAll(s, "r", "s");
        }
        assertThat(m.awaitDurable(WAIT)).isTrue();
        assertThat(store.awaitTurns(3, WAIT)).isTrue();
        db.cut();
        await().atMost(WAIT).until(() -> a.figures().databaseFailures() > 0);

        Duration budget = Duration.ofSeconds(2);
        long before = System.nanoTime();
        DrainReport report = m.stop(budget);
        assertThat(Duration.ofNanos(System.nanoTime() - before)).isLessThan(budget.plusSeconds(1));
        assertThat(report.delivered()).isEqualTo(3);

        db.restore(); // the worker releases the lease as soon as the database answers
        await().atMost(WAIT).until(() -> {
            try (Connection c = PostgresAvailability.connect()) {
                SharedLog.Lease lease = SharedLog.inspect(c, prefix).get(0);
                return lease.released() && lease.owner().equals("A") && lease.deliveredPosition() == 3;
            }
        });
        assertThat(a.figures().heldAgents()).isZero();
    }

    @Test
    void aSecondManagerOfOneAgentOnOneReplicaWaitsAndDoesNotFenceTheFirst() {
        SharedLog a = SharedLog.postgres(new CuttableDataSource()).tablePrefix(prefix).replica("A").lease(LEASE)
                .sweepInterval(SWEEP).claimTimeout(Duration.ofMillis(300)).open();
        opened.add(a);
        RecordingProvider store = new RecordingProvider("store");
        MemoryManager first = manager("A/agent-6", a.agent("agent-6"), store);
        first.syncAll("f-0", "r", "s");

        assertThatThrownBy(() -> a.agent("agent-6")).isInstanceOf(LeaseHeldException.class)
                .hasMessageContaining("another manager of this replica");
        first.syncAll("f-1", "r", "s"); // not fenced
        assertThat(first.awaitDurable(WAIT)).isTrue();
        first.stop();
        assertThat(contents(store.turns())).containsExactly("f-0", "f-1");

        AgentLog next = a.agent("agent-6"); // the first let it go
        assertThat(next.epoch()).isEqualTo(2);
        manager("A/agent-6", next, new RecordingProvider("store")).stop();
    }
}
