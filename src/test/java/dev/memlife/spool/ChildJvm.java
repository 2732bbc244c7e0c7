package dev.memlife.spool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM for the spool's crash tests: started from this build's class path with the same
 * {@code java} binary, its stdout read line by line on a thread of its own (so the test waits on
 * lines, never on sleeps), its stderr in a file. {@link #kill()} is a real SIGKILL.
 *
 * <p>The children speak a small line protocol on stdout: {@value #DURABLE} lines name each write
 * the child saw confirmed durable; other lines ({@code STARTING}, {@code READY ...}) say how far
 * it got. A line counts only once it is complete: a child killed in the middle of printing leaves
 * a last line without its {@value #END} terminator, which is not a confirmation.
 */
public final class ChildJvm implements AutoCloseable {

    /** The start of a line naming one write confirmed durable: {@code "DURABLE <marker> ."}. */
    public static final String DURABLE = "DURABLE ";
    /** Every complete line of the protocol ends so. */
    public static final String END = " .";
    /** The line {@link #finish()} sends the child: finish the writes under way, stop cleanly. */
    public static final String FINISH = "FINISH";

    private final String name;
    private final Process process;
    private final Path stderr;
    private final Thread reader;
    private final BlockingQueue<String> unread = new LinkedBlockingQueue<>();
    private final List<String> lines = Collections.synchronizedList(new ArrayList<>());
    private final List<String> durable = Collections.synchronizedList(new ArrayList<>());

    private ChildJvm(String name, Process process, Path stderr) {
        this.name = name;
        this.process = process;
        this.stderr = stderr;
        this.reader = new Thread(() -> read(process.getInputStream()), "child-stdout-" + name);
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts {@code main} in a child JVM. Its stdin stays open: a child that sees it close (the
     * test JVM died) halts at once, so no child outlives the test run; the test writes to it only
     * to {@link #finish()} the child.
     *
     * @param name names the child in messages and its stderr file
     * @param stderrDir where the child's stderr goes, as {@code <name>.stderr.txt}
     */
    public static ChildJvm start(String name, Path stderrDir, Class<?> main, String... args) throws IOException {
        return start(name, stderrDir, List.of(), main, args);
    }

    /** {@link #start(String, Path, Class, String...)} with {@code jvmOptions} too, such as {@code -Xmx40m}. */
    public static ChildJvm start(String name, Path stderrDir, List<String> jvmOptions, Class<?> main, String... args)
            throws IOException {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> command = new ArrayList<>(List.of(java,
                "-XX:TieredStopAtLevel=1", // a child lives a second or two: start fast rather than peak
                "-XX:+UseSerialGC", "-Xshare:auto"));
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(List.of(args));
        Path err = stderrDir.resolve(name + ".stderr.txt");
        Process p = new ProcessBuilder(command).redirectError(err.toFile()).start();
        return new ChildJvm(name, p, err);
    }

    private void read(InputStream in) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String l = r.readLine(); l != null; l = r.readLine()) {
                if (!l.endsWith(END)) {
                    continue; // cut short by the kill: not a line the child finished printing
                }
                String line = l.substring(0, l.length() - END.length());
                lines.add(line);
                if (line.startsWith(DURABLE)) {
                    durable.add(line.substring(DURABLE.length()));
                }
                unread.add(line);
            }
        } catch (IOException ignored) {
            // the child is gone
        }
    }

    /**
     * Waits for the child's next line starting with {@code prefix}, skipping other lines; fails
     * with the child's output if none comes within {@code within}.
     */
    public String awaitLine(String prefix, Duration within) throws InterruptedException {
        long until = System.nanoTime() + within.toNanos();
        while (true) {
            String l = unread.poll(until - System.nanoTime(), TimeUnit.NANOSECONDS);
            if (l == null) {
                fail(name + " did not print '" + prefix + "...' within " + within.toMillis() + " ms (alive: "
                        + process.isAlive() + "); last lines " + tail() + "\n" + stderr());
            }
            if (l.startsWith(prefix)) {
                return l;
            }
        }
    }

    /**
     * Waits until the child has confirmed at least {@code count} writes durable; fails if it does
     * not within {@code within}.
     */
    public void awaitDurable(int count, Duration within) throws InterruptedException {
        long until = System.nanoTime() + within.toNanos();
        while (durableCount() < count) {
            String l = unread.poll(until - System.nanoTime(), TimeUnit.NANOSECONDS);
            if (l == null && durableCount() < count) {
                fail(name + " confirmed " + durableCount() + " writes, not " + count + ", within "
                        + within.toMillis() + " ms (alive: " + process.isAlive() + "); last lines " + tail() + "\n"
                        + stderr());
            }
        }
    }

    public int durableCount() {
        return durable.size();
    }

    /** Asks the child to finish the writes under way and stop cleanly ({@link ChildOutput#finishRequested()}). */
    public void finish() throws IOException {
        send(FINISH);
    }

    /** Sends the child one line on its stdin: a command its {@link ChildOutput#listenToTheTest} hands on. */
    public void send(String line) throws IOException {
        OutputStream stdin = process.getOutputStream();
        stdin.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        stdin.flush();
    }

    /** Freezes the child with SIGSTOP: every thread stops, its connections stay open. */
    public void freeze() throws IOException, InterruptedException {
        signal("STOP");
    }

    /** Resumes a frozen child with SIGCONT. */
    public void resume() throws IOException, InterruptedException {
        signal("CONT");
    }

    private void signal(String name) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS)).as("kill -%s %s returned", name, this).isTrue();
        assertThat(kill.exitValue()).as("kill -%s %s", name, this).isZero();
    }

    /**
     * SIGKILLs the child (and any process it started), waits for its exit and for the last of
     * its stdout. Lines it finished printing before it died are confirmations like any other.
     */
    public void kill(Duration within) throws InterruptedException {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly(); // SIGKILL on Linux
        awaitExit(within);
        assertThat(process.exitValue()).as("%s killed by SIGKILL (not dead before it); last lines %s\n%s", name,
                tail(), stderr()).isEqualTo(128 + 9);
    }

    /**
     * Sends the child SIGTERM, as a service manager stops a service: its shutdown hooks run. Its
     * stdin stays open (Process.destroy would close it, and the child halts when it does).
     */
    public void terminate() {
        process.toHandle().destroy(); // SIGTERM on Linux
    }

    /** Waits for the child's exit and the end of its stdout; fails if it does not exit in time. */
    public int awaitExit(Duration within) throws InterruptedException {
        long until = System.nanoTime() + within.toNanos();
        boolean exited = process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS);
        if (!exited) {
            process.destroyForcibly();
            fail(name + " still running after " + within.toMillis() + " ms; last lines " + tail() + "\n" + stderr());
        }
        reader.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime())));
        assertThat(reader.isAlive()).as("%s's stdout still open after its exit", name).isFalse();
        return process.exitValue();
    }

    /** {@return every write the child confirmed durable, by marker, in the order it printed them} */
    public List<String> durable() {
        synchronized (durable) {
            return List.copyOf(durable);
        }
    }

    /** {@return every complete line the child printed} */
    public List<String> lines() {
        synchronized (lines) {
            return List.copyOf(lines);
        }
    }

    /** {@return the child's last lines, for messages} */
    private List<String> tail() {
        List<String> all = lines();
        return all.subList(Math.max(0, all.size() - 5), all.size());
    }

    /** {@return the child's stderr so far} */
    public String stderr() {
        try {
            return Files.exists(stderr) ? Files.readString(stderr, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "(stderr unreadable: " + e + ")";
        }
    }

    @Override
    public void close() {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }

    @Override
    public String toString() {
        return name;
    }
}
