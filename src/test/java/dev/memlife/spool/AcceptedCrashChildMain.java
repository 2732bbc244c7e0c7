package dev.memlife.spool;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.store.JdbcMemoryProvider;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The child JVM of {@link AcceptedWritesCrashProcessTest}: one {@link MemoryManager} on a {@link
 * Spool}, storing into a {@link JdbcMemoryProvider} on a SQLite file that lags behind (a queue of
 * {@value #QUEUE}, {@value #BATCH} writes a transaction), fed by {@value #PRODUCERS} producers on
 * plain {@code syncAll}: no durable wait. A write's user content is its marker, {@code
 * <run>-p<producer>-<n>}; the moment {@code syncAll} returns true for it, its producer prints it
 * as a {@link ChildJvm#DURABLE} line (the protocol's word for "confirmed": here, accepted). In
 * {@code replay} mode it only replays, then shuts down cleanly and exits 0.
 *
 * <p>With a fifth argument {@code n > 0}, the spool's {@code n}-th force and every one after it
 * is held until the kill (a disk that stopped answering): it prints {@code FORCE_HELD} when the
 * hold begins, and from then on no write becomes durable, though writes are still accepted.
 *
 * <p>Usage: {@code AcceptedCrashChildMain write|replay <spool dir> <sqlite file> <run> [holdFrom]}.
 */
public final class AcceptedCrashChildMain {

    static final int PRODUCERS = 4;
    static final int QUEUE = 1_000;
    static final int BATCH = 8;

    private AcceptedCrashChildMain() {}

    public static void main(String[] args) throws InterruptedException {
        ChildOutput.listenToTheTest();
        String mode = args[0];
        String run = args[3];
        ChildOutput.say("STARTING " + run);
        int holdFrom = args.length > 4 ? Integer.parseInt(args[4]) : 0;
        if (holdFrom > 0) {
            AtomicInteger forces = new AtomicInteger();
            SpoolSegments.beforeForce = () -> {
                if (forces.incrementAndGet() >= holdFrom) {
                    ChildOutput.say("FORCE_HELD at force " + forces.get());
                    for (;;) {
                        LockSupport.park(); // until the kill
                    }
                }
            };
        }
        MemoryManager manager = MemoryManager.builder().name("accepted-" + run).spool(Spool.open(Path.of(args[1])))
                .queueCapacity(QUEUE).maxBatchSize(BATCH).enqueueTimeout(Duration.ofSeconds(20))
                .drainTimeout(Duration.ofSeconds(30)).build();
        manager.addProvider(JdbcMemoryProvider.sqlite(Path.of(args[2])));
        long replayed = manager.replaySpool();
        ChildOutput.say("READY replayed=" + replayed);
        if (mode.equals("write")) {
            List<Thread> producers = new ArrayList<>();
            for (int p = 0; p < PRODUCERS; p++) {
                String prefix = run + "-p" + p + "-";
                String session = "session-" + p;
                Thread t = new Thread(() -> {
                    for (long n = 0; ; n++) {
                        String marker = prefix + n;
                        if (!manager.syncAll(marker, "reply to " + marker, session)) {
                            ChildOutput.say("REFUSED " + marker);
                            System.exit(2);
                        }
                        ChildOutput.durable(List.of(marker));
                    }
                }, "producer-" + p);
                producers.add(t);
                t.start();
            }
            for (Thread t : producers) {
                t.join(); // until the kill
            }
        }
        DrainReport report = manager.stop();
        ChildOutput.say("DRAINED delivered=" + report.delivered() + " failed=" + report.failed() + " abandoned="
                + report.abandoned() + " complete=" + report.complete());
        System.exit(0);
    }
}
