package dev.memlife.session;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * End to end, in a real child JVM ({@link ChildGatewayMain}): completed turns and "+ New Chat"
 * background commits go over loopback HTTP, then the child gets SIGTERM ({@link Process#destroy()})
 * and its memlife shutdown hook drains. Checked from outside, in the file the child's providers
 * wrote: every completed turn was committed, and the child exited within the drain deadline plus
 * a small margin — also when one session's provider hangs forever.
 *
 * <p>This is the Java form of the #5543 seed's static-wiring guard (server.py must route SIGTERM
 * to the drain): here the wiring is not parsed but run.
 */
@Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SigtermDrainProcessTest {

    /** Exit time allowed beyond the drain deadline: JVM shutdown on a loaded 2-core machine. */
    private static final Duration EXIT_MARGIN = Duration.ofMillis(1_500);

    @TempDir
    Path dir;

    @Test
    void sigtermCommitsEveryCompletedTurnBeforeTheChildExits() throws Exception {
        Duration deadline = Duration.ofSeconds(5);
        try (Child child = Child.start(dir, deadline, "-", 400)) {
            Set<String> completed = new HashSet<>();
            for (String sid : List.of("a", "b", "c", "d")) {
                for (int n = 1; n <= 3; n++) {
                    child.get("/turn?sid=" + sid + "&n=" + n);
                    completed.add(sid + " turn-" + n);
                }
            }
            assertThat(child.get("/new?sid=a")).isEqualTo("STARTED");
            assertThat(child.get("/new?sid=b")).isEqualTo("STARTED");
            child.get("/turn?sid=a&n=4"); // new work while a's 400 ms background commit still runs
            completed.add("a turn-4");

            Duration exit = child.sigtermAndMeasureExit(deadline.plus(EXIT_MARGIN));

            System.out.println("child exit after SIGTERM: " + exit.toMillis() + " ms (deadline "
                    + deadline.toMillis() + " ms)\n" + child.stderr());
            assertThat(child.lines("commit")).containsAll(completed);
            assertThat(child.lines("sync")).containsAll(completed);
            assertThat(exit).isLessThan(deadline.plus(EXIT_MARGIN));
            assertThat(child.exitValue()).as("killed by SIGTERM").isEqualTo(143);
            assertThat(child.stderr()).contains("memlife shutdown drain: ", "tracker child: DONE",
                    "SessionDrainReport[child: clean");
        }
    }

    @Test
    void sigtermExitsWithinTheDeadlineEvenWhenOneProviderHangs() throws Exception {
        Duration deadline = Duration.ofSeconds(3); // room for the tracker's report under load
        try (Child child = Child.start(dir, deadline, "hang", 50)) {
            Set<String> completed = new HashSet<>();
            for (String sid : List.of("hang", "x", "y")) {
                for (int n = 1; n <= 2; n++) {
                    child.get("/turn?sid=" + sid + "&n=" + n);
                    if (!sid.equals("hang")) {
                        completed.add(sid + " turn-" + n);
                    }
                }
            }
            assertThat(child.get("/new?sid=x")).isEqualTo("STARTED");

            Duration exit = child.sigtermAndMeasureExit(deadline.plus(EXIT_MARGIN).plusSeconds(10));

            System.out.println("child exit after SIGTERM with a hung provider: " + exit.toMillis() + " ms (deadline "
                    + deadline.toMillis() + " ms)\n" + child.stderr());
            assertThat(exit).isLessThan(deadline.plus(EXIT_MARGIN));
            assertThat(child.lines("commit")).containsAll(completed).noneMatch(l -> l.startsWith("hang "));
            assertThat(child.stderr()).contains("leftDirty=[hang=TIMED_OUT]");
        }
    }

    /** The child JVM, started from this build's classes with the same java binary. */
    private static final class Child implements AutoCloseable {
        private final Process process;
        private final Path output;
        private final Path stderr;
        private final int port;
        private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

        private Child(Process process, Path output, Path stderr, int port) {
            this.process = process;
            this.output = output;
            this.stderr = stderr;
            this.port = port;
        }

        static Child start(Path dir, Duration deadline, String hangSession, long extractionMillis) throws IOException {
            Path output = dir.resolve("committed.txt");
            Path stderr = dir.resolve("stderr.txt");
            String java = ProcessHandle.current().info().command()
                    .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                    ChildGatewayMain.class.getName(), output.toString(), Long.toString(deadline.toMillis()), hangSession,
                    Long.toString(extractionMillis))
                    .redirectError(stderr.toFile())
                    .start();
            BufferedReader stdout = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String line = stdout.readLine(); // bounded by the test's @Timeout
            if (line == null || !line.startsWith("PORT ")) {
                p.destroyForcibly();
                throw new IllegalStateException("child did not start: " + line + "\n" + Files.readString(stderr));
            }
            return new Child(p, output, stderr, Integer.parseInt(line.substring(5).trim()));
        }

        String get(String pathAndQuery) throws IOException, InterruptedException {
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + pathAndQuery))
                    .timeout(Duration.ofSeconds(10)).build();
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            assertThat(response.statusCode()).isEqualTo(200);
            return response.body();
        }

        /** Sends SIGTERM and waits for the exit, at most {@code atMost}. @return the time it took */
        Duration sigtermAndMeasureExit(Duration atMost) throws InterruptedException {
            long start = System.nanoTime();
            process.destroy(); // SIGTERM on Linux
            boolean exited = process.waitFor(atMost.toMillis(), TimeUnit.MILLISECONDS);
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertThat(exited).as("child still running %s ms after SIGTERM", took.toMillis()).isTrue();
            return took;
        }

        int exitValue() {
            return process.exitValue();
        }

        /** The {@code <sid> <turn>} parts of the output lines of one kind ("sync" or "commit"). */
        List<String> lines(String kind) throws IOException {
            List<String> out = new ArrayList<>();
            if (Files.exists(output)) {
                for (String l : Files.readAllLines(output, StandardCharsets.UTF_8)) {
                    if (l.startsWith(kind + " ")) {
                        out.add(l.substring(kind.length() + 1));
                    }
                }
            }
            return out;
        }

        String stderr() throws IOException {
            return Files.exists(stderr) ? Files.readString(stderr, StandardCharsets.UTF_8) : "";
        }

        @Override
        public void close() {
            process.destroyForcibly();
        }
    }
}
