package dev.memlife.spool;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.store.JdbcMemoryProvider;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The child JVM of {@link SpoolSmallHeapProcessTest}: opens a spool with {@code Spool.open(dir)}
 * and replays it into a {@link JdbcMemoryProvider} on a SQLite file, in whatever heap the test
 * gave it, then shuts down cleanly and exits 0. The queue holds {@value #QUEUE} writes, so the
 * heap needed is the spool's reading, not the backlog's.
 *
 * <p>Usage: {@code SmallHeapReplayChildMain <spool dir> <sqlite file>}. Prints {@code STARTING
 * maxHeap=<bytes>}, {@code REPLAYED <n>} and {@code DRAINED delivered=.. failed=.. complete=..}.
 */
public final class SmallHeapReplayChildMain {

    static final int QUEUE = 2_000;

    private SmallHeapReplayChildMain() {}

    public static void main(String[] args) {
        ChildOutput.listenToTheTest();
        ChildOutput.say("STARTING maxHeap=" + Runtime.getRuntime().maxMemory());
        JdbcMemoryProvider store = JdbcMemoryProvider.sqlite(Path.of(args[1]));
        MemoryManager manager = MemoryManager.builder().name("small-heap").spool(Spool.open(Path.of(args[0])))
                .queueCapacity(QUEUE).maxBatchSize(QUEUE / 2).build();
        manager.addProvider(store);
        ChildOutput.say("REPLAYED " + manager.replaySpool());
        DrainReport report = manager.stop(Duration.ofMinutes(1));
        ChildOutput.say("DRAINED delivered=" + report.delivered() + " failed=" + report.failed() + " complete="
                + report.complete());
        System.exit(0);
    }
}
