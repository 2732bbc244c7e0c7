package dev.memlife.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.memlife.store.JdbcMemoryProvider;
import dev.memlife.store.StoredTurn;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * The starter end to end: a real Spring Boot application on its embedded Tomcat in a child JVM
 * ({@link SpringChildMain}), wired by the auto-configuration alone, over a SQLite file, sent SIGTERM
 * while a slow request is in flight (its model has not answered yet, so it holds no lease). Checked:
 *
 * <ul>
 *   <li>the in-flight request completes (200) after SIGTERM, and its turn is in the database once
 *       the child has exited: the web server's graceful shutdown let it finish before memlife's
 *       lifecycle stopped the gateway (in a phase above the web server's, the gateway stops first
 *       and the turn is refused);
 *   <li>a request after SIGTERM is refused (connection refused or reset, or a 503), never a hang or
 *       a 500; one that raced the shutdown and was answered 200 is stored;
 *   <li>every turn answered 200 is in the database, once, and nothing else;
 *   <li>the drain reported every agent closed, and the child exited (143) within the drain budget
 *       plus JVM start-up slack.
 * </ul>
 *
 * <p>Nothing waits by sleeping: the test moves when the child says so on stdout, or on an answer or
 * the exit; every wait is bounded.
 */
@Timeout(value = 90, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class SpringSigtermProcessTest {

    private static final Duration WAIT = Duration.ofSeconds(20);
    /** Probes after SIGTERM; the graceful shutdown closes the listener within milliseconds of CLOSING. */
    private static final int MAX_PROBES = 200;
    private static final Duration DRAIN = Duration.ofSeconds(5);

    @TempDir
    Path dir;

    @Test
    void aSlowRequestInFlightAtSigtermFinishesAndItsTurnIsStoredWhileLaterRequestsAreRefused() throws Exception {
        sigtermWithASlowRequestInFlight(dir);
    }

    /**
     * The same, {@code -Dmemlife.sigtermLoop=N} times in a row (issue 15 asks for 20 of 20):
     * {@code mvn -o test -Dtest=SpringSigtermProcessTest -Dmemlife.sigtermLoop=20}. Off by default.
     */
    @Test
    @EnabledIfSystemProperty(named = "memlife.sigtermLoop", matches = "\\d+")
    @Timeout(value = 30, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void inALoop() throws Exception {
        int runs = Integer.parseInt(System.getProperty("memlife.sigtermLoop"));
        for (int i = 1; i <= runs; i++) {
            sigtermWithASlowRequestInFlight(Files.createDirectory(dir.resolve("run-" + i)));
            System.out.println("SpringSigtermProcessTest loop: " + i + " of " + runs + " passed");
        }
    }

    private static void sigtermWithASlowRequestInFlight(Path dir) throws Exception {
        Path db = dir.resolve("memory.db");
        List<String> accepted = new ArrayList<>();
        List<String> probes = new ArrayList<>();
        List<String> stdout;
        int exitValue;
        try (Child child = Child.start(dir, db)) {
            assertThat(child.lines()).as("the Boot line this execution runs under")
                    .contains("BOOT " + System.getProperty("memlife.expectedBoot", "3.5.7"));
            for (int n = 1; n <= 3; n++) {
                assertThat(child.get("/turn?sid=s1&n=" + n)).startsWith("200 ");
                accepted.add("turn-s1-" + n);
            }
            CompletableFuture<String> held = CompletableFuture.supplyAsync(() -> {
                try {
                    return child.get("/turn?sid=s2&n=1&hold=1");
                } catch (IOException e) {
                    return "failed " + e;
                }
            });
            assertThat(child.awaitLine("IN_FLIGHT ")).isEqualTo("IN_FLIGHT s2 1");

            child.sigterm();
            child.awaitLine("CLOSING");

            // Requests after SIGTERM, each on a new connection: refused once the graceful shutdown began.
            boolean refused = false;
            for (int p = 1; p <= MAX_PROBES && !refused; p++) {
                String answer;
                try {
                    answer = child.get("/turn?sid=late&n=" + p);
                } catch (SocketTimeoutException e) {
                    throw new AssertionError("a request after SIGTERM hung; probes " + probes, e);
                } catch (IOException e) {
                    answer = "refused " + e;
                }
                probes.add(answer);
                if (answer.startsWith("200 ")) { // it beat the listener's close: accepted, so it must be stored
                    accepted.add("turn-late-" + p);
                } else {
                    assertThat(answer).as("a request after SIGTERM").matches("(?s)(refused |503 ).*");
                    refused = true;
                }
            }
            assertThat(refused).as("a request after SIGTERM was refused within %d probes: %s", MAX_PROBES, probes)
                    .isTrue();

            child.release(); // the slow model answers
            assertThat(held.get(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("the request in flight at SIGTERM")
                    .startsWith("200 ");
            accepted.add("turn-s2-1");

            Duration exit = child.awaitExit(WAIT);
            exitValue = child.exitValue();
            stdout = child.lines();
            System.out.println("SpringSigtermProcessTest: exit " + exit.toMillis() + " ms after SIGTERM; probes "
                    + probes.size() + " (last: " + probes.get(probes.size() - 1) + ")\n  "
                    + String.join("\n  ", stdout.stream().filter(l -> l.startsWith("DRAINED")).toList()));
            assertThat(exit).as("exit after SIGTERM").isLessThan(DRAIN.plus(Duration.ofSeconds(5)));
        }

        try (JdbcMemoryProvider readBack = JdbcMemoryProvider.sqlite(db)) {
            assertThat(readBack.turns("s2")).extracting(StoredTurn::userContent).as("the turn in flight at SIGTERM")
                    .containsExactly("turn-s2-1");
            List<String> stored = new ArrayList<>();
            for (String sid : List.of("s1", "s2", "late")) {
                readBack.turns(sid).forEach(t -> stored.add(t.userContent()));
            }
            assertThat(stored).as("every turn answered 200, once").containsExactlyInAnyOrderElementsOf(accepted);
            assertThat(readBack.countTurns()).as("nothing else").isEqualTo(accepted.size());
        }
        String drained = stdout.stream().filter(l -> l.startsWith("DRAINED ")).findFirst().orElse("none");
        assertThat(drained).as("the lifecycle's report").contains("notFinished=[]", "failed=[]")
                .doesNotContain("stillLeased");
        assertThat(exitValue).as("killed by SIGTERM").isEqualTo(143);
    }

    /** The child JVM, started from this test's class path with the same java binary. */
    static final class Child implements AutoCloseable {
        private final Process process;
        private final Path stderr;
        private final Thread reader;
        private final BlockingQueue<String> unread = new LinkedBlockingQueue<>();
        private final List<String> lines = Collections.synchronizedList(new ArrayList<>());
        private int port;
        private long sigtermNanos;

        private Child(Process process, Path stderr) {
            this.process = process;
            this.stderr = stderr;
            this.reader = new Thread(() -> readStdout(process.getInputStream()), "child-stdout");
            reader.setDaemon(true);
            reader.start();
        }

        static Child start(Path dir, Path db, String... springArgs) throws Exception {
            Path stderr = dir.resolve("stderr.txt");
            String java = ProcessHandle.current().info().command()
                    .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            List<String> command = new ArrayList<>(List.of(java, "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp",
                    System.getProperty("java.class.path"), SpringChildMain.class.getName(), db.toString(),
                    "--server.address=127.0.0.1", "--server.port=0", "--spring.main.banner-mode=off",
                    "--spring.lifecycle.timeout-per-shutdown-phase=10s", "--memlife.drain-timeout=" + DRAIN.toMillis() + "ms"));
            command.addAll(List.of(springArgs));
            Process p = new ProcessBuilder(command).redirectError(stderr.toFile()).start();
            Child child = new Child(p, stderr);
            try {
                child.port = Integer.parseInt(child.awaitLine("PORT ").substring(5).trim());
            } catch (AssertionError | RuntimeException e) {
                p.destroyForcibly();
                throw e;
            }
            return child;
        }

        private void readStdout(InputStream in) {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String l = r.readLine(); l != null; l = r.readLine()) {
                    lines.add(l);
                    unread.add(l);
                }
            } catch (IOException e) {
                // the child is gone
            }
        }

        /** The next unread line starting with {@code prefix}, within {@link #WAIT}; earlier lines are skipped. */
        String awaitLine(String prefix) throws InterruptedException {
            long end = System.nanoTime() + WAIT.toNanos();
            for (long left = WAIT.toNanos(); left > 0; left = end - System.nanoTime()) {
                String l = unread.poll(left, TimeUnit.NANOSECONDS);
                if (l != null && l.startsWith(prefix)) {
                    return l;
                }
                if (l == null) {
                    break;
                }
            }
            return fail("no line '%s...' from the child within %s; stdout %s%nstderr %s", prefix, WAIT, lines(),
                    stderrQuietly());
        }

        List<String> lines() {
            synchronized (lines) {
                return List.copyOf(lines);
            }
        }

        /** One GET on a new connection; {@code "<status> <body>"}. */
        String get(String pathAndQuery) throws IOException {
            try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
                socket.setSoTimeout((int) WAIT.toMillis());
                OutputStream out = socket.getOutputStream();
                out.write(("GET " + pathAndQuery + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                out.flush();
                String response = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (response.isEmpty()) {
                    throw new IOException("connection closed without an answer");
                }
                String status = response.substring(0, response.indexOf("\r\n")).split(" ")[1];
                int bodyAt = response.indexOf("\r\n\r\n");
                return status + " " + (bodyAt < 0 ? "" : response.substring(bodyAt + 4).toLowerCase(Locale.ROOT));
            }
        }

        void sigterm() {
            sigtermNanos = System.nanoTime();
            assertThat(process.toHandle().destroy()).as("SIGTERM sent").isTrue();
        }

        void release() throws IOException {
            OutputStream stdin = process.getOutputStream();
            stdin.write("RELEASE\n".getBytes(StandardCharsets.UTF_8));
            stdin.flush();
        }

        Duration awaitExit(Duration atMost) throws InterruptedException {
            boolean exited = process.waitFor(atMost.toMillis(), TimeUnit.MILLISECONDS);
            Duration took = Duration.ofNanos(System.nanoTime() - sigtermNanos);
            assertThat(exited).as("child still running %s ms after SIGTERM; stdout %s%n%s", took.toMillis(), lines(),
                    stderrQuietly()).isTrue();
            reader.join(WAIT.toMillis()); // the last lines: the exit closed the pipe
            return took;
        }

        int exitValue() {
            return process.exitValue();
        }

        String stderrQuietly() {
            try {
                return Files.exists(stderr) ? Files.readString(stderr, StandardCharsets.UTF_8) : "";
            } catch (IOException e) {
                return e.toString();
            }
        }

        @Override
        public void close() {
            process.destroyForcibly();
        }
    }
}
