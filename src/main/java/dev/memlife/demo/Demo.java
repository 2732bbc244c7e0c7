package dev.memlife.demo;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.MemoryProvider;
import dev.memlife.Turn;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The demo the README runs ({@code mvn -q compile exec:java}): writes queue up behind a slow
 * provider, then the session is reset twice — once the careless way (shut down at once, the way
 * the systems memlife replaces did it) and once the memlife way (flush, then shut down) — and both
 * drain reports are printed.
 */
public final class Demo {

    private static final int WRITES = 20;
    private static final Duration SLOW_WRITE = Duration.ofMillis(20);

    private Demo() {}

    public static void main(String[] args) {
        System.out.println("memlife demo: " + WRITES + " writes queued behind a provider that takes "
                + SLOW_WRITE.toMillis() + " ms per write; the shutdown drain deadline is 50 ms.\n");
        reset("reset WITHOUT flush (shutdown only)", false);
        reset("reset WITH flush (flushPending, then shutdown)", true);
    }

    private static void reset(String title, boolean flushFirst) {
        SlowStore store = new SlowStore();
        MemoryManager manager = MemoryManager.builder().name("demo").drainTimeout(Duration.ofMillis(50)).build();
        manager.addProvider(store);
        for (int i = 1; i <= WRITES; i++) {
            manager.syncAll("user message " + i, "fact-" + i, "session-1");
        }
        long start = System.nanoTime();
        boolean flushed = flushFirst && manager.flushPending(Duration.ofSeconds(10));
        DrainReport report = manager.shutdownAll();
        long millis = (System.nanoTime() - start) / 1_000_000;
        System.out.println("== " + title);
        if (flushFirst) {
            System.out.println("   flushPending returned " + flushed);
        }
        System.out.println("   " + report);
        System.out.println("   store holds " + store.stored.size() + " of " + WRITES + " writes; reset took "
                + millis + " ms");
        if (!report.abandonedWriteIds().isEmpty()) {
            System.out.println("   abandoned (counted, not silently lost): " + report.abandoned()
                    + " writes, first id " + report.abandonedWriteIds().get(0));
        }
        System.out.println();
    }

    /** A provider that takes a while per write, like a remote memory service. */
    private static final class SlowStore implements MemoryProvider {
        final List<String> stored = new CopyOnWriteArrayList<>();

        @Override
        public String name() {
            return "slow-store";
        }

        @Override
        public void syncTurn(Turn turn) {
            try {
                Thread.sleep(SLOW_WRITE.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            stored.add(turn.assistantContent());
        }
    }
}
