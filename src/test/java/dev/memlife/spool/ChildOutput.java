package dev.memlife.spool;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The child side of {@link ChildJvm}'s line protocol: each line ends in {@link ChildJvm#END} and
 * is flushed at once; a group of {@link ChildJvm#DURABLE} lines goes out in one write. Also the
 * test's word on stdin, and the orphan guard: a child whose stdin closes (the test JVM is gone)
 * halts.
 */
public final class ChildOutput {

    private static final PrintStream OUT = System.out;
    private static volatile boolean finish;
    private static final java.util.concurrent.CountDownLatch FINISHED = new java.util.concurrent.CountDownLatch(1);

    private ChildOutput() {}

    /** Prints one protocol line and flushes it. */
    public static synchronized void say(String line) {
        OUT.print(line + ChildJvm.END + "\n");
        OUT.flush();
    }

    /** Prints one {@link ChildJvm#DURABLE} line per marker, flushed together. */
    public static synchronized void durable(List<String> markers) {
        StringBuilder lines = new StringBuilder(markers.size() * 32);
        for (String m : markers) {
            lines.append(ChildJvm.DURABLE).append(m).append(ChildJvm.END).append('\n');
        }
        OUT.print(lines);
        OUT.flush();
    }

    /**
     * Listens on stdin: a {@value ChildJvm#FINISH} line sets {@link #finishRequested()}; the end
     * of stdin (the test that started this child is gone) halts the JVM.
     */
    public static void listenToTheTest() {
        listenToTheTest(command -> {});
    }

    /**
     * {@link #listenToTheTest()}, handing every other line the test sends ({@link ChildJvm#send})
     * to {@code commands}, on the listening thread.
     */
    public static void listenToTheTest(java.util.function.Consumer<String> commands) {
        Thread guard = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                for (String l = in.readLine(); l != null; l = in.readLine()) {
                    if (l.equals(ChildJvm.FINISH)) {
                        finish = true;
                        FINISHED.countDown();
                    } else {
                        commands.accept(l);
                    }
                }
            } catch (IOException ignored) {
                // closed
            }
            Runtime.getRuntime().halt(3);
        }, "test-listener");
        guard.setDaemon(true);
        guard.start();
    }

    /** Waits until the test asks this child to finish. */
    public static void awaitFinish() throws InterruptedException {
        FINISHED.await();
    }

    /** {@return whether the test asked this child to finish its writes and stop cleanly} */
    public static boolean finishRequested() {
        return finish;
    }
}
