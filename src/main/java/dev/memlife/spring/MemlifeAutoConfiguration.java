package dev.memlife.spring;

import dev.memlife.MemoryManager;
import dev.memlife.MemoryProvider;
import dev.memlife.agent.AgentMemory;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.micrometer.MemlifeMetrics;
import dev.memlife.micrometer.SharedLogMetrics;
import dev.memlife.micrometer.WriteBehindMetrics;
import dev.memlife.session.SessionCommitTracker;
import dev.memlife.spool.SharedLog;
import dev.memlife.spool.SpoolDirectory;
import dev.memlife.store.JdbcMemoryProvider;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
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
import org.springframework.context.annotation.Conditional;
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
 *       class path: Boot binds it to its meter registry;
 *   <li>{@code memlifeWriteBehindMetrics}, the {@link WriteBehindMetrics} of every write-behind
 *       bean (chat memories and vector stores), when Micrometer is on the class path;
 *   <li>{@code memlifeWriteBehindVectorStores}, with {@code memlife.vector-store.write-behind=true}:
 *       every Spring AI {@code VectorStore} bean is wrapped in a {@code WriteBehindVectorStore}
 *       named after it ({@code memlife.vector-store.*}), drained at the context's shutdown before
 *       the store behind is destroyed;
 *   <li>{@code memlifeSpools}, the agents' {@link SpoolDirectory}, when {@code memlife.spool.dir} is
 *       set;
 *   <li>{@code memlifeSharedLog}, the agents' {@link SharedLog} on the application's {@code
 *       DataSource}, when {@code memlife.spool.shared=postgres} (not with {@code memlife.spool.dir});
 *       closed when the context's beans are destroyed, after the lifecycle has stopped the gateway
 *       and before the {@code DataSource}; its adopter delivers what a dead replica left through
 *       the gateway. {@code memlifeSharedLogMetrics} binds its meters ({@link SharedLogMetrics});
 *   <li>{@code memlifeWiringLog}, the one line at start-up that says what memlife wired.
 * </ul>
 *
 * <p>The agent side (the store, the gateway, the tracker, the spools, the lifecycle, health and
 * metrics) is created only when the application wants it ({@link MemlifeCoreWanted}): {@code
 * memlife.gateway.enabled} decides when set; unset, an application that keeps its conversations
 * in a Spring AI or LangChain4j chat memory bean gets only what it wires, and no memlife table. With
 * {@code memlife.spool.dir} set, {@code memlifeSpools} gives every agent the gateway makes a spool
 * of its own, after replaying what a crash left there; with {@code memlife.spool.shared=postgres},
 * every agent's spool is its log in the shared log instead, replayed before its first turn. One
 * line at start-up says what was wired.
 *
 * <p>The gateway and the tracker have no destroy method: the lifecycle stops them within its
 * budget, and a destroy method could wait past it.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration", // Boot 3
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration", // Boot 4
        // Spring AI's chat memory repositories, which say whether the agent side is wanted
        "org.springframework.ai.model.chat.memory.autoconfigure.ChatMemoryAutoConfiguration",
        "org.springframework.ai.model.chat.memory.repository.jdbc.autoconfigure.JdbcChatMemoryRepositoryAutoConfiguration"})
@ConditionalOnClass(SmartLifecycle.class)
@ConditionalOnProperty(prefix = "memlife", name = "enabled", havingValue = "true", matchIfMissing = true)
@EnableConfigurationProperties(MemlifeProperties.class)
public class MemlifeAutoConfiguration {

    private static final Logger LOG = LoggerFactory.getLogger(MemlifeAutoConfiguration.class);

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
    @Conditional(MemlifeCoreWanted.class)
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
     * <p>With {@code memlife.spool.dir} set, each agent also gets a spool of its own there, so what it
     * accepted survives a crash. With {@code memlife.spool.shared=postgres}, each agent's manager is
     * built on its log in the {@link SharedLog} bean instead ({@code sharedLog.agent(session)}),
     * and what the agent's last holder left undelivered is replayed before its first turn.
     *
     * @param properties memlife's settings
     * @param providers the application's memory providers, in their order
     * @param spools the spool directory, when {@code memlife.spool.dir} is set
     * @param sharedLogs the shared log, used when {@code memlife.spool.shared} is set
     * @return the gateway; stopped by {@link MemlifeLifecycle}
     */
    @Bean(destroyMethod = "")
    @Conditional(MemlifeCoreWanted.class)
    @ConditionalOnMissingBean
    public AgentGateway memlifeGateway(MemlifeProperties properties, ObjectProvider<MemoryProvider> providers,
            ObjectProvider<SpoolDirectory> spools, ObjectProvider<SharedLog> sharedLogs) {
        MemlifeProperties.Gateway g = properties.gateway();
        return AgentGateway.builder().name(g.name()).maxAgents(g.maxAgents()).idleTtl(g.idleTtl())
                .stopMode(g.stopMode()).evictionMode(g.evictionMode())
                .agentFactory(agentFactory(properties, providers, spools, sharedLogs))
                .build();
    }

    /** The gateway's agent factory: a manager per session, on its spool or its shared log if there is one. */
    static Function<String, AgentMemory> agentFactory(MemlifeProperties properties,
            ObjectProvider<MemoryProvider> providers, ObjectProvider<SpoolDirectory> spools,
            ObjectProvider<SharedLog> sharedLogs) {
        if (properties.spool().shared() != null) {
            SharedLog sharedLog = sharedLogs.getObject(); // opened before the gateway exists
            return session -> SharedLogAgents.agent(sharedLog, providers.orderedStream().toList(), session);
        }
        SpoolDirectory spoolDirectory = spools.getIfAvailable(); // recovered before the gateway exists
        return session -> {
            MemoryManager.Builder manager = MemoryManager.builder().name(session);
            if (spoolDirectory != null) {
                manager.spool(spoolDirectory.newSpool(session));
            }
            MemoryManager memory = manager.build();
            providers.orderedStream().forEach(memory::useProvider);
            return AgentMemory.create(memory);
        };
    }

    /**
     * The agents' spools ({@code memlife.spool.*}), when {@code memlife.spool.dir} is set. Before it
     * is handed to the gateway, what a crash left in it is replayed into the application's memory
     * providers (in their original order, with their original ids, so the store keeps each write
     * once): at context refresh, before the web server takes a request.
     *
     * @param properties memlife's settings
     * @param providers where the recovered writes go
     * @return the spool directory
     */
    @Bean
    @Conditional(MemlifeCoreWanted.class)
    @ConditionalOnProperty(prefix = "memlife.spool", name = "dir")
    @ConditionalOnMissingBean
    public SpoolDirectory memlifeSpools(MemlifeProperties properties, ObjectProvider<MemoryProvider> providers) {
        MemlifeProperties.Spool settings = properties.spool();
        SpoolDirectory spools = SpoolDirectory.open(Path.of(settings.dir()), settings.maxBytes().toBytes(),
                settings.segmentBytes().toBytes());
        MemoryProvider[] into = providers.orderedStream().toArray(MemoryProvider[]::new);
        if (into.length == 0) {
            LOG.warn("memlife: spool directory {} is set, but the application has no MemoryProvider to replay "
                    + "what a crash left in it into; nothing was replayed", spools.root());
            return spools;
        }
        SpoolDirectory.Recovery recovery = spools.recover(settings.recoveryTimeout(), into);
        if (!recovery.spools().isEmpty()) {
            String line = "memlife: recovered " + recovery.spools().size() + " spools a crash left in " + spools.root()
                    + ": " + recovery.replayed() + " writes replayed, " + recovery.delivered() + " delivered, "
                    + recovery.notDelivered() + " not delivered (kept in their spools for the next start)";
            if (recovery.notDelivered() > 0) {
                LOG.warn(line);
            } else {
                LOG.info(line);
            }
        }
        return spools;
    }

    /**
     * The session commit tracker.
     *
     * @param properties memlife's settings
     * @return the tracker; drained by {@link MemlifeLifecycle}
     */
    @Bean(destroyMethod = "")
    @Conditional(MemlifeCoreWanted.class)
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
    @Conditional(MemlifeCoreWanted.class)
    @ConditionalOnMissingBean
    public MemlifeLifecycle memlifeLifecycle(AgentGateway gateway, ObjectProvider<SessionCommitTracker> tracker,
            MemlifeProperties properties, Environment environment) {
        return new MemlifeLifecycle(gateway, tracker.getIfUnique(), properties.drainTimeout(), phaseTimeout(environment));
    }

    /**
     * One line at start-up, once every bean exists, saying what memlife wired: the agent side (or
     * why not) and every write-behind chat memory the application defined.
     *
     * @param beans the application's beans
     * @return the logger of that line
     */
    @Bean
    public SmartInitializingSingleton memlifeWiringLog(ListableBeanFactory beans) {
        return () -> LOG.info(wiring(beans));
    }

    static String wiring(ListableBeanFactory beans) {
        List<String> parts = new ArrayList<>();
        beans.getBeansOfType(AgentGateway.class, false, false).forEach((name, g) -> parts.add("gateway '" + g.name() + "'"));
        beans.getBeansOfType(JdbcMemoryProvider.class, false, false).forEach((name, store) -> parts.add("store " + name));
        beans.getBeansOfType(SessionCommitTracker.class, false, false).forEach((name, t) -> parts.add("tracker " + name));
        beans.getBeansOfType(SpoolDirectory.class, false, false).forEach((name, d) -> parts.add("spools in " + d.root()));
        beans.getBeansOfType(SharedLog.class, false, false).forEach(
                (name, log) -> parts.add("shared log " + name + " as replica " + log.replica()));
        if (parts.isEmpty()) {
            parts.add("no gateway, store or tracker (" + MemlifeCoreWanted.PROPERTY + "=true adds them)");
        }
        WriteBehindBeans.find(beans).forEach(f -> parts.add(f.type() + " " + f.name()));
        return "memlife wired: " + String.join(", ", parts);
    }

    static Duration phaseTimeout(Environment environment) {
        return Binder.get(environment).bind(PHASE_TIMEOUT_PROPERTY, Duration.class)
                .orElse(MemlifeLifecycle.DEFAULT_PHASE_TIMEOUT);
    }

    /**
     * The shared log ({@code memlife.spool.shared=postgres}): a {@link SharedLog} on the
     * application's {@code DataSource}, whose adopter delivers what a dead replica left through the
     * gateway. Spring closes it when it destroys the context's beans: after every lifecycle has
     * stopped, so after {@link MemlifeLifecycle} has stopped the gateway and every agent released
     * its lease, and before the {@code DataSource} it depends on.
     */
    @Configuration(proxyBeanMethods = false)
    @Conditional(MemlifeCoreWanted.class)
    @ConditionalOnProperty(prefix = "memlife.spool", name = "shared")
    static class SharedLogs {

        /** The adopter handed to the shared log, served the gateway once every singleton exists. */
        private final SharedLogAgents adopter = new SharedLogAgents();

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        SharedLog memlifeSharedLog(ObjectProvider<DataSource> dataSources, MemlifeProperties properties,
                ConfigurableListableBeanFactory beans) {
            MemlifeProperties.Spool settings = properties.spool();
            DataSource dataSource = dataSources.getIfUnique();
            if (dataSource == null) {
                throw new IllegalStateException("memlife.spool.shared=" + settings.shared().name().toLowerCase(
                        Locale.ROOT) + " needs the application's DataSource (one, or a primary one) on PostgreSQL, "
                        + "and the application has " + (dataSources.stream().findAny().isPresent()
                        ? "several and no primary one" : "none"));
            }
            // Spring destroys a bean's dependents first: the log commits and releases its leases before the pool closes
            // (a DataSource reached through an ObjectProvider is no dependency of its own).
            for (String name : beans.getBeanNamesForType(DataSource.class, false, false)) {
                beans.registerDependentBean(name, "memlifeSharedLog");
            }
            SharedLog.Builder builder = SharedLog.postgres(dataSource).tablePrefix(settings.sharedTablePrefix())
                    .lease(settings.lease()).sweepInterval(settings.sweepInterval())
                    .closeTimeout(settings.sharedCloseTimeout())
                    .maxPendingBytes(settings.sharedMaxPendingBytes().toBytes()).adopt(adopter);
            if (settings.replica() != null) {
                builder.replica(settings.replica());
            }
            if (settings.claimTimeout() != null) {
                builder.claimTimeout(settings.claimTimeout());
            }
            return builder.open();
        }

        /** Serves the adopter the gateway and its agent factory once every singleton exists. */
        @Bean
        SmartInitializingSingleton memlifeSharedLogAdopter(ObjectProvider<AgentGateway> gateways,
                ObjectProvider<SharedLog> sharedLogs, ObjectProvider<MemoryProvider> providers) {
            return () -> {
                SharedLog sharedLog = sharedLogs.getObject();
                adopter.serve(gateways.getIfUnique(),
                        key -> SharedLogAgents.agent(sharedLog, providers.orderedStream().toList(), key));
            };
        }
    }

    /**
     * Write-behind for the application's Spring AI vector stores
     * (memlife.vector-store.write-behind=true): see {@link WriteBehindVectorStores}. Static, and
     * bound from the environment rather than the properties bean: a bean post-processor is made
     * before other beans.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.ai.vectorstore.VectorStore")
    @ConditionalOnProperty(prefix = "memlife.vector-store", name = "write-behind", havingValue = "true")
    static class VectorStores {
        @Bean
        static BeanPostProcessor memlifeWriteBehindVectorStores(Environment environment) {
            MemlifeProperties.VectorStore settings = Binder.get(environment)
                    .bind("memlife.vector-store", MemlifeProperties.VectorStore.class)
                    .orElseGet(() -> new MemlifeProperties.VectorStore(true, 64, Duration.ofSeconds(10), null, false));
            return new WriteBehindVectorStores(settings);
        }
    }

    /**
     * Micrometer: the gateway's meters ({@link MemlifeMetrics}), a {@code MeterBinder} bean that
     * Boot's metrics support binds to its registry.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.binder.MeterBinder")
    static class Metrics {
        @Bean
        @Conditional(MemlifeCoreWanted.class)
        @ConditionalOnMissingBean(name = "memlifeMetrics")
        MemlifeMetrics memlifeMetrics(AgentGateway gateway) {
            return new MemlifeMetrics(gateway);
        }

        /** The shared logs' meters ({@link SharedLogMetrics}), tagged with their bean names. */
        @Bean
        @ConditionalOnMissingBean(name = "memlifeSharedLogMetrics")
        MeterBinder memlifeSharedLogMetrics(ListableBeanFactory beans) {
            return registry -> beans.getBeansOfType(SharedLog.class, false, false).forEach(
                    (name, log) -> new SharedLogMetrics(name, log::figures, Tags.empty()).bindTo(registry));
        }

        /** The write-behind chat memories' meters ({@link WriteBehindMetrics}), tagged with their bean names. */
        @Bean
        @ConditionalOnMissingBean(name = "memlifeWriteBehindMetrics")
        MeterBinder memlifeWriteBehindMetrics(ListableBeanFactory beans) {
            return registry -> WriteBehindBeans.figures(beans).forEach(
                    (name, figures) -> new WriteBehindMetrics(name, figures, Tags.empty()).bindTo(registry));
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
            MemlifeHealthIndicator memlifeHealthIndicator(ListableBeanFactory beans) {
                return new MemlifeHealthIndicator(check(beans));
            }
        }

        /** Boot 4: spring-boot-health's {@code HealthIndicator}, where Boot 3's actuator is absent. */
        @Configuration(proxyBeanMethods = false)
        @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
        @ConditionalOnMissingClass("org.springframework.boot.actuate.health.HealthIndicator")
        static class Boot4 {
            @Bean
            MemlifeBoot4HealthIndicator memlifeHealthIndicator(ListableBeanFactory beans) {
                return new MemlifeBoot4HealthIndicator(check(beans));
            }
        }

        /**
         * The check both indicators report: the gateway (when there is one) with the tracker and the
         * data source if there is one of each, the shared log if there is one, and the write-behind
         * chat memories.
         */
        private static HealthCheck check(ListableBeanFactory beans) {
            AgentGateway gateway = beans.getBeanProvider(AgentGateway.class).getIfUnique();
            SharedLog sharedLog = beans.getBeanProvider(SharedLog.class).getIfUnique();
            return new HealthCheck(gateway, beans.getBeanProvider(SessionCommitTracker.class).getIfUnique(),
                    gateway == null ? null : beans.getBeanProvider(DataSource.class).getIfUnique(),
                    sharedLog == null ? null : sharedLog::figures, () -> WriteBehindBeans.figures(beans));
        }
    }
}
