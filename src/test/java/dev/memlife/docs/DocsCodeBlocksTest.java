package dev.memlife.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.io.StringWriter;
import java.lang.reflect.Method;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every Java block of the README and {@code docs/} compiles against this build, as a user would
 * paste it (see {@link CodeBlocks} for the markers); blocks marked {@code run} also run. All blocks
 * are compiled in one javac task, each in a package of its own, and an error is reported at the
 * Markdown line it stands on. The documents' other rules are checked here too: the README stays
 * a front door (at most 320 lines), every fence names its language, and every link stays inside
 * the repository and points at a file that exists.
 */
@Timeout(300)
class DocsCodeBlocksTest {

    private static final Path ROOT = Path.of("").toAbsolutePath();
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

    @TempDir
    static Path classes;

    private static List<CodeBlocks.Block> blocks;
    private static final Map<CodeBlocks.Block, Source> sources = new HashMap<>();
    private static final Map<CodeBlocks.Block, List<String>> errors = new HashMap<>();

    /** One block as javac sees it: its class, its text, and how many lines were put above it. */
    private record Source(CodeBlocks.Block block, String className, String text, int linesAbove) {

        JavaFileObject file() {
            URI uri = URI.create("string:///" + className.replace('.', '/') + ".java");
            return new SimpleJavaFileObject(uri, JavaFileObject.Kind.SOURCE) {
                @Override
                public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                    return text;
                }
            };
        }
    }

    @BeforeAll
    static void compileEveryJavaBlock() throws IOException {
        blocks = new ArrayList<>();
        for (Path document : CodeBlocks.documents(ROOT)) {
            blocks.addAll(CodeBlocks.read(ROOT, document));
        }
        List<CodeBlocks.Block> java = blocks.stream().filter(CodeBlocks.Block::isJava).collect(Collectors.toList());
        for (int i = 0; i < java.size(); i++) {
            CodeBlocks.Block block = java.get(i);
            sources.put(block, wrap(block, "snippets.b" + i));
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertThat(javac).as("a JDK's compiler (the docs' code is compiled by this test)").isNotNull();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT, null)) {
            List<String> options = List.of("-classpath", testClassPath(), "-d", classes.toString(),
                    "-proc:none", "-Xlint:none", "-parameters");
            List<JavaFileObject> units = sources.values().stream().map(Source::file).collect(Collectors.toList());
            StringWriter out = new StringWriter();
            javac.getTask(out, files, diagnostics, options, null, units).call();
        }
        Map<String, Source> byUri = new HashMap<>();
        sources.values().forEach(s -> byUri.put(s.file().toUri().toString(), s));
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() != Diagnostic.Kind.ERROR) {
                continue;
            }
            Source source = d.getSource() == null ? null : byUri.get(d.getSource().toUri().toString());
            if (source == null) {
                errors.computeIfAbsent(java.get(0), b -> new ArrayList<>()).add(d.getMessage(Locale.ROOT));
                continue;
            }
            long line = source.block().firstLine() + d.getLineNumber() - 1 - source.linesAbove();
            errors.computeIfAbsent(source.block(), b -> new ArrayList<>())
                    .add(source.block().file() + ":" + line + ": " + d.getMessage(Locale.ROOT));
        }
    }

    @TestFactory
    Stream<DynamicTest> everyJavaBlockCompilesAndTheMarkedOnesRun() {
        assertThat(sources).as("Java blocks in the README and docs/").isNotEmpty();
        return blocks.stream().filter(CodeBlocks.Block::isJava).map(block -> DynamicTest.dynamicTest(block.where(), () -> {
            assertThat(errors.getOrDefault(block, List.of())).as("javac on " + block.where()).isEmpty();
            if (block.run()) {
                run(sources.get(block));
            }
        }));
    }

    @Test
    void theReadmeIsAFrontDoor() throws IOException {
        assertThat(Files.readAllLines(ROOT.resolve("README.md"))).as("README.md lines").hasSizeLessThanOrEqualTo(320);
    }

    @Test
    void everyFenceNamesItsLanguage() {
        assertThat(blocks).filteredOn(b -> b.language().isEmpty()).extracting(CodeBlocks.Block::where)
                .as("code fences without a language (a Java block must say java to be compiled)").isEmpty();
    }

    @Test
    void everyLinkStaysInTheRepositoryAndResolves() throws IOException {
        List<String> broken = new ArrayList<>();
        for (Path document : CodeBlocks.documents(ROOT)) {
            List<String> lines = Files.readAllLines(document);
            for (int i = 0; i < lines.size(); i++) {
                Matcher m = LINK.matcher(lines.get(i));
                while (m.find()) {
                    String target = m.group(1);
                    String where = ROOT.relativize(document) + ":" + (i + 1) + ": " + target;
                    if (target.matches("^[a-z]+:.*")) {
                        broken.add(where + " (leaves the repository)");
                        continue;
                    }
                    String path = target.replaceFirst("#.*$", "");
                    if (!path.isEmpty() && !Files.exists(document.getParent().resolve(path).normalize())) {
                        broken.add(where + " (no such file)");
                    }
                }
            }
        }
        assertThat(broken).as("links").isEmpty();
    }

    /**
     * A unit keeps its own imports and moves to a package of its own; a fragment becomes the body
     * of a static method whose parameters are its {@code given} names.
     */
    private static Source wrap(CodeBlocks.Block block, String pkg) {
        if (block.isUnit()) {
            String text = block.text().replaceFirst("(?m)^package\\s+[\\w.]+\\s*;", "");
            return new Source(block, pkg + "." + block.declaredType(), "package " + pkg + ";" + text, 0);
        }
        StringBuilder head = new StringBuilder("package " + pkg + ";");
        for (String imported : CodeBlocks.FRAGMENT_IMPORTS) {
            head.append(" import ").append(imported).append(';');
        }
        for (String imported : block.imports()) {
            head.append(" import ").append(imported).append(';');
        }
        head.append(" @SuppressWarnings(\"all\") public class Snippet { public static void run(")
                .append(String.join(", ", block.given())).append(") throws Exception {\n");
        return new Source(block, pkg + ".Snippet", head + block.text() + "}}\n", 1);
    }

    private static void run(Source source) throws Exception {
        try (URLClassLoader loader = new URLClassLoader(new URL[] {classes.toUri().toURL()},
                DocsCodeBlocksTest.class.getClassLoader())) {
            Class<?> type = loader.loadClass(source.className());
            if (source.block().isUnit()) {
                Method main = type.getMethod("main", String[].class);
                main.invoke(null, (Object) new String[0]);
            } else if (source.block().given().isEmpty()) {
                type.getMethod("run").invoke(null);
            } else {
                fail(source.block().where() + " is marked run but has given names nothing can supply");
            }
        }
    }

    /** The class path the tests run on (Surefire hands it over in a property of its own). */
    private static String testClassPath() {
        String path = System.getProperty("surefire.test.class.path");
        if (path == null || path.isBlank()) {
            path = System.getProperty("java.class.path");
        }
        return Stream.of(path.split(File.pathSeparator)).filter(p -> !p.isBlank()).collect(Collectors.joining(File.pathSeparator));
    }
}
