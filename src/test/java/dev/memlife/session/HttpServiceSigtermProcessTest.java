package dev.memlife.session;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

import dev.memlife.store.JdbcMemoryProvider;
import dev.memlife.store.StoredTurn;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The "done when" of issue 12, end to end in a real child JVM ({@link HttpServiceChildMain}): a
 * chat service on the JDK's {@code HttpServer}, 50 sessions talking to it at once, all of them
 * over one shared {@link JdbcMemoryProvider} on a HikariCP pool of 3 connections to a SQLite file,
 * then SIGTERM ({@link Process#destroy()}) while three requests are in flight, each holding its
 * lease (a slow model). Checked from outside, once the child has exited:
 *
 * <ul>
 *   <li>the database holds exactly the accepted turns (answered 200), by their text, in order, per
 *       session: the three in-flight ones, completed after SIGTERM, included; nothing refused was
 *       stored, and nothing twice;
 *   <li>a request after SIGTERM, on a connection opened before it, is answered 503 (the gateway
 *       refuses new leases once its stop began), never a 500 or a hang; after the exit, connecting is
 *       refused;
 *   <li>the gateway's stop waited for the in-flight leases: no agent's teardown began before the
 *       held turns went on, none was still leased at half the budget, every agent was closed;
 *   <li>the pool never had more than 3 connections open, and the store never held more than 3;
 *   <li>the child exited within the hook's deadline plus a margin, killed by SIGTERM (143).
 * </ul>
 *
 * <p>Nothing here waits by sleeping: the test moves on when the child says so on its stdout
 * ({@code IN_FLIGHT}, {@code STOPPING}) or when a response or the exit arrives.
 */
@Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class HttpServiceSigtermProcessTest {

    private static final int SESSIONS = 50;
    private static final int TURNS_BEFORE_SIGTERM = 4;
    private static final int POOL_SIZE = 3;
    /** Sessions with a turn in flight (lease held, model "slow") when SIGTERM arrives. */
    private static final List<String> IN_FLIGHT = List.of("s07", "s23", "s41");
    /** The child's shutdown hook deadline. */
    private static final Duration DEADLINE = Duration.ofSeconds(6);
    /** Exit time allowed beyond the deadline: JVM shutdown on a loaded 2-core machine. */
    private static final Duration EXIT_MARGIN = Duration.ofMillis(1_500);
    /** Bounds every single wait for the child, so a broken child fails with a message, not the @Timeout. */
    private static final Duration WAIT = Duration.ofSeconds(15);
    /** The gateway refuses once its stop's first CAS is done; a probe racing it may still be served. */
    private static final int MAX_PROBES = 20;

    @TempDir
    Path dir;

    @Test
    void fiftySessionsOverAPoolOfThreeKeepEveryAcceptedTurnThroughSigterm() throws Exception {
        Path db = dir.resolve("memory.db");
        Map<String, List<String>> accepted = new LinkedHashMap<>();
        for (int s = 0; s < SESSIONS; s++) {
            accepted.put(String.format(Locale.ROOT, "s%02d", s), Collections.synchronizedList(new ArrayList<>()));
        }
        List<String> probeAnswers = new ArrayList<>();
        Duration exit;
        int exitValue;
        List<String> stdout;
        int port;
        try (Child child = Child.start(dir, db, DEADLINE, POOL_SIZE)) {
            port = child.port;

            // 50 sessions at once, each its turns in order; every one must be accepted.
            ExecutorService sessions = Executors.newFixedThreadPool(SESSIONS);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (Map.Entry<String, List<String>> s : accepted.entrySet()) {
                    done.add(sessions.submit(() -> {
                        for (int n = 1; n <= TURNS_BEFORE_SIGTERM; n++) {
                            HttpResponse<String> r = child.turn(s.getKey(), n, false).get(WAIT.toMillis(),
                                    TimeUnit.MILLISECONDS);
                            assertThat(r.statusCode()).as("turn %d of %s: %s", n, s.getKey(), r.body()).isEqualTo(200);
                            s.getValue().add(turn(s.getKey(), n));
                        }
                        return null;
                    }));
                }
                for (Future<?> f : done) {
                    f.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                }
            } finally {
                sessions.shutdownNow();
            }

            try (RawHttp early = child.rawConnection()) {
                assertThat(early.get("/ping")).as("a connection open before SIGTERM").startsWith("200 ");

                // Three turns in flight: each holds its lease until the test releases it.
                int n = TURNS_BEFORE_SIGTERM + 1;
                Map<String, CompletableFuture<HttpResponse<String>>> held = new LinkedHashMap<>();
                for (String sid : IN_FLIGHT) {
                    held.put(sid, child.turn(sid, n, true));
                }
                List<String> inFlight = new ArrayList<>();
                for (int i = 0; i < IN_FLIGHT.size(); i++) {
                    inFlight.add(child.awaitLine("IN_FLIGHT "));
                }
                assertThat(inFlight).as("each held turn holds its lease")
                        .containsExactlyInAnyOrderElementsOf(IN_FLIGHT.stream().map(sid -> "IN_FLIGHT " + sid + " " + n).toList());

                child.sigterm();
                child.awaitLine("STOPPING"); // printed by the hook just before gateway.stop

                // A request after SIGTERM, to a known session and to a new one: 503, nothing stored.
                for (String sid : List.of("s00", "late")) {
                    List<String> turns = accepted.computeIfAbsent(sid, k -> new ArrayList<>());
                    for (int probe = 1; ; probe++) {
                        int next = turns.size() + 1;
                        String answer = early.get("/turn?sid=" + sid + "&n=" + next);
                        probeAnswers.add(sid + " " + next + ": " + answer);
                        if (answer.startsWith("200 ")) { // it beat gateway.stop, called just after STOPPING: accepted
                            turns.add(turn(sid, next));
                            assertThat(probe).as("probes answered 200 after STOPPING: %s", probeAnswers)
                                    .isLessThan(MAX_PROBES);
                            continue;
                        }
                        assertThat(answer).as("a request after SIGTERM is refused cleanly").startsWith("503 ")
                                .contains("StoppedException");
                        break;
                    }
                }

                // The slow model answers: the in-flight turns complete after SIGTERM, under their leases.
                child.release();
                for (Map.Entry<String, CompletableFuture<HttpResponse<String>>> h : held.entrySet()) {
                    HttpResponse<String> r = h.getValue().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                    assertThat(r.statusCode()).as("the in-flight turn of %s: %s", h.getKey(), r.body()).isEqualTo(200);
                    accepted.get(h.getKey()).add(turn(h.getKey(), n));
                }
            }
            exit = child.awaitExit(DEADLINE.plus(EXIT_MARGIN).plus(WAIT));
            exitValue = child.exitValue();
            stdout = child.lines();
            System.out.println("HttpServiceSigtermProcessTest: child exit " + exit.toMillis() + " ms after SIGTERM"
                    + " (deadline " + DEADLINE.toMillis() + " ms); probes " + probeAnswers + "\n  "
                    + String.join("\n  ", stdout) + "\n" + child.stderr());
        }

        // Every accepted turn is in the database, by its text, in order, once; nothing else is.
        try (JdbcMemoryProvider readBack = JdbcMemoryProvider.sqlite(db)) {
            for (String sid : IN_FLIGHT) {
                assertThat(readBack.turns(sid)).extracting(StoredTurn::userContent)
                        .as("the turn of %s in flight at SIGTERM", sid).contains(turn(sid, TURNS_BEFORE_SIGTERM + 1));
            }
            long total = 0;
            List<String> writeIds = new ArrayList<>();
            for (Map.Entry<String, List<String>> s : accepted.entrySet()) {
                List<StoredTurn> stored = readBack.turns(s.getKey());
                assertThat(stored).as("stored turns of %s", s.getKey()).extracting(StoredTurn::userContent)
                        .containsExactlyElementsOf(s.getValue());
                assertThat(stored).extracting(StoredTurn::assistantContent)
                        .containsExactlyElementsOf(s.getValue().stream().map(t -> t.replace("turn-", "reply-")).toList());
                stored.forEach(t -> writeIds.add(t.writeId()));
                total += s.getValue().size();
            }
            assertThat(total).isGreaterThanOrEqualTo(SESSIONS * TURNS_BEFORE_SIGTERM + IN_FLIGHT.size());
            assertThat(readBack.countTurns()).as("no turn outside the accepted ones").isEqualTo(total);
            assertThat(writeIds).doesNotHaveDuplicates().hasSize((int) total);
        }

        // After the exit, nobody answers: a new connection is refused.
        assertThatThrownBy(() -> new Socket(InetAddress.getLoopbackAddress(), port).close())
                .isInstanceOf(ConnectException.class);

        // The gateway's stop saw the in-flight leases end in time, and closed every agent.
        String gateway = line(stdout, "GATEWAY ");
        assertThat(gateway).contains("complete=true", "stillLeased=[]", "notFinished=[]", "failed=[]");
        assertThat(figures(gateway).get("teardownsBeforeRelease")).as("agents torn down while turns were in flight")
                .isZero();
        assertThat(figures(gateway).get("closed")).as("agents closed by the stop")
                .isEqualTo((int) accepted.values().stream().filter(t -> !t.isEmpty()).count());

        // The pool: never more than 3 connections open, and none left once it was closed.
        Map<String, Integer> pool = figures(line(stdout, "POOL "));
        assertThat(pool.get("physicalMax")).as("physical connections open at once").isBetween(1, POOL_SIZE);
        assertThat(pool.get("borrowedMax")).as("connections the store held at once").isBetween(1, POOL_SIZE);
        assertThat(pool.get("borrowedAtStoreClose")).as("the store gave its connections back").isZero();
        assertThat(pool.get("physicalOpenAfterPoolClose")).isZero();

        assertThat(exit).as("exit after SIGTERM").isLessThan(DEADLINE.plus(EXIT_MARGIN));
        assertThat(exitValue).as("killed by SIGTERM").isEqualTo(143);
    }

    /** The one line of {@code stdout} starting with {@code prefix}. */
    private static String line(List<String> stdout, String prefix) {
        List<String> found = stdout.stream().filter(l -> l.startsWith(prefix)).toList();
        assertThat(found).as("child stdout lines '%s...' in %s", prefix, stdout).hasSize(1);
        return found.get(0);
    }

    private static String turn(String sid, int n) {
        return "turn-" + sid + "-" + n;
    }

    /** {@code key=number} pairs of a child's figure line. */
    private static Map<String, Integer> figures(String line) {
        Map<String, Integer> out = new LinkedHashMap<>();
        Matcher m = Pattern.compile("(\\w+)=(\\d+)").matcher(line);
        while (m.find()) {
            out.put(m.group(1), Integer.parseInt(m.group(2)));
        }
        return out;
    }

    /** The child JVM, started from this build's classes with the same java binary. */
    private static final class Child implements AutoCloseable {
        private final Process process;
        private final Path stderr;
        private final BlockingQueue<String> unread = new LinkedBlockingQueue<>();
        private final List<String> lines = Collections.synchronizedList(new ArrayList<>());
        private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build();
        private int port;
        private long sigtermNanos;

        private Child(Process process, Path stderr) {
            this.process = process;
            this.stderr = stderr;
            Thread reader = new Thread(() -> readStdout(process.getInputStream()), "child-stdout");
            reader.setDaemon(true);
            reader.start();
        }

        static Child start(Path dir, Path db, Duration deadline, int poolSize) throws Exception {
            Path stderr = dir.resolve("stderr.txt");
            String java = ProcessHandle.current().info().command()
                    .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                    HttpServiceChildMain.class.getName(), db.toString(), Long.toString(deadline.toMillis()),
                    Integer.toString(poolSize))
                    .redirectError(stderr.toFile())
                    .start();
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
            } catch (IOException ignored) {
                // the child is gone
            }
        }

        /** Waits (at most {@link #WAIT}) for the child's next stdout line starting with {@code prefix}. */
        String awaitLine(String prefix) throws InterruptedException {
            long until = System.nanoTime() + WAIT.toNanos();
            while (true) {
                String l = unread.poll(until - System.nanoTime(), TimeUnit.NANOSECONDS);
                if (l == null) {
                    fail("the child did not print '" + prefix + "...' within " + WAIT.toMillis() + " ms; stdout "
                            + lines + "\n" + stderrQuietly());
                }
                if (l.startsWith(prefix)) {
                    return l;
                }
            }
        }

        List<String> lines() {
            synchronized (lines) {
                return List.copyOf(lines);
            }
        }

        CompletableFuture<HttpResponse<String>> turn(String sid, int n, boolean hold) {
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/turn?sid=" + sid
                    + "&n=" + n + (hold ? "&hold=1" : ""))).timeout(WAIT).build();
            return http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
        }

        RawHttp rawConnection() throws IOException {
            return new RawHttp(new Socket(InetAddress.getLoopbackAddress(), port));
        }

        void sigterm() {
            sigtermNanos = System.nanoTime();
            // SIGTERM on Linux. Not Process.destroy(): that also closes the pipes to the child, and the
            // test still reads the child's stdout and writes to its stdin after the signal.
            assertThat(process.toHandle().destroy()).as("SIGTERM sent").isTrue();
        }

        void release() throws IOException {
            OutputStream stdin = process.getOutputStream();
            stdin.write("RELEASE\n".getBytes(StandardCharsets.UTF_8));
            stdin.flush();
        }

        /** Waits for the exit, at most {@code atMost}; @return the time from SIGTERM to the exit. */
        Duration awaitExit(Duration atMost) throws InterruptedException {
            boolean exited = process.waitFor(atMost.toMillis(), TimeUnit.MILLISECONDS);
            Duration took = Duration.ofNanos(System.nanoTime() - sigtermNanos);
            assertThat(exited).as("child still running %s ms after SIGTERM; stdout %s\n%s", took.toMillis(), lines(),
                    stderrQuietly()).isTrue();
            // The stdout reader has the last lines once the pipe is closed; the exit closes it.
            return took;
        }

        int exitValue() {
            return process.exitValue();
        }

        String stderr() throws IOException {
            return Files.exists(stderr) ? Files.readString(stderr, StandardCharsets.UTF_8) : "";
        }

        private String stderrQuietly() {
            try {
                return stderr();
            } catch (IOException e) {
                return e.toString();
            }
        }

        @Override
        public void close() {
            process.destroyForcibly();
        }
    }

    /**
     * HTTP/1.1 on one socket the test holds: a request on it after SIGTERM reaches the server on a
     * connection it accepted before, so its answer is the service's (the gateway's refusal), not
     * the race of a new connection against the listener's close.
     */
    private static final class RawHttp implements AutoCloseable {
        private final Socket socket;
        private final InputStream in;
        private final OutputStream out;

        RawHttp(Socket socket) throws IOException {
            this.socket = socket;
            this.socket.setSoTimeout((int) WAIT.toMillis());
            this.in = socket.getInputStream();
            this.out = socket.getOutputStream();
        }

        /** @return {@code "<status> <body>"} */
        String get(String pathAndQuery) throws IOException {
            out.write(("GET " + pathAndQuery + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            String status = readLine();
            if (status == null) {
                throw new IOException("connection closed before an answer to " + pathAndQuery);
            }
            int length = 0;
            for (String h = readLine(); h != null && !h.isEmpty(); h = readLine()) {
                if (h.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                    length = Integer.parseInt(h.substring("content-length:".length()).trim());
                }
            }
            byte[] body = in.readNBytes(length);
            return status.split(" ")[1] + " " + new String(body, StandardCharsets.UTF_8);
        }

        private String readLine() throws IOException {
            StringBuilder sb = new StringBuilder();
            for (int c = in.read(); c != -1; c = in.read()) {
                if (c == '\n') {
                    return sb.toString().stripTrailing();
                }
                sb.append((char) c);
            }
            return sb.length() == 0 ? null : sb.toString();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
