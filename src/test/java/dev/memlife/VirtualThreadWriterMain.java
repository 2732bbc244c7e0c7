package dev.memlife;

import dev.memlife.testing.RecordingProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadFactory;

/**
 * The child JVM of {@link VirtualThreadWriterProcessTest}, run on Java 21 or later: managers whose
 * thread factory makes virtual threads write through one shared provider; prints what it found on
 * one line starting with {@code RESULT}. Compiled for Java 17, so it reaches the virtual-thread API
 * by reflection.
 */
public final class VirtualThreadWriterMain {

    private VirtualThreadWriterMain() {}

    public static void main(String[] args) throws Exception {
        int managers = Integer.parseInt(args[0]);
        int turns = Integer.parseInt(args[1]);
        ThreadFactory virtual = virtualThreadFactory();
        List<Thread> made = new CopyOnWriteArrayList<>();
        ThreadFactory recording = body -> {
            Thread t = virtual.newThread(body);
            made.add(t);
            return t;
        };
        RecordingProvider shared = new RecordingProvider("shared");
        List<MemoryManager> all = new ArrayList<>();
        for (int m = 0; m < managers; m++) {
            MemoryManager manager = MemoryManager.builder().name("v" + m).threadFactory(recording)
                    .writerKeepAlive(Duration.ofMillis(10)).build();
            manager.useProvider(shared);
            all.add(manager);
        }
        for (int t = 0; t < turns; t++) {
            for (int m = 0; m < managers; m++) {
                all.get(m).syncAll("m" + m + "-t" + t, "a", "v" + m);
            }
        }
        boolean flushed = true;
        for (MemoryManager manager : all) {
            flushed &= manager.flushPending(Duration.ofSeconds(30));
        }
        long delivered = 0;
        for (MemoryManager manager : all) {
            delivered += manager.stop().delivered();
        }
        long platform = 0;
        for (Thread t : made) {
            if (!isVirtual(t)) {
                platform++;
            }
        }
        boolean ordered = true;
        for (int m = 0; m < managers; m++) {
            String session = "v" + m;
            List<String> got = new ArrayList<>();
            for (Turn turn : shared.turns()) {
                if (turn.sessionId().equals(session)) {
                    got.add(turn.userContent());
                }
            }
            List<String> expected = new ArrayList<>();
            for (int t = 0; t < turns; t++) {
                expected.add("m" + m + "-t" + t);
            }
            ordered &= got.equals(expected);
        }
        System.out.println("RESULT flushed=" + flushed + " delivered=" + delivered + " stored="
                + shared.turns().size() + " ordered=" + ordered + " threads=" + made.size() + " platform=" + platform);
    }

    private static ThreadFactory virtualThreadFactory() throws ReflectiveOperationException {
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        return (ThreadFactory) Class.forName("java.lang.Thread$Builder").getMethod("factory").invoke(builder);
    }

    private static boolean isVirtual(Thread t) throws ReflectiveOperationException {
        return (Boolean) Thread.class.getMethod("isVirtual").invoke(t);
    }
}
