package dev.memlife.spool;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownReport;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.gateway.AgentLease;
import dev.memlife.gateway.GatewayStopReport;
import dev.memlife.store.JdbcMemoryProvider;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One gateway replica of {@link SpoolReplicasPostgresProcessTest}, in a child JVM: a real {@link
 * AgentGateway} whose agents each own a {@link MemoryManager} on a spool of their own ({@code
 * <spool root>/<agent key>}), all storing into one {@link JdbcMemoryProvider} on the PostgreSQL
 * database named by {@code MEMLIFE_PG_URL}, {@code MEMLIFE_PG_USER} and {@code
 * MEMLIFE_PG_PASSWORD}, under the given table prefix. Another replica (another child) writes
 * into the same tables at the same time.
 *
 * <p>It first leases every agent once, so each is created and replays what its spool holds from
 * an earlier life of this replica; then one thread per agent writes groups of {@value
 * SpoolCrashChildMain#GROUP} turns as fast as it can, each group under a lease: {@code syncAll}
 * for each turn, one {@code awaitDurable}, then a {@link ChildJvm#DURABLE} line per turn. A
 * turn's user content is its marker, {@code <life>-<agent>-<n>}. It writes until it is killed, or
 * until the test says {@link ChildJvm#FINISH}: then each agent finishes its group, the gateway
 * stops (every agent flushed, closed, its spool emptied) and the store shuts down.
 *
 * <p>Usage: {@code SpoolReplicaChildMain <life> <spool root> <table prefix> <agents>}.
 * Prints {@code STARTING}, {@code READY replayed=<n>} once every agent replayed, and {@code
 * STOPPED complete=.. failed=.. abandoned=..} after a clean stop; exits 0 then.
 */
public final class SpoolReplicaChildMain {

    private static final Duration WAIT = Duration.ofSeconds(20);

    private final String life;
    private final Path spoolRoot;
    private final JdbcMemoryProvider store;
    private final AgentGateway gateway;
    private final AtomicLong replayed = new AtomicLong();

    private SpoolReplicaChildMain(String life, Path spoolRoot, JdbcMemoryProvider store, int agents) {
        this.life = life;
        this.spoolRoot = spoolRoot;
        this.store = store;
        this.gateway = AgentGateway.builder().name("replica-" + life).maxAgents(agents)
                .stopTimeout(Duration.ofSeconds(60)).build();
    }

    public static void main(String[] args) throws Exception {
        ChildOutput.listenToTheTest();
        String life = args[0];
        Path spoolRoot = Path.of(args[1]);
        String tablePrefix = args[2];
        int agents = Integer.parseInt(args[3]);
        ChildOutput.say("STARTING " + life);

        JdbcMemoryProvider store = JdbcMemoryProvider.builder(System.getenv("MEMLIFE_PG_URL"))
                .user(System.getenv().getOrDefault("MEMLIFE_PG_USER", ""))
                .password(System.getenv().getOrDefault("MEMLIFE_PG_PASSWORD", ""))
                .tablePrefix(tablePrefix).name("pg").build();
        SpoolReplicaChildMain replica = new SpoolReplicaChildMain(life, spoolRoot, store, agents);
        List<String> keys = new ArrayList<>();
        for (int a = 0; a < agents; a++) {
            keys.add("agent" + a);
        }
        for (String key : keys) {
            replica.gateway.acquire(key, replica::newAgent).close(); // created, its spool replayed
        }
        ChildOutput.say("READY replayed=" + replica.replayed.get());

        List<Thread> writers = new ArrayList<>();
        List<Throwable> failures = new ArrayList<>();
        for (String key : keys) {
            Thread t = new Thread(() -> replica.writeUntilFinish(key), "writer-" + key);
            t.setUncaughtExceptionHandler((th, e) -> {
                synchronized (failures) {
                    failures.add(e);
                }
            });
            writers.add(t);
            t.start();
        }
        for (Thread t : writers) {
            t.join();
        }
        if (!failures.isEmpty()) {
            ChildOutput.say("WRITER_FAILED " + failures);
            failures.forEach(Throwable::printStackTrace);
            System.exit(2);
        }
        GatewayStopReport stop = replica.gateway.stop();
        store.shutdown();
        long failed = 0;
        long abandoned = 0;
        for (TeardownReport r : stop.closed().values()) {
            DrainReport d = r.drainReport().orElseThrow();
            failed += d.failed();
            abandoned += d.abandoned() + d.stillRunning();
        }
        ChildOutput.say("STOPPED complete=" + stop.complete() + " closed=" + stop.closed().size() + " failed="
                + failed + " abandoned=" + abandoned + " " + stop);
        System.exit(0);
    }

    /** The gateway's factory: an agent over a manager on its own spool, replayed before its first turn. */
    private AgentMemory newAgent(String key) {
        MemoryManager manager = MemoryManager.builder().name(life + "/" + key)
                .spool(Spool.open(spoolRoot.resolve(key)))
                .enqueueTimeout(WAIT).drainTimeout(Duration.ofSeconds(30)).build();
        manager.useProvider(store); // one store for every agent of the replica; shut down by main
        replayed.addAndGet(manager.replaySpool());
        return AgentMemory.create(manager);
    }

    /** Writes groups of turns for one agent, each group under one lease, until the test says finish. */
    private void writeUntilFinish(String key) {
        List<String> group = new ArrayList<>(SpoolCrashChildMain.GROUP);
        long n = 0;
        while (!ChildOutput.finishRequested()) {
            group.clear();
            try (AgentLease lease = gateway.acquire(key, this::newAgent)) {
                MemoryManager memory = lease.agent().memory();
                for (int i = 0; i < SpoolCrashChildMain.GROUP; i++, n++) {
                    String marker = life + "-" + key + "-" + n;
                    if (!memory.syncAll(marker, "reply to " + marker, life + "-" + key)) {
                        throw new IllegalStateException("write " + marker + " refused");
                    }
                    group.add(marker);
                }
                if (!memory.awaitDurable(WAIT)) {
                    throw new IllegalStateException("writes " + group.get(0) + ".. not durable within " + WAIT);
                }
            }
            ChildOutput.durable(group);
        }
    }
}
