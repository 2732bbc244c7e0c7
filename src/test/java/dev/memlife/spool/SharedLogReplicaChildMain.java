package dev.memlife.spool;

import dev.memlife.MemoryManager;
import dev.memlife.MemoryProvider;
import dev.memlife.Turn;
import dev.memlife.agent.AgentMemory;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.gateway.AgentLease;
import dev.memlife.gateway.GatewayStopReport;
import dev.memlife.store.JdbcMemoryProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * One replica of {@link SharedLogReplicasProcessTest}, in a child JVM: a real {@link AgentGateway}
 * whose agents each own a {@link MemoryManager} on a {@link SharedLog} on PostgreSQL, all storing
 * into one {@link JdbcMemoryProvider} in the same database, beside two other replicas.
 *
 * <p>One thread per agent it serves writes groups of {@value #GROUP} turns as fast as it can, each
 * group under a lease: {@code syncAll} for each turn, one {@code awaitDurable}, then a {@link
 * ChildJvm#DURABLE} line per turn. A turn's user content is its marker, {@code <agent>-<life>-<n>},
 * and its session is the agent: one conversation per agent, whichever replica serves it. It
 * serves the agents it is started with, and those the test names in a {@code SERVE a,b} line;
 * acquiring such an agent waits for its last holder's lease, and prints {@code CLAIMED <agent>
 * <epoch> <wall ms>}. An agent whose lease another replica took ({@link LeaseLostException}) is
 * dropped: {@code DROPPED <agent>}. The sweeper's adopter acquires an orphaned agent, which
 * replays it, and evicts it again.
 *
 * <p>The store sees each delivery through a probe that records, per agent, when the last delivery of
 * its writes began (wall clock, ms), printed at the end as {@code LAST_DELIVERY_BEGAN {a0=<ms>, ..}}. With a delay argument, each
 * delivery first waits that long, so the store lags behind the log as a remote one does.
 *
 * <p>Usage: {@code SharedLogReplicaChildMain <life> <table prefix> <jdbc url> <agents,..|-> <delay ms>}.
 * On {@code FINISH} each writer ends its group, the gateway stops, the log and the store close, and
 * it prints {@code STOPPED ...} and exits 0.
 */
public final class SharedLogReplicaChildMain {

    static final int GROUP = 16;
    static final Duration LEASE = Duration.ofSeconds(2);
    static final Duration SWEEP = Duration.ofMillis(500);
    private static final Duration WAIT = Duration.ofSeconds(30);

    private final String life;
    private final JdbcMemoryProvider store;
    private final MemoryProvider probe;
    private final AgentGateway gateway;
    private final SharedLog log;
    /** By agent (a turn's session): when this replica last began a delivery of its writes, wall clock ms. */
    private final java.util.Map<String, Long> lastDeliveryBegan = new java.util.concurrent.ConcurrentHashMap<>();
    private final List<Thread> writers = new ArrayList<>();
    private final java.util.Set<String> serving = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final long delayMillis;
    private final java.util.Map<String, Object> agentLocks = new java.util.concurrent.ConcurrentHashMap<>();

    private SharedLogReplicaChildMain(String life, String prefix, String url, long delayMillis) {
        this.life = life;
        this.delayMillis = delayMillis;
        String user = System.getenv().getOrDefault("MEMLIFE_PG_USER", "");
        String password = System.getenv().getOrDefault("MEMLIFE_PG_PASSWORD", "");
        // A replica frozen in the middle of a store transaction must not hold its rows' locks for ever: the
        // replica that takes its agents over stores the same writes (the same ids) and would wait for them.
        String storeUrl = url + (url.contains("?") ? "&" : "?") + "options=-c%20idle_in_transaction_session_timeout%3D1000";
        this.store = JdbcMemoryProvider.builder(storeUrl).user(user).password(password).tablePrefix(prefix).name("pg")
                .retryAttempts(12).retryBackoff(Duration.ofMillis(100)).build();
        this.probe = new DeliveryProbe(store, lastDeliveryBegan, delayMillis);
        this.gateway = AgentGateway.builder().name(life).maxAgents(64).stopTimeout(Duration.ofSeconds(60)).build();
        this.log = SharedLog.postgres(url).user(user).password(password).tablePrefix(prefix).replica(life)
                .lease(LEASE).sweepInterval(SWEEP).claimTimeout(WAIT).adopt(this::adopt).open();
    }

    public static void main(String[] args) throws Exception {
        String life = args[0];
        SharedLogReplicaChildMain replica = new SharedLogReplicaChildMain(life, args[1], args[2],
                Long.parseLong(args[4]));
        ChildOutput.listenToTheTest(command -> {
            if (command.startsWith("SERVE ")) {
                for (String agent : command.substring(6).split(",")) {
                    replica.serve(agent);
                }
            }
        });
        ChildOutput.say("STARTING " + life);
        for (String agent : args[3].equals("-") ? new String[0] : args[3].split(",")) {
            replica.serve(agent);
        }
        ChildOutput.say("READY " + life);
        ChildOutput.awaitFinish();
        replica.stop();
        System.exit(0);
    }

    private synchronized void serve(String agent) {
        synchronized (lockFor(agent)) {
            serving.add(agent);
        }
        Thread t = new Thread(() -> writeUntilFinish(agent), "writer-" + agent);
        t.setUncaughtExceptionHandler((th, e) -> {
            ChildOutput.say("WRITER_FAILED " + agent + " " + e);
            e.printStackTrace();
        });
        writers.add(t);
        t.start();
    }

    private void stop() throws InterruptedException {
        List<Thread> all;
        synchronized (this) {
            all = List.copyOf(writers);
        }
        for (Thread t : all) {
            t.join();
        }
        GatewayStopReport stop = gateway.stop();
        stop.closed().forEach((agent, teardown) -> teardown.drainReport().ifPresent(d -> ChildOutput.say(
                "AGENT_STOP " + agent + " delivered=" + d.delivered() + " failed=" + d.failed() + " abandoned="
                        + d.abandoned() + " stillRunning=" + d.stillRunning() + " rejected=" + d.rejected())));
        log.close();
        store.shutdown();
        SharedLogFigures f = log.figures();
        ChildOutput.say("LAST_DELIVERY_BEGAN " + new java.util.TreeMap<>(lastDeliveryBegan));
        ChildOutput.say("STOPPED complete=" + stop.complete() + " takeovers=" + f.takeovers() + " adoptions="
                + f.adoptions() + " fencedLeases=" + f.fencedLeases() + " fencedWrites=" + f.fencedWrites()
                + " databaseFailures=" + f.databaseFailures() + " groupCommits=" + f.groupCommits());
    }

    /** The gateway's factory: the agent's manager on its log, replayed before its first turn. */
    private AgentMemory newAgent(String agent) {
        AgentLog agentLog = log.agent(agent);
        ChildOutput.say("CLAIMED " + agent + " " + agentLog.epoch() + " " + System.currentTimeMillis());
        MemoryManager manager = MemoryManager.builder().name(life + "/" + agent).spool(agentLog).maxBatchSize(8)
                // the backlog a takeover replays is bounded by the queue: small for the lagging store, and
                // small enough for the others that a survivor replays it in seconds on a busy machine
                .queueCapacity(delayMillis > 0 ? 100 : 1_000)
                .enqueueTimeout(WAIT).drainTimeout(WAIT).build();
        manager.useProvider(probe);
        ChildOutput.say("REPLAYED " + agent + " " + agentLog.epoch() + " " + manager.replaySpool());
        return AgentMemory.create(manager);
    }

    /**
     * The sweeper's adopter: acquiring the agent replays what its dead holder left; then it is let
     * go. An agent this replica serves is replayed by its writer's own acquire.
     */
    private void adopt(String agent) {
        synchronized (lockFor(agent)) { // not while the test's SERVE starts serving it here
            if (serving.contains(agent)) {
                return;
            }
            gateway.acquire(agent, this::newAgent).close();
            gateway.evict(agent);
        }
    }

    private Object lockFor(String agent) {
        return agentLocks.computeIfAbsent(agent, k -> new Object());
    }

    private void writeUntilFinish(String agent) {
        List<String> group = new ArrayList<>(GROUP);
        long n = 0;
        while (!ChildOutput.finishRequested()) {
            group.clear();
            try (AgentLease lease = gateway.acquire(agent, this::newAgent)) {
                MemoryManager memory = lease.agent().memory();
                for (int i = 0; i < GROUP; i++, n++) {
                    String marker = agent + "-" + life + "-" + n;
                    if (!memory.syncAll(marker, "reply to " + marker, agent)) {
                        throw new IllegalStateException("write " + marker + " refused");
                    }
                    group.add(marker);
                }
                if (memory.awaitDurable(WAIT)) {
                    ChildOutput.durable(group); // confirmed: only now
                }
            } catch (LeaseLostException e) {
                ChildOutput.say("DROPPED " + agent);
                serving.remove(agent);
                gateway.evict(agent);
                return;
            } catch (java.util.concurrent.RejectedExecutionException | IllegalStateException e) {
                // evicted under the writer, or the database out of reach for longer than a claim waits: the
                // group was not confirmed, and the next one acquires the agent again
                ChildOutput.say("RETRY " + agent + " " + e.getMessage());
            }
        }
    }

    /** The store, with the time each delivery began recorded, and an optional delay before it. */
    private record DeliveryProbe(JdbcMemoryProvider store, java.util.Map<String, Long> began, long delayMillis)
            implements MemoryProvider {

        @Override
        public String name() {
            return "pg";
        }

        @Override
        public void syncTurn(Turn turn) {
            syncBatch(List.of(turn));
        }

        @Override
        public void syncBatch(List<Turn> turns) {
            long now = System.currentTimeMillis();
            for (Turn t : turns) {
                began.merge(t.sessionId(), now, Math::max);
            }
            if (delayMillis > 0) {
                try {
                    Thread.sleep(delayMillis); // sleep-ok: the lagging store is the behaviour under test
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            store.syncBatch(turns);
            if (System.getenv("MEMLIFE_TRACE_AGENT") != null
                    && turns.get(0).sessionId().equals(System.getenv("MEMLIFE_TRACE_AGENT"))) {
                ChildOutput.say("DLV " + turns.get(0).userContent() + ".." + turns.get(turns.size() - 1).userContent());
            }
        }
    }
}
