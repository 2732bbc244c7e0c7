package dev.memlife.module;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.module.Configuration;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleDescriptor.Exports;
import java.lang.module.ModuleDescriptor.Requires;
import java.lang.module.ModuleFinder;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The built jar, as a user of the module path gets it: it resolves as the named module
 * {@code dev.memlife}, exports exactly the public API packages, and works there.
 *
 * <p>Runs under failsafe after {@code package}, on the real jar (system property
 * {@code memlife.jar}), in a fresh {@link ModuleLayer} holding only that jar and slf4j-api (and,
 * for the binder, another with Micrometer too). The layer's class loader has the platform class
 * loader as its parent, so no class of memlife can come from the test's class path.
 */
@Timeout(60)
class NamedModuleIT {

    private static final String MODULE = "dev.memlife";
    private static final Set<String> EXPORTED = Set.of(
            "dev.memlife",
            "dev.memlife.agent",
            "dev.memlife.gateway",
            "dev.memlife.micrometer",
            "dev.memlife.session",
            "dev.memlife.store",
            "dev.memlife.spool",
            "dev.memlife.testing");

    private static Path jar;
    private static ModuleLayer layer;

    @BeforeAll
    static void loadTheJarAsAModule() throws Exception {
        String property = System.getProperty("memlife.jar");
        assertThat(property).as("system property memlife.jar (set by failsafe in the pom)").isNotBlank();
        jar = Path.of(property);
        assertThat(jar).as("the built jar; run 'mvn verify', not the IT alone").isRegularFile();
        Path slf4j = Path.of(org.slf4j.Logger.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        assertThat(Files.exists(slf4j)).as("slf4j-api jar " + slf4j).isTrue();

        ModuleLayer boot = ModuleLayer.boot();
        Configuration cf = boot.configuration().resolve(ModuleFinder.of(jar, slf4j), ModuleFinder.of(), Set.of(MODULE));
        layer = boot.defineModulesWithOneLoader(cf, ClassLoader.getPlatformClassLoader());
    }

    private static Module module() {
        return layer.findModule(MODULE).orElseThrow();
    }

    @Test
    void theJarIsTheNamedModuleDevMemlifeNotAnAutomaticOne() {
        ModuleDescriptor descriptor = module().getDescriptor();

        assertThat(module().isNamed()).isTrue();
        assertThat(descriptor.name()).isEqualTo(MODULE);
        assertThat(descriptor.isAutomatic()).as("an automatic module would export everything").isFalse();
        assertThat(descriptor.isOpen()).isFalse();
        assertThat(module().getLayer()).isSameAs(layer);
    }

    @Test
    void itExportsExactlyThePublicApiPackagesToEveryone() {
        ModuleDescriptor descriptor = module().getDescriptor();

        assertThat(descriptor.exports()).allSatisfy(e -> assertThat(e.isQualified()).as(e.toString()).isFalse());
        assertThat(descriptor.exports().stream().map(Exports::source).collect(Collectors.toSet()))
                .containsExactlyInAnyOrderElementsOf(EXPORTED);
        assertThat(descriptor.packages()).contains("dev.memlife.internal");
        assertThat(module().isExported("dev.memlife.internal")).isFalse();
        assertThat(descriptor.opens()).isEmpty();
    }

    @Test
    void theDemoIsNotInTheJar() {
        assertThat(module().getDescriptor().packages()).doesNotContain("dev.memlife.demo");
        assertThat(module().getPackages()).doesNotContain("dev.memlife.demo");
    }

    @Test
    void itNeedsTheFlightRecorderButNotMicrometer() {
        Set<Requires> requires = module().getDescriptor().requires();

        assertThat(requires).anySatisfy(r -> {
            assertThat(r.name()).isEqualTo("jdk.jfr");
            assertThat(r.modifiers()).doesNotContain(Requires.Modifier.STATIC);
        });
        assertThat(requires).anySatisfy(r -> {
            assertThat(r.name()).isEqualTo("micrometer.core");
            assertThat(r.modifiers()).containsExactly(Requires.Modifier.STATIC);
        });
        assertThat(layer.findModule("micrometer.core")).as("the layer without Micrometer").isEmpty();
    }

    @Test
    void itReadsSlf4jAndPassesJavaSqlOnToItsReaders() {
        Set<Requires> requires = module().getDescriptor().requires();

        assertThat(requires).anySatisfy(r -> assertThat(r.name()).isEqualTo("org.slf4j"));
        assertThat(requires).anySatisfy(r -> {
            assertThat(r.name()).isEqualTo("java.sql");
            assertThat(r.modifiers()).contains(Requires.Modifier.TRANSITIVE);
        });
        assertThat(requires.stream().map(Requires::name))
                .as("no JDBC driver is required: they are found through DriverManager")
                .doesNotContain("org.xerial.sqlitejdbc", "org.postgresql.jdbc");
    }

    @Test
    void aManagerFromTheModuleDeliversAWriteAndReportsIt() throws Exception {
        ClassLoader loader = layer.findLoader(MODULE);
        Class<?> managerClass = loader.loadClass("dev.memlife.MemoryManager");
        Class<?> providerInterface = loader.loadClass("dev.memlife.MemoryProvider");
        Class<?> recordingClass = loader.loadClass("dev.memlife.testing.RecordingProvider");
        for (Class<?> c : List.of(managerClass, providerInterface, recordingClass)) {
            assertThat(c.getModule().isNamed()).as(c + " is in a named module").isTrue();
            assertThat(c.getModule().getName()).isEqualTo(MODULE);
            assertThat(c.getModule()).isSameAs(module());
        }

        Method builder = managerClass.getMethod("builder");
        Object b = builder.invoke(null);
        Object manager = builder.getReturnType().getMethod("build").invoke(b);
        Object recording = recordingClass.getConstructor(String.class).newInstance("r");
        managerClass.getMethod("addProvider", providerInterface).invoke(manager, recording);

        Object accepted = managerClass.getMethod("syncAll", String.class, String.class, String.class)
                .invoke(manager, "u", "a", "s1");
        Method shutdownAll = managerClass.getMethod("shutdownAll");
        Object report = shutdownAll.invoke(manager);

        assertThat(accepted).isEqualTo(Boolean.TRUE);
        assertThat(report.getClass().getModule()).isSameAs(module());
        Object delivered = shutdownAll.getReturnType().getMethod("delivered").invoke(report);
        assertThat(((Number) delivered).longValue()).as(String.valueOf(report)).isEqualTo(1L);
        List<?> turns = (List<?>) recordingClass.getMethod("turns").invoke(recording);
        assertThat(turns).hasSize(1);
        assertThat(turns.get(0).getClass().getModule()).isSameAs(module());
    }

    /**
     * The flight recorder instruments the events of the module's unexported package: a drain in the
     * module layer is in the recording.
     */
    @Test
    void theFlightRecorderRecordsTheModulesEvents(@TempDir Path dir) throws Exception {
        ClassLoader loader = layer.findLoader(MODULE);
        Class<?> managerClass = loader.loadClass("dev.memlife.MemoryManager");
        Method builder = managerClass.getMethod("builder");
        Object b = builder.invoke(null);
        builder.getReturnType().getMethod("name", String.class).invoke(b, "module-jfr");
        Object manager = builder.getReturnType().getMethod("build").invoke(b);

        Path file = dir.resolve("module.jfr");
        try (Recording recording = new Recording()) {
            recording.enable("dev.memlife.Drain").withThreshold(Duration.ZERO);
            recording.start();
            managerClass.getMethod("shutdownAll").invoke(manager);
            recording.stop();
            recording.dump(file);
        }

        List<RecordedEvent> drains = RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals("dev.memlife.Drain"))
                .filter(e -> "module-jfr".equals(e.getString("manager")))
                .collect(Collectors.toList());
        assertThat(drains).hasSize(1);
        assertThat(drains.get(0).getLong("pending")).isZero();
    }

    /**
     * With Micrometer on the module path too, the binder of {@code dev.memlife.micrometer} works
     * in the named module: {@code requires static} lets the module read Micrometer when it is
     * there.
     */
    @Test
    void theMicrometerBinderWorksWhenMicrometerIsInTheLayer() throws Exception {
        Path slf4j = location(org.slf4j.Logger.class);
        Configuration cf = ModuleLayer.boot().configuration().resolve(ModuleFinder.of(jar, slf4j,
                location(io.micrometer.core.instrument.MeterRegistry.class),
                location(io.micrometer.common.KeyValue.class),
                location(io.micrometer.observation.Observation.class)), ModuleFinder.of(),
                Set.of(MODULE, "micrometer.core"));
        ModuleLayer withMicrometer = ModuleLayer.boot().defineModulesWithOneLoader(cf,
                ClassLoader.getPlatformClassLoader());
        Module memlife = withMicrometer.findModule(MODULE).orElseThrow();
        Module micrometer = withMicrometer.findModule("micrometer.core").orElseThrow();
        assertThat(memlife.canRead(micrometer)).isTrue();

        ClassLoader loader = withMicrometer.findLoader(MODULE);
        Class<?> managerClass = loader.loadClass("dev.memlife.MemoryManager");
        Class<?> metricsClass = loader.loadClass("dev.memlife.micrometer.MemlifeMetrics");
        Class<?> registryClass = loader.loadClass("io.micrometer.core.instrument.MeterRegistry");
        assertThat(metricsClass.getModule()).isSameAs(memlife);
        assertThat(registryClass.getModule()).isSameAs(micrometer);

        Method builder = managerClass.getMethod("builder");
        Object b = builder.invoke(null);
        builder.getReturnType().getMethod("name", String.class).invoke(b, "module-metrics");
        Object manager = builder.getReturnType().getMethod("build").invoke(b);
        Object registry = loader.loadClass("io.micrometer.core.instrument.simple.SimpleMeterRegistry")
                .getConstructor().newInstance();
        Object binder = metricsClass.getConstructor(managerClass).newInstance(manager);
        metricsClass.getMethod("bindTo", registryClass).invoke(binder, registry);
        managerClass.getMethod("syncAll", String.class, String.class, String.class).invoke(manager, "u", "a", "s");

        Method get = registryClass.getMethod("get", String.class);
        Object search = get.invoke(registry, "memlife.writes.accepted");
        Method functionCounter = get.getReturnType().getMethod("functionCounter");
        Object counter = functionCounter.invoke(search);
        Object count = functionCounter.getReturnType().getMethod("count").invoke(counter);
        assertThat(count).isEqualTo(1.0);
        managerClass.getMethod("shutdownAll").invoke(manager);
    }

    private static Path location(Class<?> c) throws Exception {
        return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
    }
}
