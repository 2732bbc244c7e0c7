package dev.memlife.module;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.module.Configuration;
import java.lang.module.ModuleDescriptor.Exports;
import java.lang.module.ModuleDescriptor.Requires;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
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
 * for the Micrometer binder, another with Micrometer too). The
 * layer's class loader has the platform class loader as its parent, so no class of memlife can
 * come from the test's class path. Neither LangChain4j nor Spring is in that layer: the core must
 * resolve and run without them, on the module path and on a class path of its own; a second layer
 * adds LangChain4j's jars, as automatic modules, for the one package that uses them. Spring AI is
 * not there either; its package is checked beside Spring AI on a class path of its own (Spring AI
 * 1.1.2 cannot be put on the module path at all: {@code spring-ai-model} and {@code
 * spring-ai-commons} both hold the package {@code org.springframework.ai.embedding}).
 */
@Timeout(60)
class NamedModuleIT {

    private static final String MODULE = "dev.memlife";
    private static final Set<String> EXPORTED = Set.of(
            "dev.memlife",
            "dev.memlife.agent",
            "dev.memlife.gateway",
            "dev.memlife.langchain4j",
            "dev.memlife.micrometer",
            "dev.memlife.session",
            "dev.memlife.springai",
            "dev.memlife.store",
            "dev.memlife.spool",
            "dev.memlife.spring",
            "dev.memlife.testing");

    /** The Spring modules dev.memlife.spring reads, all {@code requires static transitive}. */
    private static final Set<String> SPRING = Set.of("spring.beans", "spring.boot", "spring.boot.actuator",
            "spring.boot.autoconfigure", "spring.boot.health", "spring.context", "spring.core");

    private static final String LANGCHAIN4J = "langchain4j.core";
    private static final String SPRING_AI = "spring.ai.model";

    private static Path jar;
    private static Path slf4j;
    private static ModuleLayer layer;

    @BeforeAll
    static void loadTheJarAsAModule() throws Exception {
        String property = System.getProperty("memlife.jar");
        assertThat(property).as("system property memlife.jar (set by failsafe in the pom)").isNotBlank();
        jar = Path.of(property);
        assertThat(jar).as("the built jar; run 'mvn verify', not the IT alone").isRegularFile();
        slf4j = jarOf(org.slf4j.Logger.class);
        assertThat(Files.exists(slf4j)).as("slf4j-api jar " + slf4j).isTrue();

        ModuleLayer boot = ModuleLayer.boot();
        Configuration cf = boot.configuration().resolve(ModuleFinder.of(jar, slf4j), ModuleFinder.of(), Set.of(MODULE));
        layer = boot.defineModulesWithOneLoader(cf, ClassLoader.getPlatformClassLoader());
    }

    private static Path jarOf(Class<?> c) throws Exception {
        return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI());
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
    void itReadsLangChain4jOnlyStaticallySoTheCoreResolvesWithoutIt() throws Exception {
        Set<Requires> requires = module().getDescriptor().requires();

        assertThat(requires).filteredOn(r -> r.name().equals(LANGCHAIN4J)).singleElement()
                .satisfies(r -> assertThat(r.modifiers()).as("optional at run time; passed on to readers where present")
                        .containsExactlyInAnyOrder(Requires.Modifier.STATIC, Requires.Modifier.TRANSITIVE));
        assertThat(layer.findModule(LANGCHAIN4J)).as("this layer has no LangChain4j").isEmpty();
        assertThat(module().getDescriptor().packages()).contains("dev.memlife.langchain4j");
        // Only the package that uses LangChain4j cannot load without it.
        ClassLoader loader = layer.findLoader(MODULE);
        assertThatThrownBy(() -> Class.forName("dev.memlife.langchain4j.WriteBehindChatMemoryStore", true, loader))
                .isInstanceOf(NoClassDefFoundError.class)
                .hasMessageContaining("dev/langchain4j/store/memory/chat/ChatMemoryStore");
    }

    @Test
    void itReadsSpringAiOnlyStaticallySoTheCoreResolvesWithoutIt() throws Exception {
        Set<Requires> requires = module().getDescriptor().requires();

        assertThat(requires).filteredOn(r -> r.name().equals(SPRING_AI)).singleElement()
                .satisfies(r -> assertThat(r.modifiers()).as("optional at run time; passed on to readers where present")
                        .containsExactlyInAnyOrder(Requires.Modifier.STATIC, Requires.Modifier.TRANSITIVE));
        assertThat(layer.findModule(SPRING_AI)).as("this layer has no Spring AI").isEmpty();
        assertThat(module().getDescriptor().packages()).contains("dev.memlife.springai");
        // Only the package that uses Spring AI cannot load without it.
        ClassLoader loader = layer.findLoader(MODULE);
        assertThatThrownBy(() -> Class.forName("dev.memlife.springai.WriteBehindChatMemoryRepository", true, loader))
                .isInstanceOf(NoClassDefFoundError.class)
                .hasMessageContaining("org/springframework/ai/chat/memory/ChatMemoryRepository");
    }

    @Test
    void theSpringAiPackageWorksOnAClassPathBesideSpringAi() throws Exception {
        URL[] urls = {jar.toUri().toURL(), slf4j.toUri().toURL(),
                jarOf(org.springframework.ai.chat.memory.ChatMemoryRepository.class).toUri().toURL(),
                jarOf(org.springframework.ai.content.Content.class).toUri().toURL(),
                jarOf(org.springframework.util.Assert.class).toUri().toURL(),
                jarOf(org.apache.commons.logging.LogFactory.class).toUri().toURL()};
        try (URLClassLoader classPath = new URLClassLoader(urls, ClassLoader.getPlatformClassLoader())) {
            Class<?> repositoryInterface = classPath.loadClass("org.springframework.ai.chat.memory.ChatMemoryRepository");
            Class<?> inMemory = classPath.loadClass("org.springframework.ai.chat.memory.InMemoryChatMemoryRepository");
            Class<?> writeBehind = classPath.loadClass("dev.memlife.springai.WriteBehindChatMemoryRepository");
            Class<?> userMessage = classPath.loadClass("org.springframework.ai.chat.messages.UserMessage");
            assertThat(writeBehind.getClassLoader()).as("not the test's copy").isSameAs(classPath);

            Object backing = inMemory.getConstructor().newInstance();
            Object repository = writeBehind.getMethod("over", repositoryInterface).invoke(null, backing);
            Object message = userMessage.getConstructor(String.class).newInstance("hi");
            writeBehind.getMethod("saveAll", String.class, List.class).invoke(repository, "c1", List.of(message));
            Object flushed = writeBehind.getMethod("flush", Duration.class).invoke(repository, Duration.ofSeconds(10));
            writeBehind.getMethod("close").invoke(repository);

            assertThat(flushed).isEqualTo(Boolean.TRUE);
            List<?> written = (List<?>) inMemory.getMethod("findByConversationId", String.class).invoke(backing, "c1");
            assertThat(written).hasSize(1);
            assertThat(written.get(0)).isEqualTo(message);
            assertThat(inMemory.getMethod("findConversationIds").invoke(backing)).isEqualTo(List.of("c1"));
        }
    }

    @Test
    void itReadsSpringOnlyStaticallySoTheCoreResolvesAndRunsWithoutIt() throws Exception {
        Set<Requires> requires = module().getDescriptor().requires();

        assertThat(requires.stream().filter(r -> isSpring(r.name())).map(Requires::name))
                .containsExactlyInAnyOrderElementsOf(SPRING);
        assertThat(requires).filteredOn(r -> isSpring(r.name())).allSatisfy(r -> assertThat(r.modifiers())
                .as(r.name()).containsExactlyInAnyOrder(Requires.Modifier.STATIC, Requires.Modifier.TRANSITIVE));
        assertThat(layer.modules().stream().map(Module::getName)).as("this layer has no Spring")
                .noneMatch(n -> n.startsWith("spring"));
        // Only the starter's package cannot load without Spring; the auto-configuration is listed for Boot.
        ClassLoader loader = layer.findLoader(MODULE);
        assertThatThrownBy(() -> Class.forName("dev.memlife.spring.MemlifeLifecycle", true, loader))
                .isInstanceOf(NoClassDefFoundError.class)
                .hasMessageContaining("org/springframework/context/SmartLifecycle");
        assertThat(loader.getResource("META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports"))
                .as("the starter's auto-configuration list").isNotNull();
        assertThat(loader.getResource("META-INF/spring-configuration-metadata.json"))
                .as("the IDE metadata of memlife.*").isNotNull();
    }

    @Test
    void theCoreRunsOnAClassPathWithoutLangChain4jSpringAiOrSpring() throws Exception {
        try (URLClassLoader classPath = new URLClassLoader(new URL[] {jar.toUri().toURL(), slf4j.toUri().toURL()},
                ClassLoader.getPlatformClassLoader())) {
            assertThatThrownBy(() -> classPath.loadClass("dev.langchain4j.store.memory.chat.ChatMemoryStore"))
                    .isInstanceOf(ClassNotFoundException.class);
            assertThatThrownBy(() -> classPath.loadClass("org.springframework.ai.chat.memory.ChatMemoryRepository"))
                    .isInstanceOf(ClassNotFoundException.class);
            assertThatThrownBy(() -> classPath.loadClass("org.springframework.context.SmartLifecycle"))
                    .isInstanceOf(ClassNotFoundException.class);
            Class<?> managerClass = classPath.loadClass("dev.memlife.MemoryManager");
            Class<?> providerInterface = classPath.loadClass("dev.memlife.MemoryProvider");
            Class<?> recordingClass = classPath.loadClass("dev.memlife.testing.RecordingProvider");
            assertThat(managerClass.getModule().isNamed()).as("on the class path").isFalse();

            Object b = managerClass.getMethod("builder").invoke(null);
            Object manager = b.getClass().getMethod("build").invoke(b);
            Object recording = recordingClass.getConstructor(String.class).newInstance("r");
            managerClass.getMethod("addProvider", providerInterface).invoke(manager, recording);
            managerClass.getMethod("syncAll", String.class, String.class, String.class).invoke(manager, "u", "a", "s1");
            Object report = managerClass.getMethod("stop").invoke(manager);

            assertThat(((Number) report.getClass().getMethod("delivered").invoke(report)).longValue()).isEqualTo(1L);
            assertThat((List<?>) recordingClass.getMethod("turns").invoke(recording)).hasSize(1);
        }
    }

    @Test
    void theLangChain4jPackageWorksOnTheModulePathBesideLangChain4jAsAnAutomaticModule() throws Exception {
        Path[] paths = {jar, slf4j, jarOf(dev.langchain4j.store.memory.chat.ChatMemoryStore.class),
                jarOf(com.fasterxml.jackson.databind.ObjectMapper.class),
                jarOf(com.fasterxml.jackson.core.JsonFactory.class),
                jarOf(com.fasterxml.jackson.annotation.JsonProperty.class),
                jarOf(org.jspecify.annotations.Nullable.class)};
        ModuleFinder finder = ModuleFinder.of(paths);
        Set<String> roots = finder.findAll().stream().map(m -> m.descriptor().name()).collect(Collectors.toSet());
        ModuleLayer boot = ModuleLayer.boot();
        ModuleLayer withLangChain4j = boot.defineModulesWithOneLoader(
                boot.configuration().resolve(finder, ModuleFinder.of(), roots), ClassLoader.getPlatformClassLoader());
        Module langchain4j = withLangChain4j.findModule(LANGCHAIN4J).orElseThrow();
        assertThat(langchain4j.getDescriptor().isAutomatic()).as("LangChain4j 1.19.0 names no module").isTrue();

        ClassLoader loader = withLangChain4j.findLoader(MODULE);
        Class<?> storeInterface = loader.loadClass("dev.langchain4j.store.memory.chat.ChatMemoryStore");
        Class<?> inMemory = loader.loadClass("dev.langchain4j.store.memory.chat.InMemoryChatMemoryStore");
        Class<?> writeBehind = loader.loadClass("dev.memlife.langchain4j.WriteBehindChatMemoryStore");
        Class<?> userMessage = loader.loadClass("dev.langchain4j.data.message.UserMessage");
        assertThat(writeBehind.getModule().getName()).isEqualTo(MODULE);
        assertThat(writeBehind.getModule().canRead(langchain4j)).isTrue();
        assertThat(storeInterface.getModule()).isSameAs(langchain4j);

        Object backing = inMemory.getConstructor().newInstance();
        Object store = writeBehind.getMethod("over", storeInterface).invoke(null, backing);
        Object message = userMessage.getMethod("from", String.class).invoke(null, "hi");
        writeBehind.getMethod("updateMessages", Object.class, List.class).invoke(store, "c1", List.of(message));
        Object flushed = writeBehind.getMethod("flush", Duration.class).invoke(store, Duration.ofSeconds(10));
        writeBehind.getMethod("close").invoke(store);

        assertThat(flushed).isEqualTo(Boolean.TRUE);
        List<?> written = (List<?>) inMemory.getMethod("getMessages", Object.class).invoke(backing, "c1");
        assertThat(written).hasSize(1);
        assertThat(written.get(0)).isEqualTo(message);
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
        Method stop = managerClass.getMethod("stop");
        Object report = stop.invoke(manager);

        assertThat(accepted).isEqualTo(Boolean.TRUE);
        assertThat(report.getClass().getModule()).isSameAs(module());
        Object delivered = stop.getReturnType().getMethod("delivered").invoke(report);
        assertThat(((Number) delivered).longValue()).as(String.valueOf(report)).isEqualTo(1L);
        List<?> turns = (List<?>) recordingClass.getMethod("turns").invoke(recording);
        assertThat(turns).hasSize(1);
        assertThat(turns.get(0).getClass().getModule()).isSameAs(module());
    }

    /** A module of Spring Boot or Spring Framework that the starter reads; not Spring AI's. */
    private static boolean isSpring(String module) {
        return module.startsWith("spring.") && !module.equals(SPRING_AI);
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
            managerClass.getMethod("stop").invoke(manager);
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
        Path slf4j = jarOf(org.slf4j.Logger.class);
        Configuration cf = ModuleLayer.boot().configuration().resolve(ModuleFinder.of(jar, slf4j,
                jarOf(io.micrometer.core.instrument.MeterRegistry.class),
                jarOf(io.micrometer.common.KeyValue.class),
                jarOf(io.micrometer.observation.Observation.class)), ModuleFinder.of(),
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
        managerClass.getMethod("stop").invoke(manager);
    }
}
