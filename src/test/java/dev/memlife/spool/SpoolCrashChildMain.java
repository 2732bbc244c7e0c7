package dev.memlife.spool;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.SpoolFigures;
import dev.memlife.store.JdbcMemoryProvider;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The child JVM of {@link SpoolCrashProcessTest}: one {@link MemoryManager} on a {@link Spool},
 * storing into a {@link JdbcMemoryProvider} on a SQLite file, as an application would run it.
 * It replays what the spool holds, then, in {@code write} mode, writes turns as fast as it can
 * until it is killed: {@value #GROUP} {@code syncAll} calls, one {@code awaitDurable}, and a
 * {@link ChildJvm#DURABLE} line for each write of the group once the spool confirmed it. A
 * write's user content is its marker, {@code <run>-<n>}, unique across the test. In {@code
 * replay} mode it only replays, then shuts down cleanly and exits 0.
 *
 * <p>The store lags behind the spool, as a remote database does behind a local disk: the queue
 * holds {@value #QUEUE} writes and the writer hands the store {@value #BATCH} at a time (one
 * SQLite transaction each), while the spool confirms {@value #GROUP} writes per force. So the
 * writer fills the queue and waits for room, and at a kill up to {@value #QUEUE} writes confirmed
 * durable are not in the store yet: only the spool's replay can bring them there.
 *
 * <p>Usage: {@code SpoolCrashChildMain write|replay <spool dir> <sqlite file> <run> [<segment
 * bytes>]}: without segment bytes the spool is {@code Spool.open(dir)}'s, with its 64 MiB
 * segments; with them it rolls to a new segment that often, so kills land around rolls and
 * replays span segments. Prints
 * {@code STARTING}, then {@code READY replayed=.. tornTailBytes=.. corruptRecords=..} once the
 * replay is queued, and in {@code replay} mode {@code DRAINED ...} after the shutdown.
 */
public final class SpoolCrashChildMain {

    /** Writes per durability wait. */
    static final int GROUP = 64;
    /** The manager's queue: what the store may lag behind the spool. */
    static final int QUEUE = 1_000;
    /** Writes per store transaction. */
    static final int BATCH = 8;
    private static final Duration DURABLE_WAIT = Duration.ofSeconds(20);

    private SpoolCrashChildMain() {}

    public static void main(String[] args) {
        ChildOutput.listenToTheTest();
        String mode = args[0];
        Path spoolDir = Path.of(args[1]);
        Path db = Path.of(args[2]);
        String run = args[3];
        ChildOutput.say("STARTING " + run);

        Spool spool = args.length > 4 ? Spool.builder(spoolDir).segmentBytes(Long.parseLong(args[4])).open()
                : Spool.open(spoolDir);
        JdbcMemoryProvider store = JdbcMemoryProvider.sqlite(db);
        MemoryManager manager = MemoryManager.builder().name("crash-" + run).spool(spool)
                .queueCapacity(QUEUE).maxBatchSize(BATCH)
                .enqueueTimeout(DURABLE_WAIT).drainTimeout(Duration.ofSeconds(30)).build();
        manager.addProvider(store);
        long replayed = manager.replaySpool();
        SpoolFigures opened = manager.figures().spool();
        ChildOutput.say("READY replayed=" + replayed + " tornTailBytes=" + opened.tornTailBytes() + " corruptRecords="
                + opened.corruptRecords());

        if (mode.equals("write")) {
            writeUntilKilled(manager, run);
        }
        DrainReport report = manager.stop();
        ChildOutput.say("DRAINED delivered=" + report.delivered() + " failed=" + report.failed() + " abandoned="
                + report.abandoned() + " stillRunning=" + report.stillRunning() + " complete=" + report.complete());
        System.exit(0);
    }

    private static void writeUntilKilled(MemoryManager manager, String run) {
        List<String> group = new ArrayList<>(GROUP);
        for (long n = 0; ; ) {
            group.clear();
            for (int i = 0; i < GROUP; i++, n++) {
                String marker = run + "-" + n;
                if (!manager.syncAll(marker, "reply to " + marker, "session-" + (n % 4))) {
                    ChildOutput.say("REFUSED " + marker);
                    System.exit(2);
                }
                group.add(marker);
            }
            if (!manager.awaitDurable(DURABLE_WAIT)) {
                ChildOutput.say("NOT_DURABLE " + group.get(0));
                System.exit(2);
            }
            ChildOutput.durable(group);
        }
    }
}
