package dev.memlife.spring;

import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * memlife's health under Spring Boot 3 (actuator's {@code HealthIndicator}): the queue backlog,
 * whether the store's database answers, the spool backlog and the shared log's figures when there
 * are, the sessions not yet committed. DOWN if the database does not answer, OUT_OF_SERVICE once
 * the gateway is stopped.
 */
public final class MemlifeHealthIndicator extends AbstractHealthIndicator {

    private final HealthCheck check;

    MemlifeHealthIndicator(HealthCheck check) {
        super("memlife health check failed");
        this.check = check;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        HealthCheck.Result r = check.check();
        builder.status(r.status().name()).withDetails(r.details());
        if (r.failure() != null) {
            builder.withException(r.failure());
        }
    }
}
