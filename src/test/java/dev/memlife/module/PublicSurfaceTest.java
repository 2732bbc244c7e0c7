package dev.memlife.module;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import dev.memlife.DurableLog;
import dev.memlife.MemoryManager;
import dev.memlife.SpoolFigures;
import dev.memlife.StopReport;
import dev.memlife.Stoppable;
import dev.memlife.spool.Spool;
import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The vocabulary of the public surface, checked by reflection over every public type of the
 * packages the module exports (read from the compiled module descriptor): every report is a {@link
 * StopReport}, every stop within a budget is a {@link Stoppable} named {@code stop} with a
 * parameter named {@code budget}, and no exported signature hands out or takes a type of the
 * unexported {@code dev.memlife.internal} package (the spool's protocol lives there).
 */
@Timeout(60)
class PublicSurfaceTest {

    private static final Path CLASSES = Path.of("target", "classes");
    private static Set<String> exported;
    private static List<Class<?>> publicTypes;

    @BeforeAll
    static void readTheModule() throws IOException {
        try (InputStream in = Files.newInputStream(CLASSES.resolve("module-info.class"))) {
            exported = ModuleDescriptor.read(in).exports().stream().map(ModuleDescriptor.Exports::source)
                    .collect(Collectors.toCollection(TreeSet::new));
        }
        publicTypes = new ArrayList<>();
        try (Stream<Path> files = Files.walk(CLASSES)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                String name = CLASSES.relativize(file).toString().replace(file.getFileSystem().getSeparator(), ".");
                name = name.substring(0, name.length() - ".class".length());
                if (name.equals("module-info") || name.endsWith("package-info")) {
                    continue;
                }
                Class<?> type = load(name);
                if (type != null && exported.contains(type.getPackageName()) && isPublic(type)) {
                    publicTypes.add(type);
                }
            }
        }
        assertThat(exported).contains("dev.memlife", "dev.memlife.spool").doesNotContain("dev.memlife.internal");
        assertThat(publicTypes).as("public types found").hasSizeGreaterThan(50);
    }

    @Test
    void everyPublicReportIsAStopReport() {
        List<Class<?>> reports = publicTypes.stream().filter(t -> t.getSimpleName().endsWith("Report")).toList();

        assertThat(reports).extracting(Class::getSimpleName).contains("DrainReport", "GatewayStopReport",
                "SessionDrainReport", "ShutdownReport", "TeardownReport", "WriteBehindReport");
        assertThat(reports).allSatisfy(r -> assertThat(StopReport.class).as(r.getName()).isAssignableFrom(r));
    }

    @Test
    void eachReportAndFiguresTypeIsDeclaredOnce() {
        List<String> resultTypes = publicTypes.stream().map(Class::getSimpleName)
                .filter(n -> n.endsWith("Report") || n.endsWith("Figures")).toList();

        assertThat(resultTypes).as("one type per name across the exported packages").doesNotHaveDuplicates()
                .contains("WriteBehindReport", "WriteBehindFigures");
    }

    @Test
    void everyStopWithinABudgetIsAStoppableStopTakingABudget() {
        List<Method> budgeted = new ArrayList<>();
        for (Class<?> type : publicTypes) {
            for (Method m : type.getDeclaredMethods()) {
                if (Modifier.isPublic(m.getModifiers()) && !m.isBridge() && !type.isInterface()
                        && StopReport.class.isAssignableFrom(m.getReturnType())
                        && m.getParameterCount() == 1 && m.getParameterTypes()[0] == Duration.class) {
                    budgeted.add(m);
                }
            }
        }

        assertThat(budgeted).extracting(m -> m.getDeclaringClass().getSimpleName()).contains("MemoryManager",
                "AgentGateway", "SessionCommitTracker", "ShutdownHooks", "WriteBehindDecorator");
        assertThat(budgeted).allSatisfy(m -> {
            assertThat(m.getName()).as(m.toString()).isEqualTo("stop");
            assertThat(m.getParameters()[0].getName()).as(m + " (compiled with -parameters)").isEqualTo("budget");
            assertThat(Stoppable.class).as(m.getDeclaringClass().getName()).isAssignableFrom(m.getDeclaringClass());
            assertThat(AutoCloseable.class).as(m.getDeclaringClass().getName())
                    .isAssignableFrom(m.getDeclaringClass());
        });
    }

    @Test
    void noExportedSignatureMentionsAnInternalType() {
        List<String> leaks = new ArrayList<>();
        for (Class<?> type : publicTypes) {
            List<Type> seen = new ArrayList<>(Arrays.asList(type.getGenericInterfaces()));
            seen.add(type.getGenericSuperclass());
            for (Method m : type.getDeclaredMethods()) {
                if (visible(m.getModifiers())) {
                    seen.add(m.getGenericReturnType());
                    seen.addAll(signature(m));
                }
            }
            Arrays.stream(type.getDeclaredConstructors()).filter(c -> visible(c.getModifiers()))
                    .forEach(c -> seen.addAll(signature(c)));
            for (Field f : type.getDeclaredFields()) {
                if (visible(f.getModifiers())) {
                    seen.add(f.getGenericType());
                }
            }
            seen.stream().filter(t -> t != null && t.getTypeName().contains("dev.memlife.internal."))
                    .forEach(t -> leaks.add(type.getName() + " -> " + t.getTypeName()));
        }

        assertThat(leaks).isEmpty();
    }

    @Test
    void theSpoolShowsApplicationsOnlyWhatTheyCall() {
        Set<String> methods = Arrays.stream(Spool.class.getMethods()).filter(m -> m.getDeclaringClass() == Spool.class)
                .map(Method::getName).collect(Collectors.toCollection(TreeSet::new));

        assertThat(methods).containsExactly("builder", "close", "directory", "figures", "open", "toString");
        assertThat(DurableLog.class.getMethods()).extracting(Method::getName).containsExactly("figures");
    }

    @Test
    void aManagerRefusesADurableLogMemlifeDidNotMake() {
        DurableLog homeMade = () -> SpoolFigures.NONE;

        assertThatIllegalArgumentException().isThrownBy(() -> MemoryManager.builder().spool(homeMade))
                .withMessageContaining("not a durable log memlife made").withMessageContaining("Spool.open");
    }

    private static List<Type> signature(Executable e) {
        List<Type> types = new ArrayList<>(Arrays.asList(e.getGenericParameterTypes()));
        types.addAll(Arrays.asList(e.getGenericExceptionTypes()));
        return types;
    }

    /** Callable or overridable from outside the module's packages. */
    private static boolean visible(int modifiers) {
        return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
    }

    /** A public type, and every type enclosing it public too. */
    private static boolean isPublic(Class<?> type) {
        for (Class<?> t = type; t != null; t = t.getEnclosingClass()) {
            if (!Modifier.isPublic(t.getModifiers())) {
                return false;
            }
        }
        return !type.isAnonymousClass() && !type.isSynthetic();
    }

    /** The class, or null for one whose optional dependency (Spring Boot 4's health, say) is absent. */
    private static Class<?> load(String name) {
        try {
            Class<?> type = Class.forName(name, false, PublicSurfaceTest.class.getClassLoader());
            type.getDeclaredMethods(); // resolves the signatures: fails here if a dependency is missing
            return type;
        } catch (ClassNotFoundException | LinkageError e) {
            return null;
        }
    }
}
