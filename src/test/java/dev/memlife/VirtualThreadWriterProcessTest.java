package dev.memlife;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Writers on virtual threads: a user on Java 21 or later passes {@code Thread.ofVirtual().factory()}
 * and every write is still delivered once, in order, on virtual threads only. The build targets
 * Java 17, so the test runs {@link VirtualThreadWriterMain} in a child JVM of Java 21 or later: this
 * one if it is, else the newest JDK found under {@code /usr/lib/jvm} (or {@code
 * MEMLIFE_JAVA21_HOME}). Without one the test is skipped, saying so.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class VirtualThreadWriterProcessTest {

    @Test
    void managersOnVirtualThreadsDeliverEveryWriteInOrderOnVirtualThreadsOnly() throws Exception {
        Optional<Path> java = java21OrLater();
        Assumptions.assumeTrue(java.isPresent(), "no JDK 21 or later found (set MEMLIFE_JAVA21_HOME)");
        int managers = 500;
        int turns = 4;
        Process child = new ProcessBuilder(java.get().toString(), "-cp", System.getProperty("java.class.path"),
                VirtualThreadWriterMain.class.getName(), String.valueOf(managers), String.valueOf(turns))
                .redirectErrorStream(true).start();
        String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(child.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(child.exitValue()).as(output).isZero();
        String result = output.lines().filter(l -> l.startsWith("RESULT ")).findFirst().orElseThrow(
                () -> new AssertionError("no RESULT line in the child's output:\n" + output));
        int total = managers * turns;
        assertThat(result).contains("flushed=true", "delivered=" + total, "stored=" + total, "ordered=true",
                "platform=0");
        int threads = Integer.parseInt(result.replaceAll(".*threads=(\\d+).*", "$1"));
        assertThat(threads).isGreaterThanOrEqualTo(managers);
    }

    private static Optional<Path> java21OrLater() throws IOException {
        if (Runtime.version().feature() >= 21) {
            return Optional.of(Path.of(System.getProperty("java.home"), "bin", "java"));
        }
        String home = System.getenv("MEMLIFE_JAVA21_HOME");
        if (home != null) {
            return Optional.of(Path.of(home, "bin", "java"));
        }
        Path jvms = Path.of("/usr/lib/jvm");
        if (!Files.isDirectory(jvms)) {
            return Optional.empty();
        }
        try (Stream<Path> homes = Files.list(jvms)) {
            List<Path> candidates = homes.filter(h -> feature(h) >= 21).sorted().toList();
            return candidates.isEmpty() ? Optional.empty()
                    : Optional.of(candidates.get(candidates.size() - 1).resolve("bin").resolve("java"));
        }
    }

    /** The feature version in a JDK's {@code release} file; 0 if there is none. */
    private static int feature(Path home) {
        try {
            for (String line : Files.readAllLines(home.resolve("release"))) {
                if (line.startsWith("JAVA_VERSION=")) {
                    String v = line.substring("JAVA_VERSION=".length()).replace("\"", "");
                    return Integer.parseInt(v.split("[.]")[0]);
                }
            }
        } catch (IOException | RuntimeException e) {
            return 0;
        }
        return 0;
    }
}
