package dev.memlife.spring;

import dev.memlife.SpoolFigures;
import dev.memlife.WriteFigures;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.gateway.GatewayFigures;
import dev.memlife.session.SessionCommitTracker;
import java.sql.Connection;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.sql.DataSource;

/**
 * What both health indicators (Boot 3's and Boot 4's) report: the gateway's queue backlog, whether
 * the store's database answers, the spool backlog when the agents have spools, and the sessions
 * not yet committed. DOWN if the database does not answer, OUT_OF_SERVICE once the gateway is
 * stopped, UP otherwise.
 */
final class HealthCheck {

    /** How long the database may take to answer {@link Connection#isValid}, in seconds. */
    private static final int VALIDATION_SECONDS = 2;

    enum Status { UP, DOWN, OUT_OF_SERVICE }

    record Result(Status status, Map<String, Object> details, Exception failure) {}

    private final AgentGateway gateway;
    private final SessionCommitTracker tracker;
    private final DataSource dataSource;

    HealthCheck(AgentGateway gateway, SessionCommitTracker tracker, DataSource dataSource) {
        this.gateway = gateway;
        this.tracker = tracker;
        this.dataSource = dataSource;
    }

    Result check() {
        Map<String, Object> details = new LinkedHashMap<>();
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
        Status status = gateway.isStopped() ? Status.OUT_OF_SERVICE : Status.UP;
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
}
