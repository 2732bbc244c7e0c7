package dev.memlife.spring;

import dev.memlife.MemoryManager;
import dev.memlife.MemoryProvider;
import dev.memlife.agent.AgentMemory;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.micrometer.MemlifeMetrics;
import dev.memlife.session.SessionCommitTracker;
import dev.memlife.store.JdbcMemoryProvider;
import java.time.Duration;
import javax.sql.DataSource;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * memlife's Spring Boot auto-configuration (Boot 3.5 and 4.0), unless {@code memlife.enabled=false}.
 * Each bean is created only if the application has none of its type:
 *
 * <ul>
 *   <li>{@code memlifeStore}, a {@link JdbcMemoryProvider} on the application's {@link DataSource},
 *       when there is exactly one (or a primary one), the application defines no {@link
 *       MemoryProvider} bean of its own and {@code memlife.store.enabled} is not false. Every
 *       agent's manager <em>uses</em> it ({@code useProvider}); Spring closes it with the context,
 *       after the drain and before the {@code DataSource}.
 *   <li>{@code memlifeGateway}, the {@link AgentGateway} ({@code memlife.gateway.*});
 *   <li>{@code memlifeTracker}, the {@link SessionCommitTracker} ({@code memlife.tracker.*});
 *   <li>{@code memlifeLifecycle}, the {@link MemlifeLifecycle} that drains the tracker and stops
 *       the gateway when the context closes, right after the web server's graceful shutdown, within
 *       {@code memlife.drain-timeout} cut to fit {@code spring.lifecycle.timeout-per-shutdown-phase};
 *   <li>{@code memlifeHealthIndicator} (health group {@code memlife}) when Spring Boot's health
 *       support is on the class path (Boot 3's actuator or Boot 4's spring-boot-health), unless
 *       {@code management.health.memlife.enabled=false};
 *   <li>{@code memlifeMetrics}, the gateway's {@link MemlifeMetrics}, when Micrometer is on the
 *       class path: Boot binds it to its meter registry.
 * </ul>
 *
 * <p>The gateway and the tracker have no destroy method: the lifecycle stops them within its
 * budget, and a destroy method could wait past it.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration", // Boot 3
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration"}) // Boot 4
@ConditionalOnClass(SmartLifecycle.class)
@ConditionalOnProperty(prefix = "memlife", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(MemlifeProperties.class)
public class MemlifeAutoConfiguration {

    /** The property Spring bounds each shutdown phase with. */
    static final String PHASE_TIMEOUT_PROPERTY = "spring.lifecycle.timeout-per-shutdown-phase";

    /** Created by Spring. */
    public MemlifeAutoConfiguration() {}

    /**
     * The shared store on the application's {@code DataSource}.
     *
     * @param dataSource the application's data source, a pool
     * @param properties memlife's settings
     * @return the store every agent uses
     */
    @Bean
    @ConditionalOnMissingBean(MemoryProvider.class)
    @ConditionalOnSingleCandidate(DataSource.class)
    @ConditionalOnProperty(prefix = "memlife.store", name = "enabled", havingValue = "true", matchIfMissing = true)
    public JdbcMemoryProvider memlifeStore(DataSource dataSource, MemlifeProperties properties) {
        return JdbcMemoryProvider.builder(dataSource).tablePrefix(properties.store().tablePrefix()).build();
    }

    /**
     * The agent gateway, with a default agent factory: {@code gateway.acquire(session)} makes a
     * manager per session, named by it, that uses every {@link MemoryProvider} bean of the
     * application (the shared store by default; the beans stay Spring's to close).
     *
     * @param properties memlife's settings
     * @param providers the application's memory providers, in their order
     * @return the gateway; stopped by {@link MemlifeLifecycle}
     */
    @Bean(destroyMethod = "")
    @ConditionalOnMissingBean
    public AgentGateway memlifeGateway(MemlifeProperties properties, ObjectProvider<MemoryProvider> providers) {
        MemlifeProperties.Gateway g = properties.gateway();
        return AgentGateway.builder().name(g.name()).maxAgents(g.maxAgents()).idleTtl(g.idleTtl())
                .stopMode(g.stopMode()).evictionMode(g.evictionMode())
                .agentFactory(session -> {
                    MemoryManager memory = MemoryManager.builder().name(session).build();
                    providers.orderedStream().forEach(memory::useProvider);
                    return AgentMemory.create(memory);
                })
                .build();
    }

    /**
     * The session commit tracker.
     *
     * @param properties memlife's settings
     * @return the tracker; drained by {@link MemlifeLifecycle}
     */
    @Bean(destroyMethod = "")
    @ConditionalOnMissingBean
    public SessionCommitTracker memlifeTracker(MemlifeProperties properties) {
        return SessionCommitTracker.builder().name(properties.tracker().name()).build();
    }

    /**
     * The lifecycle that drains memlife at context close.
     *
     * @param gateway the gateway to stop
     * @param tracker the tracker to drain first, if there is one
     * @param properties memlife's settings
     * @param environment where {@code spring.lifecycle.timeout-per-shutdown-phase} is read
     * @return the lifecycle
     */
    @Bean
    @ConditionalOnMissingBean
    public MemlifeLifecycle memlifeLifecycle(AgentGateway gateway, ObjectProvider<SessionCommitTracker> tracker,
            MemlifeProperties properties, Environment environment) {
        return new MemlifeLifecycle(gateway, tracker.getIfUnique(), properties.drainTimeout(), phaseTimeout(environment));
    }

    static Duration phaseTimeout(Environment environment) {
        return Binder.get(environment).bind(PHASE_TIMEOUT_PROPERTY, Duration.class)
                .orElse(MemlifeLifecycle.DEFAULT_PHASE_TIMEOUT);
    }

    /**
     * Micrometer: the gateway's meters ({@link MemlifeMetrics}), a {@code MeterBinder} bean that
     * Boot's metrics support binds to its registry.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.binder.MeterBinder")
    static class Metrics {
        @Bean
        @ConditionalOnMissingBean(name = "memlifeMetrics")
        MemlifeMetrics memlifeMetrics(AgentGateway gateway) {
            return new MemlifeMetrics(gateway);
        }
    }

    /**
     * The health indicator ({@code memlifeHealthIndicator}, health group {@code memlife}), unless
     * {@code management.health.memlife.enabled=false} or the application defines a bean of that
     * name. Each Boot line has a class of its own, because each names a {@code HealthIndicator}
     * type the other lacks; the conditions they share and the check they report are here, once. On
     * a class path with both (a test's, say), Boot 3's actuator is the one used.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "management.health.memlife", name = "enabled", havingValue = "true",
            matchIfMissing = true)
    @ConditionalOnMissingBean(name = "memlifeHealthIndicator")
    static class Health {

        /** Boot 3: actuator's {@code HealthIndicator}. */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(name = "org.springframework.boot.actuate.health.HealthIndicator")
        static class Boot3 {
            @Bean
            MemlifeHealthIndicator memlifeHealthIndicator(BeanFactory beans) {
                return new MemlifeHealthIndicator(check(beans));
            }
        }

        /** Boot 4: spring-boot-health's {@code HealthIndicator}, where Boot 3's actuator is absent. */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
        @ConditionalOnMissingClass("org.springframework.boot.actuate.health.HealthIndicator")
        static class Boot4 {
            @Bean
            MemlifeBoot4HealthIndicator memlifeHealthIndicator(BeanFactory beans) {
                return new MemlifeBoot4HealthIndicator(check(beans));
            }
        }

        /** The check both indicators report: the gateway, and the tracker and data source if there is one of each. */
        private static HealthCheck check(BeanFactory beans) {
            return new HealthCheck(beans.getBean(AgentGateway.class),
                    beans.getBeanProvider(SessionCommitTracker.class).getIfUnique(),
                    beans.getBeanProvider(DataSource.class).getIfUnique());
        }
    }
}
