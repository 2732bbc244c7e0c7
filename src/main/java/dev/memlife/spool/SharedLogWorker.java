package dev.memlife.spool;

import dev.memlife.internal.Attempts;
import dev.memlife.internal.Checks;
import dev.memlife.internal.ThrottledLog;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one thread of a replica's {@link SharedLog} that talks to the database for the agents it
 * holds. Each round takes what every held agent has appended, its delivery mark and whether it is
 * being released, and commits it all in one transaction: renew the leases (naming their epochs,
 * which locks their rows), insert one row of records per agent, delete what was delivered. A lease
 * the renewal does not find at its epoch was taken by another replica: its agent log is marked
 * lost and its uncommitted writes dropped (never confirmed). Rounds run back to back while there is
 * work, so the appends made during one commit share the next. Between rounds it renews the leases
 * when a third of them has passed, and sweeps for expired leases with writes undelivered.
 *
 * <p>A transaction that fails (a restart, a cut connection) is tried again on a new connection,
 * with a backoff; because its outcome may be unknown, the next round first reads how far each
 * agent's log got, so nothing is inserted twice or skipped.
 */
final class SharedLogWorker implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(SharedLog.class);
    /** The waits between failed rounds: from 50 ms, doubling, at most 1 s. */
    private static final Attempts ROUND_WAITS = Attempts.backoff(SharedLog.FIRST_WAIT, Duration.ofSeconds(1));

    private final SharedLog log;
    private final ThrottledLog warnings = new ThrottledLog(LOG);
    private final Thread thread;
    private final Thread adopterThread;
    private final Set<String> adopting = ConcurrentHashMap.newKeySet();
    private final LinkedBlockingQueue<String> toAdopt = new LinkedBlockingQueue<>();

    /** Marks the adopter's thread, whose claims do not wait for a lease another replica holds. */
    private static final ThreadLocal<Boolean> ADOPTER = ThreadLocal.withInitial(() -> false);
    /** The waits before a sweep hands an orphan to the adopter again: a sweep interval, doubling, at most 1 min. */
    private final Attempts adoptWaits;
    /** Per orphan handed to the adopter: when it may be handed again, and how many times it was, for a backoff. */
    private final Map<String, long[]> adopted = new HashMap<>();

    /** The last round failed: the database is out of reach, or was. */
    private volatile boolean failing;
    private volatile boolean signalled;
    private volatile boolean renewWanted;
    private volatile boolean stopping;
    private volatile boolean stopped;
    private Connection connection;
    /** A transaction failed: its outcome is unknown until the next round reads what the database holds. */
    private boolean uncertain;
    private long nextRenewal;
    private long nextSweep;

    SharedLogWorker(SharedLog log) {
        this.log = log;
        this.adoptWaits = Attempts.backoff(Duration.ofNanos(log.sweepNanos), Duration.ofMinutes(1));
        this.thread = new Thread(this, "memlife-shared-log-" + log.replica);
        thread.setDaemon(true);
        this.adopterThread = new Thread(this::adopt, "memlife-shared-log-adopter-" + log.replica);
        adopterThread.setDaemon(true);
    }

    void start() {
        long now = System.nanoTime();
        nextRenewal = now + log.leaseNanos / 3;
        nextSweep = now + log.sweepNanos;
        thread.start();
        if (log.adopter != null) {
            adopterThread.start();
        }
    }

    boolean failing() {
        return failing;
    }

    boolean stopping() {
        return stopping;
    }

    void wake() {
        if (!signalled) {
            signalled = true;
            LockSupport.unpark(thread);
        }
    }

    void renewNow() {
        renewWanted = true;
        wake();
    }

    /** Releases every held agent, then stops, within {@code timeoutNanos}. */
    void stop(long timeoutNanos) {
        stopping = true;
        for (AgentLog agent : log.held.values()) {
            agent.closeForShutdown();
        }
        wake();
        try {
            thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeoutNanos)));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        stopped = true;
        LockSupport.unpark(thread);
        adopterThread.interrupt();
        if (thread.isAlive()) {
            LOG.warn("shared log {}: closed before every lease was released (the database is out of reach): {} agents "
                    + "keep their lease until it expires", log.describe(), log.held.size());
        }
    }

    @Override
    public void run() {
        int failedRounds = 0;
        while (!stopped) {
            signalled = false;
            long now = System.nanoTime();
            boolean renewAll = renewWanted || now - nextRenewal >= 0;
            List<AgentLog.Work> works = new ArrayList<>();
            for (AgentLog agent : log.held.values()) {
                AgentLog.Work w = agent.work(renewAll || agent.renewalDue(now, log.leaseNanos));
                if (w != null) {
                    works.add(w);
                }
            }
            if (stopping && works.isEmpty()) {
                break;
            }
            try {
                if (uncertain) {
                    reconcile();
                    continue; // take the work again: some of it may be committed
                }
                if (!works.isEmpty()) {
                    commit(works, now, renewAll);
                    if (renewAll) {
                        renewWanted = false;
                        nextRenewal = now + log.leaseNanos / 3;
                    }
                }
                if (now - nextSweep >= 0) {
                    nextSweep = now + log.sweepNanos;
                    sweep();
                }
                failedRounds = 0;
                failing = false;
            } catch (SQLException | RuntimeException e) {
                failing = true;
                log.databaseFailures.incrementAndGet();
                uncertain = true;
                closeConnection();
                warnings.warn("failure", "shared log " + log.describe() + ": a transaction failed ("
                        + e.getMessage() + "); trying again on a new connection", null);
                LockSupport.parkNanos(Checks.saturatedNanos(ROUND_WAITS.waitAfter(++failedRounds)));
                continue;
            }
            if (works.isEmpty() && !signalled && !stopping) {
                long until = Math.min(nextRenewal, nextSweep) - System.nanoTime();
                if (until > 0) {
                    LockSupport.parkNanos(until);
                }
            }
        }
        closeConnection();
    }

    private Connection connection() throws SQLException {
        if (connection == null) {
            Connection c = log.connect();
            try (Statement s = c.createStatement()) {
                long ms = Math.max(1000, TimeUnit.NANOSECONDS.toMillis(log.leaseNanos) / 2);
                // a replica frozen in the middle of a transaction must not hold its lease rows for ever
                s.execute("SET idle_in_transaction_session_timeout = " + ms);
            }
            c.setAutoCommit(false);
            connection = c;
        }
        return connection;
    }

    private void closeConnection() {
        if (connection != null) {
            try {
                connection.close();
            } catch (SQLException ignored) {
                // the connection is being given up
            }
            connection = null;
        }
    }

    /**
     * One group commit: renew and mark the leases, insert the records; in a round that renews every
     * lease (every third of the lease) or releases one, also delete what was delivered. Rows up to
     * an agent's mark are never read again (replay reads past the mark), so deleting them can wait:
     * the delete scans the agent's index range, dead entries included, and cost a fixed share of
     * every round when it ran in each.
     */
    private void commit(List<AgentLog.Work> works, long start, boolean renewAll) throws SQLException {
        Connection c = connection();
        int n = works.size();
        String[] agents = new String[n];
        Long[] epochs = new Long[n];
        Long[] marks = new Long[n];
        Boolean[] releases = new Boolean[n];
        for (int i = 0; i < n; i++) {
            AgentLog.Work w = works.get(i);
            agents[i] = w.log().agent();
            epochs[i] = w.log().epoch();
            marks[i] = w.mark();
            releases[i] = w.release();
        }
        Set<String> live = new HashSet<>();
        try {
            try (PreparedStatement renew = c.prepareStatement(log.sql.renew())) {
                renew.setLong(1, TimeUnit.NANOSECONDS.toMillis(log.leaseNanos));
                renew.setArray(2, c.createArrayOf("text", agents));
                renew.setArray(3, c.createArrayOf("bigint", epochs));
                renew.setArray(4, c.createArrayOf("bigint", marks));
                renew.setArray(5, c.createArrayOf("boolean", releases));
                renew.setString(6, log.replica);
                try (ResultSet r = renew.executeQuery()) {
                    while (r.next()) {
                        live.add(r.getString(1));
                    }
                }
            }
            long writes = 0;
            try (PreparedStatement insert = c.prepareStatement(log.sql.insertRows());
                    PreparedStatement delete = c.prepareStatement(log.sql.deleteDelivered())) {
                boolean inserts = false;
                boolean deletes = false;
                for (AgentLog.Work w : works) {
                    if (!live.contains(w.log().agent())) {
                        continue;
                    }
                    writes += addRows(insert, w);
                    inserts |= !w.records().isEmpty();
                    if ((renewAll || w.release()) && w.mark() > 0) {
                        delete.setString(1, w.log().agent());
                        delete.setLong(2, w.mark());
                        delete.addBatch();
                        deletes = true;
                    }
                }
                if (inserts) {
                    insert.executeBatch();
                }
                if (deletes) {
                    delete.executeBatch();
                }
            }
            c.commit();
            log.groupCommits.incrementAndGet();
            log.committedWrites.addAndGet(writes);
        } catch (SQLException | RuntimeException e) {
            try {
                c.rollback();
            } catch (SQLException ignored) {
                // the connection is given up by the caller
            }
            throw e;
        }
        long validUntil = start + log.leaseNanos - log.marginNanos;
        for (AgentLog.Work w : works) {
            AgentLog agent = w.log();
            if (live.contains(agent.agent())) {
                agent.committed(w, validUntil);
                if (w.release()) {
                    log.forget(agent);
                }
            } else {
                lost(agent, "another replica holds its lease now");
            }
        }
    }

    private void lost(AgentLog agent, String reason) {
        int dropped = agent.lost(reason);
        log.fencedLeases.incrementAndGet();
        log.forget(agent);
        LOG.warn("shared log {}: lost the lease of agent '{}' at epoch {} ({}); {} writes appended and not committed "
                + "were dropped (never confirmed durable); what was committed is delivered by the new holder",
                log.describe(), agent.agent(), agent.epoch(), reason, dropped);
    }

    /** Adds one row per run of records of the same kind; returns the ordinary writes added. */
    private static long addRows(PreparedStatement insert, AgentLog.Work w) throws SQLException {
        List<AgentLog.Pending> records = w.records();
        long writes = 0;
        int from = 0;
        while (from < records.size()) {
            boolean kept = records.get(from).kept();
            int to = from + 1;
            while (to < records.size() && records.get(to).kept() == kept) {
                to++;
            }
            insert.setString(1, w.log().agent());
            insert.setLong(2, records.get(from).seq());
            insert.setLong(3, records.get(to - 1).seq());
            insert.setLong(4, w.log().epoch());
            insert.setBoolean(5, kept);
            insert.setString(6, w.log().idPrefix());
            insert.setBytes(7, SharedLog.concat(records, from, to));
            insert.addBatch();
            writes += kept ? 0 : to - from;
            from = to;
        }
        return writes;
    }

    /** After a failure: reads how far each held agent's log reached, so the next round adds only the rest. */
    private void reconcile() throws SQLException {
        Connection c = connection();
        List<AgentLog> agents = new ArrayList<>(log.held.values());
        String[] keys = agents.stream().map(AgentLog::agent).toArray(String[]::new);
        Long[] epochs = agents.stream().map(AgentLog::epoch).toArray(Long[]::new);
        try (PreparedStatement q = c.prepareStatement(log.sql.committedSeqs())) {
            q.setArray(1, c.createArrayOf("text", keys));
            q.setArray(2, c.createArrayOf("bigint", epochs));
            try (ResultSet r = q.executeQuery()) {
                while (r.next()) {
                    AgentLog agent = log.held.get(r.getString(1));
                    if (agent != null && agents.contains(agent)) {
                        log.committedWrites.addAndGet(agent.committedUpTo(r.getLong(2)));
                    }
                }
            }
            c.rollback();
        }
        uncertain = false;
    }

    /** Finds expired leases with writes undelivered and queues their agents for the adopter. */
    private void sweep() throws SQLException {
        Connection c = connection();
        List<String> orphans = new ArrayList<>();
        try (PreparedStatement q = c.prepareStatement(log.sql.orphans()); ResultSet r = q.executeQuery()) {
            while (r.next()) {
                orphans.add(r.getString(1));
            }
        }
        c.rollback();
        adopted.keySet().retainAll(orphans); // an agent that is no orphan any more starts afresh
        long now = System.nanoTime();
        for (String agent : orphans) {
            if (log.held.containsKey(agent)) {
                continue;
            }
            long[] last = adopted.get(agent);
            if (last != null && now - last[0] < 0) {
                continue; // handed over recently and still an orphan (its store may be failing): back off
            }
            if (log.adopter == null) {
                warnings.warn("orphan", "shared log " + log.describe() + ": agent '" + agent + "' has writes "
                        + "undelivered and no holder; they are delivered when the agent is next acquired (give the "
                        + "shared log an adopter to deliver them at once)", null);
            } else if (adopting.add(agent)) {
                long times = last == null ? 1 : last[1] + 1;
                long backoff = Checks.saturatedNanos(adoptWaits.waitAfter((int) Math.min(times, Integer.MAX_VALUE)));
                adopted.put(agent, new long[] {now + backoff, times});
                toAdopt.add(agent);
            }
        }
    }

    static boolean isAdopterThread() {
        return ADOPTER.get();
    }

    private void adopt() {
        ADOPTER.set(true);
        while (!stopped) {
            String agent;
            try {
                agent = toAdopt.take();
            } catch (InterruptedException e) {
                return;
            }
            try {
                log.adoptions.incrementAndGet();
                log.adopter.accept(agent);
            } catch (LeaseHeldException e) {
                LOG.debug("shared log {}: agent '{}' was claimed by another replica first", log.describe(), agent);
            } catch (RuntimeException e) {
                if (e.getCause() instanceof LeaseHeldException) {
                    LOG.debug("shared log {}: agent '{}' was claimed by another replica first", log.describe(), agent);
                    continue;
                }
                LOG.warn("shared log {}: the adopter failed on agent '{}'; the sweeper tries again", log.describe(),
                        agent, e);
            } finally {
                adopting.remove(agent);
            }
        }
    }
}
