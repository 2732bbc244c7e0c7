package dev.memlife.spring;

import dev.memlife.SpoolFigures;
import dev.memlife.WriteBehindFigures;
import dev.memlife.WriteFigures;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.gateway.GatewayFigures;
import dev.memlife.session.SessionCommitTracker;
import dev.memlife.spool.SharedLogFigures;
import java.sql.Connection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * What both health indicators (Boot 3's and Boot 4's) report: the gateway's queue backlog, whether
 * the store's database answers, the spool backlog when the agents have spools, the sessions not yet
 * committed, the shared log's figures when there is one ({@code sharedLog}), and each write-behind
 * chat memory's backlog and failures. DOWN if the database does not answer or a write-behind chat
 * memory's backend has failed {@value #FAILING_DOWN} calls in a row, OUT_OF_SERVICE once the
 * gateway is stopped, UP otherwise.
 */
final class HealthCheck {

    /** How long the database may take to answer {@link Connection#isValid}, in seconds. */
    private static final int VALIDATION_SECONDS = 2;

    enum Status { UP, DOWN, OUT_OF_SERVICE }

    record Result(Status status, Map<String, Object> details, Exception failure) {}

    /** Backend calls a write-behind chat memory may fail in a row before the health is DOWN. */
    static final int FAILING_DOWN = 3;

    private final AgentGateway gateway;
    private final SessionCommitTracker tracker;
    private final DataSource dataSource;
    private final Supplier<SharedLogFigures> sharedLog;
    private final Supplier<Map<String, Supplier<WriteBehindFigures>>> writeBehind;

    /**
     * @param gateway the gateway, or null when the application has none (only write-behind chat memories)
     * @param tracker the tracker, or null
     * @param dataSource the store's data source, pinged; or null
     * @param sharedLog the shared log's figures, or null when there is no shared log
     * @param writeBehind the write-behind chat memories' figures by bean name, looked up at each check
     */
    HealthCheck(AgentGateway gateway, SessionCommitTracker tracker, DataSource dataSource,
            Supplier<SharedLogFigures> sharedLog, Supplier<Map<String, Supplier<WriteBehindFigures>>> writeBehind) {
        this.gateway = gateway;
        this.tracker = tracker;
        this.dataSource = dataSource;
        this.sharedLog = sharedLog;
        this.writeBehind = writeBehind;
    }

    /** Without a shared log. */
    HealthCheck(AgentGateway gateway, SessionCommitTracker tracker, DataSource dataSource,
            Supplier<Map<String, Supplier<WriteBehindFigures>>> writeBehind) {
        this(gateway, tracker, dataSource, null, writeBehind);
    }

    Result check() {
        Map<String, Object> details = new LinkedHashMap<>();
        Status status = gateway != null ? checkGateway(details) : Status.UP;
        if (sharedLog != null) {
            details.put("sharedLog", sharedLogDetails(sharedLog.get()));
        }
        for (Map.Entry<String, Supplier<WriteBehindFigures>> e : writeBehind.get().entrySet()) {
            WriteBehindFigures f = e.getValue().get();
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("pending", f.pending());
            one.put("oldestPendingAge", f.oldestPendingAge().toString());
            one.put("failedWrites", f.failedWrites());
            one.put("failingWrites", f.failingWrites());
            details.put("writeBehind." + e.getKey(), one);
            if (f.failingWrites() >= FAILING_DOWN) {
                status = Status.DOWN;
            }
        }
        Exception failure = null;
        if (dataSource != null) {
            boolean reachable;
            try (Connection c = dataSource.getConnection()) {
                reachable = c.isValid(VALIDATION_SECONDS);
            } catch (Exception e) {
                reachable = false;
                failure = e;
            }
            details.put("storeReachable", reachable);
            if (!reachable) {
                status = Status.DOWN;
            }
        }
        return new Result(status, details, failure);
    }

    /** The shared log's figures, as the health details show them. */
    static Map<String, Object> sharedLogDetails(SharedLogFigures f) {
        Map<String, Object> one = new LinkedHashMap<>();
        one.put("heldAgents", f.heldAgents());
        one.put("pending", f.pending());
        one.put("appended", f.appended());
        one.put("committed", f.committed());
        one.put("groupCommits", f.groupCommits());
        one.put("replayed", f.replayed());
        one.put("takeovers", f.takeovers());
        one.put("adoptions", f.adoptions());
        one.put("fencedWrites", f.fencedWrites());
        one.put("fencedLeases", f.fencedLeases());
        one.put("databaseFailures", f.databaseFailures());
        one.put("lastTakeoverLag", f.lastTakeoverLag().toString());
        return one;
    }

    private Status checkGateway(Map<String, Object> details) {
        GatewayFigures figures = gateway.figures();
        WriteFigures writes = figures.writes();
        details.put("agentsCached", figures.agentsCached());
        details.put("agentsLeased", figures.agentsLeased());
        details.put("queueBacklog", writes.pending());
        details.put("oldestQueuedAge", writes.oldestPendingAge().toString());
        details.put("writesFailed", writes.failed());
        if (!SpoolFigures.NONE.equals(writes.spool())) {
            details.put("spoolBacklog", writes.spool().backlog());
        }
        if (tracker != null) {
            details.put("dirtySessions", tracker.dirtySessions().size());
        }
        return gateway.isStopped() ? Status.OUT_OF_SERVICE : Status.UP;
    }
}
