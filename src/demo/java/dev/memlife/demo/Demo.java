package dev.memlife.demo;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.MemoryProvider;
import dev.memlife.Message;
import dev.memlife.Turn;
import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownMode;
import dev.memlife.agent.TeardownReport;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.gateway.AgentLease;
import dev.memlife.gateway.GatewayStopReport;
import dev.memlife.store.JdbcMemoryProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The demo the README runs ({@code mvn -q compile exec:java}): a simulated gateway of many
 * concurrent chat sessions writing turns through memlife into an SQLite file, while {@code /reset}s,
 * evictions and idle sweeps happen, behind a second provider that is sometimes slow; then a final
 * shutdown drain. It ends with a table of what happened to every write, and checks the database
 * holds exactly the writes reported delivered. Exit status 1 if it does not.
 */
public final class Demo {

    private final Options options;
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();
    private final AtomicLong turnsDone = new AtomicLong();
    private final AtomicLong resets = new AtomicLong();
    private final AtomicLong evictions = new AtomicLong();
    private final AtomicLong sweeps = new AtomicLong();
    private final ConcurrentLinkedQueue<AgentMemory> agents = new ConcurrentLinkedQueue<>();

    private Demo(Options options) {
        this.options = options;
    }

    public static void main(String[] args) throws Exception {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.err.println(Options.USAGE);
            System.exit(2);
            return;
        }
        if (options.help) {
            System.out.println(Options.USAGE);
            return;
        }
        System.exit(new Demo(options).run() ? 0 : 1);
    }

    private boolean run() throws Exception {
        Files.createDirectories(options.db.toAbsolutePath().getParent());
        JdbcMemoryProvider reader = JdbcMemoryProvider.builder("jdbc:sqlite:" + options.db.toAbsolutePath())
                .name("reader").build();
        long rowsBefore = reader.countTurns();
        System.out.printf("memlife demo: %d sessions x %d turns from %d threads into %s (seed %d)%n",
                options.sessions, options.turns, options.threads, options.db, options.seed);
        System.out.println("  the gateway caches at most 48 agents, evicts idle ones after 200 ms, resets ~3% of turns;");
        System.out.println("  a second provider ('remote-notes') takes 25 ms on ~5% of writes.\n");

        AgentGateway gateway = AgentGateway.builder().name("demo").maxAgents(48).idleTtl(Duration.ofMillis(200))
                .sweepInterval(Duration.ofMillis(100)).resetTimeout(Duration.ofSeconds(5))
                .stopTimeout(Duration.ofSeconds(10)).evictionMode(TeardownMode.COMMIT_THEN_RELEASE).build();
        ExecutorService threads = Executors.newFixedThreadPool(options.threads);
        long start = System.nanoTime();
        for (int t = 0; t < options.threads; t++) {
            long seed = options.seed * 31 + t;
            threads.execute(() -> chat(gateway, new Random(seed)));
        }
        threads.shutdown();
        long total = (long) options.sessions * options.turns;
        while (!threads.awaitTermination(500, TimeUnit.MILLISECONDS)) {
            progress(total, gateway);
        }
        progress(total, gateway);
        System.out.println();

        Duration stopDeadline = Duration.ofSeconds(10);
        GatewayStopReport stop = gateway.stop(stopDeadline);
        DrainTotals totals = collectReports();
        long rows = reader.countTurns() - rowsBefore;
        reader.shutdown();
        double seconds = (System.nanoTime() - start) / 1e9;
        return printSummary(stop, stopDeadline, totals, rows, seconds);
    }

    /** One chat thread: picks sessions at random, completes turns, sometimes resets or evicts. */
    private void chat(AgentGateway gateway, Random random) {
        long perThread = (long) options.sessions * options.turns / options.threads;
        for (long i = 0; i < perThread; i++) {
            String key = "agent:main:web:session-" + random.nextInt(options.sessions);
            try (AgentLease lease = gateway.acquire(key, this::newAgent)) {
                AgentMemory agent = lease.agent();
                String user = "message " + i + " from " + key;
                String reply = "reply " + i + ": noted, " + Long.toHexString(random.nextLong());
                agent.append(Message.user(user));
                agent.append(Message.assistant(reply));
                (agent.memory().syncAll(user, reply, key) ? accepted : rejected).incrementAndGet();
            }
            turnsDone.incrementAndGet();
            int roll = random.nextInt(100);
            if (roll < 3) {
                gateway.reset(key);
                resets.incrementAndGet();
            } else if (roll < 5) {
                gateway.evict(key);
                evictions.incrementAndGet();
            } else if (roll < 6) {
                sweeps.addAndGet(gateway.sweepIdle().size());
            }
        }
    }

    private AgentMemory newAgent(String key) {
        MemoryManager manager = MemoryManager.builder().name(key.substring(key.lastIndexOf(':') + 1) + "#"
                + agents.size()).build();
        manager.addProvider(JdbcMemoryProvider.builder("jdbc:sqlite:" + options.db.toAbsolutePath())
                .name("sqlite").build());
        manager.addProvider(new SometimesSlow(new Random(options.seed ^ key.hashCode() ^ agents.size())));
        manager.initializeAll(key);
        AgentMemory agent = AgentMemory.create(manager);
        agents.add(agent);
        return agent;
    }

    private void progress(long total, AgentGateway gateway) {
        System.out.printf("\r  turns %,d/%,d   agents created %,d   cached %d   resets %,d   evictions %,d   swept %,d   ",
                turnsDone.get(), total, agents.size(), gateway.size(), resets.get(), evictions.get(), sweeps.get());
        System.out.flush();
    }

    /** Sums the drain report of every agent's teardown (each agent is torn down exactly once). */
    private DrainTotals collectReports() {
        DrainTotals totals = new DrainTotals();
        for (AgentMemory agent : agents) {
            Optional<TeardownReport> result = agent.awaitTeardown(Duration.ofSeconds(15));
            Optional<DrainReport> report = result.flatMap(TeardownReport::drainReport);
            if (report.isEmpty()) {
                totals.unfinishedAgents++;
                continue;
            }
            DrainReport r = report.get();
            totals.delivered += r.delivered();
            totals.failed += r.failed();
            totals.abandoned += r.abandoned();
            totals.stillRunning += r.stillRunning();
            totals.rejected += r.rejected();
            totals.teardowns.merge(result.get().owner().toString(), 1L, Long::sum);
        }
        return totals;
    }

    private boolean printSummary(GatewayStopReport stop, Duration deadline, DrainTotals t, long rows, double seconds) {
        boolean countsAddUp = accepted.get() == t.delivered + t.failed + t.abandoned + t.stillRunning
                && rejected.get() == t.rejected;
        // A delivered write is in the database; a failed or still-running one may or may not be.
        boolean databaseMatches = rows >= t.delivered && rows <= t.delivered + t.failed + t.stillRunning;
        System.out.println();
        System.out.println("  +-------------------------------------------+------------+");
        row("turns attempted", turnsDone.get());
        row("writes accepted", accepted.get());
        row("  delivered to every provider", t.delivered);
        row("  failed (a provider threw)", t.failed);
        row("  abandoned at a drain deadline", t.abandoned);
        row("  still running at a drain deadline", t.stillRunning);
        row("writes rejected (agent already torn down)", rejected.get());
        row("rows found in " + options.db.getFileName(), rows);
        row("agents created", agents.size());
        row("agents not torn down in time", t.unfinishedAgents);
        System.out.println("  +-------------------------------------------+------------+");
        System.out.println("  teardowns by mode: " + t.teardowns);
        System.out.printf("  final shutdown drain: %d ms of its %d ms deadline; %d agents closed, not finished %s%n",
                stop.elapsed().toMillis(), deadline.toMillis(), stop.closed().size(), stop.notFinished());
        System.out.printf("  whole run: %.1f s%n", seconds);
        System.out.println();
        System.out.println(countsAddUp ? "  OK: every accepted write is accounted for"
                : "  MISMATCH: accepted writes and drain reports do not add up");
        System.out.println(!databaseMatches
                ? "  MISMATCH: the database holds " + rows + " rows, the reports say " + t.delivered + " delivered"
                : rows == t.delivered ? "  OK: the database holds exactly the " + rows + " delivered writes"
                : "  OK: the database holds the delivered writes and " + (rows - t.delivered) + " of the failed ones");
        return countsAddUp && databaseMatches && t.unfinishedAgents == 0;
    }

    private static void row(String label, long value) {
        System.out.printf("  | %-41s | %,10d |%n", label, value);
    }

    /** Sums of the agents' drain reports. */
    private static final class DrainTotals {
        long delivered;
        long failed;
        long abandoned;
        long stillRunning;
        long rejected;
        long unfinishedAgents;
        final Map<String, Long> teardowns = new java.util.TreeMap<>();
    }

    /** A remote memory service: usually quick, now and then slow. */
    private static final class SometimesSlow implements MemoryProvider {
        private final Random random;

        SometimesSlow(Random random) {
            this.random = random;
        }

        @Override
        public String name() {
            return "remote-notes";
        }

        @Override
        public void syncTurn(Turn turn) {
            if (random.nextInt(100) < 5) {
                try {
                    Thread.sleep(25); // the slow call this provider simulates
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /** The command line. */
    static final class Options {
        static final String USAGE = String.join("\n",
                "usage: mvn -q compile exec:java [-Dexec.args=\"OPTIONS\"]",
                "  --sessions N   chat sessions (default 100)",
                "  --turns N      turns per session, on average (default 10)",
                "  --threads N    concurrent chat threads (default 8)",
                "  --db PATH      SQLite file to write into (default target/memlife-demo.db; rows are added,",
                "                 and only this run's rows are counted)",
                "  --seed N       random seed for sessions, resets and slow writes (default 42)",
                "  --help         this text");

        int sessions = 100;
        int turns = 10;
        int threads = 8;
        Path db = Path.of("target", "memlife-demo.db");
        long seed = 42;
        boolean help;

        static Options parse(String[] args) {
            Options o = new Options();
            List<String> rest = new ArrayList<>(List.of(args));
            while (!rest.isEmpty()) {
                String flag = rest.remove(0);
                if (flag.equals("--help") || flag.equals("-h")) {
                    o.help = true;
                    continue;
                }
                if (rest.isEmpty()) {
                    throw new IllegalArgumentException("missing value for " + flag);
                }
                String value = rest.remove(0);
                switch (flag) {
                    case "--sessions": o.sessions = positive(flag, value); break;
                    case "--turns": o.turns = positive(flag, value); break;
                    case "--threads": o.threads = positive(flag, value); break;
                    case "--db": o.db = Path.of(value); break;
                    case "--seed": o.seed = Long.parseLong(value); break;
                    default: throw new IllegalArgumentException("unknown option " + flag);
                }
            }
            return o;
        }

        private static int positive(String flag, String value) {
            try {
                int n = Integer.parseInt(value);
                if (n > 0) {
                    return n;
                }
            } catch (NumberFormatException e) {
                // reported below
            }
            throw new IllegalArgumentException(flag + " needs a positive whole number, was '" + value + "'");
        }
    }
}
