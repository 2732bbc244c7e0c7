package dev.memlife.soak;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.MemoryProvider;
import dev.memlife.Message;
import dev.memlife.QueueFullException;
import dev.memlife.StoppedException;
import dev.memlife.WriteStatus;
import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownMode;
import dev.memlife.agent.TeardownReport;
import dev.memlife.faults.Accounting;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.gateway.AgentLease;
import dev.memlife.gateway.EvictionResult;
import dev.memlife.gateway.GatewayStopReport;
import dev.memlife.gateway.ResetResult;
import dev.memlife.session.BackgroundCommit;
import dev.memlife.session.SessionCommitTracker;
import dev.memlife.session.SessionDrainReport;
import dev.memlife.store.JdbcMemoryProvider;
import dev.memlife.store.JdbcStoreException;
import dev.memlife.testing.ManualTicker;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A randomized soak of the whole write path, on demand (it is not part of {@code mvn verify}):
 *
 * <pre>
 * mvn -Psoak verify                                   # 10 minutes, a random seed (printed)
 * mvn -Psoak verify -Dsoak.minutes=1 -Dsoak.seed=42   # shorter, repeatable operations
 * mvn -Psoak verify -Dsoak.seconds=20                 # a quick try
 * </pre>
 *
 * The profile skips the unit tests (add {@code -DskipTests=false} to run both) and runs this class
 * in a forked JVM ({@code -Xmx1g}) in the integration-test phase; a failed check fails the build.
 * Other settings: {@code -Dsoak.threads} (chat threads, default 6), {@code -Dsoak.sessions}
 * (session keys, default 200), {@code -Dsoak.thinkMillis} (longest pause between a thread's steps,
 * default 8), {@code -Dsoak.maxHeapGrowthMb} (default 64). The seed repeats the operations; the
 * thread schedule does not repeat.
 *
 * <p><b>What runs.</b> Epochs of 15 to 45 s, each with a new {@link AgentGateway} (small random LRU
 * cap, idle TTL on a {@link ManualTicker} that the soak moves, random reset timeout and eviction
 * mode) and a {@link SessionCommitTracker}. Chat threads pick session keys (seven in eight times
 * among ten hot ones) and lease agents, each of which owns a {@link MemoryManager} over a real
 * SQLite store ({@link JdbcMemoryProvider} on {@code target/soak/memlife-soak.db}) and a {@link
 * FlakyProvider} that throws (RuntimeException or Error), is slow, or hangs until the soak releases
 * it, in random order; managers get random drain, flush, extraction and queue settings. Between
 * turns the threads {@code /reset}, evict, sweep, commit sessions inline and in the background,
 * tear agents down themselves in all three modes, and shut managers down directly. A timer
 * releases hung calls and moves the idle ticker. At an epoch's end the tracker drains and the
 * gateway stops, sometimes while the last turns still run.
 *
 * <p><b>What is checked</b>, per manager, once its teardown and its providers' shutdown are over:
 * {@link Accounting#assertExact} over the ids the flaky provider was handed; every accepted id in
 * exactly one bucket; every id the report calls delivered in the database exactly once, no
 * abandoned id in it, every still-running id in it or logged as failed by the writer, no row that
 * is not an accepted write; the rejected count; shutdown once, no hook after it. After each epoch:
 * no memlife thread alive (joined, bounded). At the end: no row of no manager, no memlife thread
 * alive, heap growth (used heap after {@code System.gc()}) within the bound. It prints a table and
 * the failed checks, and exits with status 1 if any check failed. Warnings go to {@code
 * target/soak/soak.log}.
 *
 * <p>A writer thread still parked after its epoch is counted and fails the run; the soak then
 * unparks it (a correct writer re-checks its state on any wakeup, sees the shutdown and ends) so
 * that a long soak does not pile up thousands of leaked threads on a shared machine, and so that
 * the other checks of later epochs still mean something.
 */
public final class GatewaySoak {

    private static final List<TeardownMode> MODES = List.of(TeardownMode.values());
    private static final Duration WAIT = Duration.ofSeconds(60);

    private final long seed;
    private final Duration duration;
    private final int threads = Integer.getInteger("soak.threads", 6);
    private final int sessions = Integer.getInteger("soak.sessions", 200);
    private final int thinkMillis = Integer.getInteger("soak.thinkMillis", 8);
    private final long maxHeapGrowth = Long.getLong("soak.maxHeapGrowthMb", 64) << 20;
    private final Path dir = Path.of("target", "soak");
    private final String url = "jdbc:sqlite:" + dir.resolve("memlife-soak.db").toAbsolutePath();
    private final FlakyProvider.Hangs hangs = new FlakyProvider.Hangs();
    /** Every count the table shows, by name; incremented from any thread. */
    private final Map<String, AtomicLong> counts = new ConcurrentHashMap<>();
    private final Map<TeardownMode, Long> owners = new EnumMap<>(TeardownMode.class);
    private final List<String> failures = Collections.synchronizedList(new ArrayList<>());
    private final AtomicLong agentSeq = new AtomicLong();
    private LogTap log;
    private Connection db;

    private GatewaySoak(long seed, Duration duration) {
        this.seed = seed;
        this.duration = duration;
    }

    public static void main(String[] args) throws Exception {
        String seconds = System.getProperty("soak.seconds", "");
        String minutes = System.getProperty("soak.minutes", "");
        Duration duration = !seconds.isBlank() ? Duration.ofSeconds(Long.parseLong(seconds.trim()))
                : Duration.ofMinutes(minutes.isBlank() ? 10 : Long.parseLong(minutes.trim()));
        String seedText = System.getProperty("soak.seed", "");
        long seed = seedText.isBlank() ? System.nanoTime() : Long.parseLong(seedText.trim());
        System.exit(new GatewaySoak(seed, duration).run() ? 0 : 1);
    }

    /** One agent the gateway's factory made, and what its turns were told about their writes. */
    private record Tracked(String name, AgentMemory agent, FlakyProvider flaky, boolean flakyFirst,
            AtomicLong accepted, AtomicLong rejected) {}

    /** One gateway's life: its cache, its session tracker, its agents and its chat threads. */
    private static final class Epoch {
        final int number;
        final ManualTicker ticker = new ManualTicker();
        final AgentGateway gateway;
        final SessionCommitTracker tracker;
        final Map<AgentMemory, Tracked> agents = new ConcurrentHashMap<>();
        volatile boolean stopping;

        Epoch(int number, Random r) {
            this.number = number;
            this.gateway = AgentGateway.builder().name("soak-" + number).ticker(ticker)
                    .maxAgents(8 + r.nextInt(25))
                    .idleTtl(Duration.ofMinutes(1)).sweepInterval(Duration.ofMinutes(5))
                    .resetTimeout(millis(r, 20, 200, 5_000))
                    .stopTimeout(Duration.ofSeconds(20))
                    .housekeepingThreads(1 + r.nextInt(4))
                    .evictionMode(r.nextBoolean() ? TeardownMode.RELEASE : TeardownMode.COMMIT_THEN_RELEASE)
                    .build();
            this.tracker = SessionCommitTracker.builder().name("soak-" + number).build();
        }
    }

    // ---- the run ---------------------------------------------------------------------------------

    private boolean run() throws Exception {
        long heapStart = heapUsedAfterGc();
        int threadsStart = ManagementFactory.getThreadMXBean().getThreadCount();
        Files.createDirectories(dir);
        for (String file : List.of("memlife-soak.db", "memlife-soak.db-wal", "memlife-soak.db-shm", "leaked-threads.txt")) {
            Files.deleteIfExists(dir.resolve(file));
        }
        log = LogTap.install(dir.resolve("soak.log"));
        JdbcMemoryProvider.builder(url).build().shutdown(); // creates the schema
        db = DriverManager.getConnection(url);
        try (Statement s = db.createStatement()) {
            s.execute("PRAGMA busy_timeout = 10000");
        }
        System.out.printf("memlife soak: %s, seed %d (rerun: -Dsoak.seed=%d), %d threads, %d sessions, db %s%n",
                format(duration), seed, seed, threads, sessions, url);

        Random master = new Random(seed);
        long start = System.nanoTime();
        long end = start + duration.toNanos();
        for (int n = 1; System.nanoTime() < end; n++) {
            long length = Math.min(TimeUnit.SECONDS.toNanos(15 + master.nextInt(31)), end - System.nanoTime());
            runEpoch(n, master.nextLong(), Math.max(length, TimeUnit.SECONDS.toNanos(1)));
        }
        long rows = countRows("SELECT COUNT(*) FROM memlife_turns");
        count("rows of no manager", rows - get("ids in the DB"));
        if (rows != get("ids in the DB")) {
            fail(rows - get("ids in the DB") + " rows in the database belong to no manager's accepted writes");
        }
        db.close();
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);

        List<String> leaked = memlifeThreadsAfterJoin(Duration.ofSeconds(40));
        if (!leaked.isEmpty()) {
            Files.write(dir.resolve("leaked-threads.txt"), leaked);
            fail(leaked.size() + " memlife threads still alive at the end (" + byRole(leaked) + "), e.g. "
                    + leaked.subList(0, Math.min(5, leaked.size())) + "; all in " + dir.resolve("leaked-threads.txt"));
        }
        long heapEnd = heapUsedAfterGc();
        int threadsEnd = ManagementFactory.getThreadMXBean().getThreadCount();
        if (heapEnd - heapStart > maxHeapGrowth) {
            fail("heap grew by " + mb(heapEnd - heapStart) + ", more than the bound of " + mb(maxHeapGrowth));
        }
        if (log.untakenLateLines() > 0) {
            fail(log.untakenLateLines() + " late-write log lines name no still-running write of a checked manager");
        }
        log.flush();
        printTable(elapsed, heapStart, heapEnd, threadsStart, threadsEnd, leaked);
        if (!failures.isEmpty()) {
            System.out.println("\nFAILED: " + failures.size() + " check(s) failed (seed " + seed + "):");
            failures.stream().limit(40).forEach(f -> System.out.println("  - " + f));
            return false;
        }
        System.out.println("\nOK: every accepted write accounted for by id; the database holds every delivered write "
                + "once and no abandoned one; no memlife thread left; heap within bound");
        return true;
    }

    private void runEpoch(int number, long epochSeed, long lengthNanos) throws Exception {
        Random r = new Random(epochSeed);
        Epoch e = new Epoch(number, r);
        hangs.enable();
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(GatewaySoak::timerThread);
        Random chaos = new Random(r.nextLong());
        timer.scheduleWithFixedDelay(() -> chaos(e, chaos), 50, 50, TimeUnit.MILLISECONDS);
        CompletableFuture<Void> over = new CompletableFuture<>();
        timer.schedule(() -> over.complete(null), lengthNanos, TimeUnit.NANOSECONDS);

        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            Random own = new Random(r.nextLong());
            Thread t = new Thread(() -> chat(e, own), "soak-chat-" + number + "-" + i);
            workers.add(t);
            t.start();
        }
        over.join(); // the epoch's length, on the timer
        e.stopping = true;
        boolean race = r.nextBoolean(); // stop while the last turns still run, or after they ended
        if (!race) {
            join(workers);
        }
        SessionDrainReport drained = e.tracker.stop(Duration.ofSeconds(5));
        GatewayStopReport stop = e.gateway.stop(Duration.ofSeconds(20));
        join(workers);
        timer.shutdownNow();
        timer.awaitTermination(WAIT.toMillis(), TimeUnit.MILLISECONDS);
        hangs.disable(); // nothing hangs from now on: every detached write and extraction can end
        count("gateways", 1);
        count("gateway stops not completed in time", stop.complete() ? 0 : 1);
        count("session commits by the drain", drained.commits());
        for (Tracked t : e.agents.values()) {
            check(t);
        }
        List<String> left = memlifeThreadsAfterJoin(Duration.ofSeconds(5));
        if (!left.isEmpty()) {
            count("memlife threads alive after their epoch", left.size());
            fail("epoch " + number + ": " + left.size() + " memlife threads still alive after every agent was torn "
                    + "down and checked (" + byRole(left) + "), e.g. " + left.subList(0, Math.min(3, left.size())));
            count("  of them ended once unparked", wakeParkedWriters(left));
        }
        System.out.printf("  epoch %d: %,d agents, %,d writes accepted so far, stop %s, %d memlife threads left, "
                + "%d failures%n", number, e.agents.size(), get("writes accepted"),
                stop.complete() ? "complete" : "NOT complete: " + stop, left.size(), failures.size());
    }

    private static Thread timerThread(Runnable r) {
        Thread t = new Thread(r, "soak-timer");
        t.setDaemon(true);
        return t;
    }

    private void join(List<Thread> workers) throws InterruptedException {
        for (Thread t : workers) {
            t.join(WAIT.toMillis());
            if (t.isAlive()) {
                fail("chat thread " + t.getName() + " did not end within " + WAIT.toSeconds() + " s");
            }
        }
    }

    // ---- chat threads ------------------------------------------------------------------------------

    private void chat(Epoch e, Random r) {
        while (!e.stopping) {
            try {
                step(e, r);
            } catch (StoppedException refused) {
                if (!e.gateway.isStopped()) {
                    fail("unexpected " + refused);
                }
            } catch (JdbcStoreException storeDown) {
                count("agents not created: store unreachable");
            } catch (Throwable t) {
                fail("chat thread: unexpected " + t);
            }
            try {
                Thread.sleep(r.nextInt(thinkMillis + 1)); // sleep-ok: the user's pause between turns
            } catch (InterruptedException ie) {
                return;
            }
        }
    }

    private void step(Epoch e, Random r) {
        String key = "session-" + (r.nextInt(8) != 0 ? r.nextInt(10) : r.nextInt(sessions));
        int dice = r.nextInt(1_000);
        if (dice < 820) {
            turn(e, r, key);
        } else if (dice < 850) {
            ResetResult reset = e.gateway.reset(key);
            if (reset.status() != ResetResult.Status.NOT_CACHED) {
                count("resets (/reset)");
            }
            if (reset.status() == ResetResult.Status.TIMED_OUT) {
                count("resets that stopped waiting");
            }
        } else if (dice < 880) {
            if (e.gateway.evict(key).status() == EvictionResult.Status.EVICTED) {
                count("evictions");
            }
        } else if (dice < 890) {
            count("idle sweeps by the soak: agents evicted", e.gateway.sweepIdle().size());
        } else {
            Optional<Tracked> cached = e.gateway.peek(key).map(e.agents::get);
            if (cached.isEmpty()) {
                return;
            }
            Tracked t = cached.get();
            if (dice < 920) {
                if (e.tracker.commitInBackground(t.name).status() == BackgroundCommit.Status.STARTED) {
                    count("session commits started in the background");
                }
            } else if (dice < 940) {
                if (e.tracker.commit(t.name, t.agent, true, Duration.ofSeconds(2)).committed()) {
                    count("session commits inline");
                }
            } else if (dice < 990) {
                if (t.agent.teardown(MODES.get(r.nextInt(MODES.size()))).ran()) {
                    count("teardowns by the host itself");
                }
            } else {
                t.agent.memory().stop(millis(r, 0, 5, 50));
                count("managers shut down directly");
            }
        }
    }

    private void turn(Epoch e, Random r, String key) {
        try (AgentLease lease = e.gateway.acquire(key, k -> newAgent(e, r, k))) {
            Tracked t = e.agents.get(lease.agent());
            MemoryManager memory = t.agent.memory();
            if (r.nextInt(50) == 0) {
                try {
                    memory.prefetchAll("what do you remember?", key);
                    count("prefetches");
                } catch (StoppedException shutDown) {
                    if (!memory.isShutdown()) {
                        throw shutDown;
                    }
                }
            }
            for (int i = 1 + r.nextInt(3); i > 0; i--) {
                String user = "turn " + r.nextInt(1_000_000) + " of " + key;
                String reply = "noted: " + Long.toHexString(r.nextLong());
                t.agent.append(Message.user(user));
                t.agent.append(Message.assistant(reply));
                try {
                    boolean accepted = r.nextInt(4) == 0
                            ? memory.syncAll(user, reply, key, List.of(Message.user(user), Message.assistant(reply)))
                            : memory.syncAll(user, reply, key);
                    (accepted ? t.accepted : t.rejected).incrementAndGet();
                } catch (RejectedExecutionException refused) { // QueueFullException, or no writer thread
                    t.rejected.incrementAndGet();
                    count(refused instanceof QueueFullException ? "writes refused on a full queue"
                            : "writes refused: no writer thread");
                }
            }
            e.tracker.markTurnCompleted(t.name, t.agent);
            count("turns");
        }
    }

    /** The gateway's factory: a manager over the SQLite store and a flaky provider, random settings. */
    private AgentMemory newAgent(Epoch e, Random r, String key) {
        String name = "e" + e.number + "-a" + agentSeq.incrementAndGet();
        JdbcMemoryProvider sqlite = JdbcMemoryProvider.builder(url).name("sqlite").build();
        FlakyProvider flaky = new FlakyProvider(r.nextLong(), hangs);
        MemoryManager.Builder b = MemoryManager.builder().name(name).drainTimeout(millis(r, 0, 20, 200, 2_000))
                .providerShutdownTimeout(Duration.ofSeconds(2));
        if (r.nextInt(8) == 0) {
            b.queueCapacity(8 + r.nextInt(56)).enqueueTimeout(millis(r, 0, 10));
        }
        MemoryManager memory = b.build();
        boolean flakyFirst = r.nextBoolean();
        for (MemoryProvider p : flakyFirst ? List.of(flaky, sqlite) : List.<MemoryProvider>of(sqlite, flaky)) {
            memory.addProvider(p);
        }
        memory.initializeAll(key);
        AgentMemory agent = AgentMemory.builder(memory).flushTimeout(millis(r, 0, 50, 1_000, 10_000))
                .extractionTimeout(millis(r, 100, 2_000)).build();
        e.agents.put(agent, new Tracked(name, agent, flaky, flakyFirst, new AtomicLong(), new AtomicLong()));
        count("managers");
        return agent;
    }

    /** The timer's tick: releases hung calls now and then, and moves the idle ticker. */
    private void chaos(Epoch e, Random r) {
        if (e.stopping) {
            // The gateway's stop deadline is on this ticker: move it steadily, so the stop's 20 s
            // pass in about 20 ticks rather than in one random jump of minutes.
            e.ticker.advance(Duration.ofSeconds(1));
        }
        int dice = r.nextInt(100);
        if (dice < 30) {
            hangs.releaseAll();
        } else if (dice < 40 && !e.stopping) {
            e.ticker.advance(Duration.ofSeconds(r.nextInt(10))); // the next acquire sweeps every 5 minutes
        } else if (dice < 42 && !e.stopping) {
            e.ticker.advance(Duration.ofSeconds(r.nextInt(120))); // past the TTL of every idle agent, often
            count("idle sweeps by the soak: agents evicted", e.gateway.sweepIdle().size());
        }
    }

    // ---- the per-id check --------------------------------------------------------------------------

    private void check(Tracked t) throws Exception {
        Optional<TeardownReport> result;
        try {
            result = t.agent.awaitTeardown(WAIT);
        } catch (IllegalStateException failed) {
            fail(t.name + ": its teardown failed: " + failed.getCause());
            return;
        }
        if (result.isEmpty() || result.get().drainReport().isEmpty()) {
            fail(t.name + ": not torn down within " + WAIT.toSeconds() + " s: " + result);
            return;
        }
        owners.merge(result.get().owner(), 1L, Long::sum);
        DrainReport report = result.get().drainReport().get();
        // The writer lets go of its providers after its last write, a still-running one included.
        if (!t.flaky.awaitShutdown(WAIT)) {
            fail(t.name + ": the flaky provider was not shut down within " + WAIT.toSeconds() + " s");
            return;
        }
        if (t.flaky.shutdowns() != 1 || t.flaky.hooksAfterShutdown() != 0) {
            fail(t.name + ": " + t.flaky.shutdowns() + " shutdowns, " + t.flaky.hooksAfterShutdown()
                    + " hooks after shutdown");
        }
        long accepted = t.accepted.get();
        List<String> received = t.flaky.receivedIds();
        try {
            Accounting.assertExact(report, accepted, received, t.flakyFirst);
        } catch (AssertionError wrong) {
            fail(t.name + ": " + wrong.getMessage());
        }
        long rejected = t.agent.memory().rejectedWrites();
        count("writes accepted", accepted);
        count("writes rejected", t.rejected.get());
        if (rejected != t.rejected.get()) {
            fail(t.name + ": the manager counts " + rejected + " rejected writes, its callers saw " + t.rejected.get());
        }
        String prefix = prefixOf(received, report);
        if (prefix == null) {
            if (accepted > 0) {
                fail(t.name + ": " + accepted + " writes accepted but no id of them anywhere");
                count("unaccounted ids", accepted);
            }
            return;
        }
        Map<Long, Integer> stored = storedSeqs(prefix);
        long unaccounted = Math.abs(report.submitted() - report.rejected() - accepted);
        for (long seq = 1; seq <= accepted; seq++) {
            String id = prefix + ':' + seq;
            int rows = stored.getOrDefault(seq, 0);
            WriteStatus outcome = report.statusOf(id);
            count(bucket(outcome), 1);
            if (outcome != WriteStatus.STILL_RUNNING) {
                checkNotLoggedLate(t, id, outcome);
            }
            switch (outcome) {
                case DELIVERED:
                    if (rows == 1) {
                        count("delivered ids in the DB once", 1);
                    } else {
                        count("delivered ids not in the DB exactly once", 1);
                        fail(t.name + ": delivered " + id + " is in the database " + rows + " times");
                    }
                    break;
                case FAILED:
                    count("failed ids in the DB (the other provider failed)", rows);
                    break;
                case ABANDONED:
                    if (rows > 0) {
                        count("abandoned ids in the DB", 1);
                        fail(t.name + ": abandoned " + id + " is in the database");
                    }
                    break;
                case STILL_RUNNING:
                    checkStillRunning(t, id, rows);
                    break;
                default:
                    unaccounted++;
                    fail(t.name + ": " + id + " is in no bucket of " + report);
            }
        }
        for (long seq : stored.keySet()) {
            if (seq < 1 || seq > accepted) {
                fail(t.name + ": the database holds " + prefix + ":" + seq + ", which was never accepted");
            }
        }
        count("ids in the DB", stored.size());
        count("unaccounted ids", unaccounted);
    }

    /** A write still running at the deadline went on to every provider: in the DB, or logged as failed. */
    private void checkStillRunning(Tracked t, String id, int rows) {
        Boolean everyProviderTookIt = log.takeLateOutcome(id);
        if (rows > 0) {
            count("still-running ids later in the DB", 1);
        } else if (Boolean.FALSE.equals(everyProviderTookIt)) {
            count("still-running ids logged as failed", 1);
        } else {
            count("unaccounted ids", 1);
            fail(t.name + ": still-running " + id + " is not in the database and its end was logged as "
                    + everyProviderTookIt);
        }
    }

    /**
     * The writer may log a write as finished after the drain deadline that the report counts as
     * delivered or failed: it finished after the drain abandoned the rest, before the report was
     * made. Its logged end must agree with the report; an abandoned write must never be logged.
     */
    private void checkNotLoggedLate(Tracked t, String id, WriteStatus outcome) {
        Boolean everyProviderTookIt = log.takeLateOutcome(id);
        if (everyProviderTookIt == null) {
            return;
        }
        count("writes reported " + bucket(outcome) + " but logged as finished late", 1);
        if (outcome == WriteStatus.ABANDONED || everyProviderTookIt != (outcome == WriteStatus.DELIVERED)) {
            fail(t.name + ": " + id + " is " + outcome + " in the report but its late end was logged with every "
                    + "provider taking it = " + everyProviderTookIt);
        }
    }

    private static String bucket(WriteStatus outcome) {
        switch (outcome) {
            case DELIVERED: return "delivered";
            case FAILED: return "failed";
            case ABANDONED: return "abandoned";
            case STILL_RUNNING: return "still running";
            default: return "in no bucket";
        }
    }

    private static String prefixOf(List<String> received, DrainReport report) {
        for (List<String> ids : List.of(received, report.abandonedWriteIds(), report.stillRunningWriteIds(),
                report.failedWriteIds())) {
            if (!ids.isEmpty()) {
                String id = ids.get(0);
                return id.substring(0, id.lastIndexOf(':'));
            }
        }
        return null;
    }

    /**
     * Rows stored under this manager's ids, by sequence number: a range scan of the write-id index.
     * The store keeps a plain string (as these ids are) as itself in its text column.
     */
    private Map<Long, Integer> storedSeqs(String prefix) throws SQLException {
        Map<Long, Integer> seqs = new HashMap<>();
        try (PreparedStatement ps = db.prepareStatement(
                "SELECT write_id FROM memlife_turns WHERE write_id >= ? AND write_id < ?")) {
            ps.setString(1, prefix + ':');
            ps.setString(2, prefix + ';'); // ';' follows ':'
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    long seq;
                    try {
                        seq = Long.parseLong(rs.getString(1).substring(prefix.length() + 1));
                    } catch (NumberFormatException notOurs) {
                        seq = -1;
                    }
                    seqs.merge(seq, 1, Integer::sum);
                }
            }
        }
        return seqs;
    }

    private long countRows(String sql) throws SQLException {
        try (Statement s = db.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    // ---- threads, heap, the table --------------------------------------------------------------------

    /** Waits (joins, bounded) for the memlife threads still alive to end; the names of those that did not. */
    private static List<String> memlifeThreadsAfterJoin(Duration budget) throws InterruptedException {
        long deadline = System.nanoTime() + budget.toNanos();
        for (Thread t : memlifeThreads()) {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
        }
        List<String> names = new ArrayList<>();
        for (Thread t : memlifeThreads()) {
            names.add(t.getName());
        }
        Collections.sort(names);
        return names;
    }

    /** Thread counts by role, the word after "memlife-": writer, housekeeping, extract, commit... */
    private static Map<String, Integer> byRole(List<String> names) {
        Map<String, Integer> roles = new java.util.TreeMap<>();
        for (String name : names) {
            String rest = name.substring("memlife-".length());
            roles.merge(rest.contains("-") ? rest.substring(0, rest.indexOf('-')) : rest, 1, Integer::sum);
        }
        return roles;
    }

    /**
     * Unparks the writer threads among {@code names} and waits (bounded) for them to end. A writer
     * that stays parked after its manager's shutdown is a leak, already counted as a failure; once
     * unparked it sees the shutdown and ends. Without this a 10-minute soak would pile up tens of
     * thousands of parked threads on a shared machine.
     *
     * @return how many of them ended
     */
    private static long wakeParkedWriters(List<String> names) throws InterruptedException {
        java.util.Set<String> leaked = new java.util.HashSet<>(names);
        List<Thread> writers = new ArrayList<>();
        for (Thread t : memlifeThreads()) {
            if (t.getName().startsWith("memlife-writer-") && leaked.contains(t.getName())) {
                writers.add(t);
                LockSupport.unpark(t);
            }
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        long ended = 0;
        for (Thread t : writers) {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            ended += t.isAlive() ? 0 : 1;
        }
        return ended;
    }

    private static List<Thread> memlifeThreads() {
        List<Thread> out = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("memlife-") && t.isAlive()) {
                out.add(t);
            }
        }
        return out;
    }

    private static long heapUsedAfterGc() {
        for (int i = 0; i < 4; i++) {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private void printTable(Duration elapsed, long heapStart, long heapEnd, int threadsStart, int threadsEnd,
            List<String> leaked) {
        List<String[]> rows = new ArrayList<>();
        rows.add(row("duration", format(elapsed) + " (asked " + format(duration) + ", seed " + seed + ")"));
        rows.add(row("gateways (each stopped, then a new one)", get("gateways")));
        rows.add(row("gateway stops not completed in time", get("gateway stops not completed in time")));
        rows.add(row("managers (agents created)", get("managers")));
        rows.add(row("  torn down by close / commit-then-release / release", owners.getOrDefault(TeardownMode.CLOSE, 0L)
                + " / " + owners.getOrDefault(TeardownMode.COMMIT_THEN_RELEASE, 0L) + " / "
                + owners.getOrDefault(TeardownMode.RELEASE, 0L)));
        for (String e : List.of("turns", "resets (/reset)", "resets that stopped waiting", "evictions",
                "teardowns by the host itself", "managers shut down directly", "session commits started in the background",
                "session commits inline", "prefetches", "agents not created: store unreachable")) {
            rows.add(row(e, get(e)));
        }
        rows.add(row("idle sweeps by the soak: agents evicted", get("idle sweeps by the soak: agents evicted")));
        rows.add(row("session commits by the drain", get("session commits by the drain")));
        rows.add(row("provider calls hung / released by the soak", hangs.hung.get() + " / " + hangs.releasedBySoak.get()));
        rows.add(row("writes accepted", get("writes accepted")));
        rows.add(row("  delivered", get("delivered")));
        rows.add(row("  failed (a provider threw)", get("failed")));
        rows.add(row("  abandoned at a drain deadline", get("abandoned")));
        rows.add(row("  still running at a drain deadline", get("still running")));
        rows.add(row("    then found in the DB", get("still-running ids later in the DB")));
        rows.add(row("    then logged as failed, not in the DB", get("still-running ids logged as failed")));
        rows.add(row("  delivered or failed, yet logged as finished late", get("writes reported delivered but "
                + "logged as finished late") + get("writes reported failed but logged as finished late")));
        rows.add(row("writes rejected", get("writes rejected")));
        rows.add(row("  of them refused on a full queue / with no writer thread", get("writes refused on a full queue")
                + " / " + get("writes refused: no writer thread")));
        rows.add(row("UNACCOUNTED ids (must be 0)", get("unaccounted ids")));
        rows.add(row("ids in the DB", get("ids in the DB")));
        rows.add(row("  delivered ids, each in the DB once", String.format("%,d of %,d", get("delivered ids in the DB once"),
                get("delivered"))));
        rows.add(row("  failed ids in the DB (the other provider failed)",
                get("failed ids in the DB (the other provider failed)")));
        rows.add(row("  still-running ids in the DB", get("still-running ids later in the DB")));
        rows.add(row("delivered ids not in the DB once (must be 0)", get("delivered ids not in the DB exactly once")));
        rows.add(row("abandoned ids in the DB (must be 0)", get("abandoned ids in the DB")));
        rows.add(row("rows of no accepted write (must be 0)", get("rows of no manager")));
        rows.add(row("heap used after GC: start / end", mb(heapStart) + " / " + mb(heapEnd) + " (bound +"
                + mb(maxHeapGrowth) + ")"));
        rows.add(row("live threads: start / end", threadsStart + " / " + threadsEnd));
        rows.add(row("memlife threads alive after their epoch (must be 0)",
                get("memlife threads alive after their epoch")));
        rows.add(row("  of them writers that ended once the soak unparked them", get("  of them ended once unparked")));
        rows.add(row("memlife threads alive at the end (must be 0)", leaked.isEmpty() ? "0"
                : String.format("%,d (%s)", leaked.size(), byRole(leaked))));
        rows.add(row("memlife warnings logged (" + dir.resolve("soak.log") + ")", log.warnings()
                + (log.errors() == 0 ? "" : ", errors " + log.errors())));
        rows.add(row("failed checks", failures.size()));
        int w0 = 0;
        int w1 = 0;
        for (String[] r : rows) {
            w0 = Math.max(w0, r[0].length());
            w1 = Math.max(w1, r[1].length());
        }
        String line = "+-" + "-".repeat(w0) + "-+-" + "-".repeat(w1) + "-+";
        System.out.println();
        System.out.println(line);
        for (String[] r : rows) {
            System.out.println("| " + r[0] + " ".repeat(w0 - r[0].length()) + " | " + " ".repeat(w1 - r[1].length())
                    + r[1] + " |");
        }
        System.out.println(line);
    }

    private static String[] row(String label, Object value) {
        return new String[] {label, value instanceof Long ? String.format("%,d", (Long) value) : String.valueOf(value)};
    }

    // ---- small helpers ------------------------------------------------------------------------------

    private void fail(String what) {
        failures.add(what);
    }

    private void count(String name) {
        count(name, 1);
    }

    private void count(String name, long n) {
        counts.computeIfAbsent(name, k -> new AtomicLong()).addAndGet(n);
    }

    private long get(String name) {
        AtomicLong n = counts.get(name);
        return n == null ? 0 : n.get();
    }

    private static Duration millis(Random r, long... choices) {
        return Duration.ofMillis(choices[r.nextInt(choices.length)]);
    }

    private static String format(Duration d) {
        return d.toMinutes() + "m " + String.format("%02d", d.toSecondsPart()) + "s";
    }

    private static String mb(long bytes) {
        return String.format("%.1f MB", bytes / 1048576.0);
    }
}
