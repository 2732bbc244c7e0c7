package dev.memlife.bench;

import com.squareup.tape2.QueueFile;
import dev.memlife.MemoryManager;
import dev.memlife.MemoryProvider;
import dev.memlife.Turn;
import dev.memlife.spool.Spool;
import dev.memlife.spool.SpoolRecords;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Durable throughput (issue 14, part 1): {@code threads} producers write the same turn for a fixed
 * time, and a write counts once it is <em>confirmed on disk</em>. memlife: each producer calls
 * {@code syncAll} {@code pipeline} times, then {@code awaitDurable} once (a group commit shared with
 * every producer waiting at the same time), into one manager on one spool whose provider is the
 * counting sink. The peers get the same producers and the same payload:
 * <ul>
 *   <li>Square Tape's {@link QueueFile} (opened {@code "rwd"}: every {@code add} writes the element
 *       and then the header synchronously), one {@code add} per write, shared by the producers
 *       under one lock, as it is not thread-safe; the element is the bytes memlife's spool stores
 *       for the turn;
 *   <li>SQLite (WAL, {@code synchronous=FULL}), the rows the JDBC store stores for the turn, into
 *       its schema, on one connection shared under one lock (SQLite has one writer at a time; a
 *       connection each would only add busy-waits): one transaction per write, or one per {@code
 *       pipeline} rows of a producer (the grouped peer, confirming as often as memlife's producers).
 * </ul>
 * The time runs from the barrier that starts the producers until the last one has had its last
 * write confirmed.
 */
final class SpoolThroughput {

    /** Writes confirmed on disk, the time, and the disk forces made for them (memlife: group commits). */
    record Result(String contender, long writes, long nanos, long forces) {
        double writesPerSecond() {
            return writes / (nanos / 1e9);
        }

        double forcesPerSecond() {
            return forces / (nanos / 1e9);
        }
    }

    /** One producer's loop: returns the writes it had confirmed when the deadline passed. */
    @FunctionalInterface
    private interface Producer {
        long run(int index, long deadline) throws Exception;
    }

    private SpoolThroughput() {}

    /** memlife: {@code pipeline} {@code syncAll} calls, then one {@code awaitDurable}, per producer. */
    static Result memlife(int threads, int pipeline, Duration time) throws Exception {
        Path dir = Files.createTempDirectory("memlife-spool-throughput");
        try {
            CountingSink sink = new CountingSink();
            MemoryManager manager = MemoryManager.builder().name("spool-throughput").spool(Spool.open(dir))
                    .queueCapacity(1 << 20).enqueueTimeout(Duration.ofMinutes(1)).build();
            manager.addProvider(sinkProvider(sink));
            long commitsBefore = manager.figures().spool().groupCommits();
            Result r = race("memlife", threads, time, (index, deadline) -> {
                long confirmed = 0;
                while (System.nanoTime() - deadline < 0) {
                    for (int i = 0; i < pipeline; i++) {
                        if (!manager.syncAll(Contender.USER, Contender.ASSISTANT, Contender.SESSION)) {
                            throw new IllegalStateException("a write was rejected");
                        }
                    }
                    if (!manager.awaitDurable(Duration.ofSeconds(30))) {
                        throw new IllegalStateException("not durable within 30 s");
                    }
                    confirmed += pipeline;
                }
                return confirmed;
            });
            long commits = manager.figures().spool().groupCommits() - commitsBefore;
            manager.stop(Duration.ofSeconds(30));
            if (manager.figures().delivered() < r.writes()) {
                throw new IllegalStateException("the sink got " + manager.figures().delivered() + " of " + r.writes());
            }
            return new Result(r.contender(), r.writes(), r.nanos(), commits);
        } finally {
            Files2.deleteTree(dir);
        }
    }

    /** Square Tape's QueueFile, one {@code add} (forced) per write, the producers under one lock. */
    static Result tape(int threads, Duration time) throws Exception {
        Path dir = Files.createTempDirectory("memlife-tape");
        try {
            byte[] payload = spooledBytes(dir.resolve("encode"));
            QueueFile queue = new QueueFile.Builder(dir.resolve("queue").toFile()).build();
            Result r;
            try {
                r = race("tape", threads, time, (index, deadline) -> {
                    long confirmed = 0;
                    while (System.nanoTime() - deadline < 0) {
                        synchronized (queue) {
                            queue.add(payload);
                        }
                        confirmed++;
                    }
                    return confirmed;
                });
                if (queue.size() != r.writes()) {
                    throw new IllegalStateException("tape holds " + queue.size() + " of " + r.writes());
                }
            } finally {
                queue.close();
            }
            return new Result(r.contender(), r.writes(), r.nanos(), 2 * r.writes()); // element, then header: 2 synchronous writes
        } finally {
            Files2.deleteTree(dir);
        }
    }

    /**
     * SQLite, WAL, {@code synchronous=FULL}, the store's schema and rows: one transaction per
     * {@code rowsPerTransaction} rows of a producer (1: a confirmation per write).
     */
    static Result sqlite(int threads, int rowsPerTransaction, Duration time) throws Exception {
        Path dir = Files.createTempDirectory("memlife-spool-sqlite");
        try {
            Path file = dir.resolve("peer.db");
            PlainJdbcLoop.createSchema(file);
            String prefix = UUID.randomUUID().toString();
            AtomicLong seq = new AtomicLong();
            Result r;
            try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath())) {
                try (Statement s = c.createStatement()) {
                    s.execute("PRAGMA busy_timeout = 5000");
                    s.execute("PRAGMA journal_mode = WAL");
                    s.execute("PRAGMA synchronous = FULL");
                }
                c.setAutoCommit(false);
                PreparedStatement insert = c.prepareStatement(PlainJdbcLoop.INSERT);
                String name = rowsPerTransaction == 1 ? "sqlite, a transaction per write"
                        : "sqlite, a transaction per " + rowsPerTransaction + " rows";
                r = race(name, threads, time, (index, deadline) -> {
                    long confirmed = 0;
                    while (System.nanoTime() - deadline < 0) {
                        synchronized (c) {
                            long now = System.currentTimeMillis();
                            for (int i = 0; i < rowsPerTransaction; i++) {
                                insert.setString(1, prefix + ':' + seq.incrementAndGet());
                                insert.setString(2, Contender.SESSION);
                                insert.setString(3, Contender.USER);
                                insert.setString(4, Contender.ASSISTANT);
                                insert.setBytes(5, PlainJdbcLoop.NO_MESSAGES);
                                insert.setLong(6, now);
                                insert.setLong(7, now);
                                if (rowsPerTransaction == 1) {
                                    insert.executeUpdate();
                                } else {
                                    insert.addBatch();
                                }
                            }
                            if (rowsPerTransaction > 1) {
                                insert.executeBatch();
                            }
                            c.commit();
                        }
                        confirmed += rowsPerTransaction;
                    }
                    return confirmed;
                });
                insert.close();
            }
            long rows = PlainJdbcLoop.countRows(file);
            if (rows != r.writes()) {
                throw new IllegalStateException("sqlite holds " + rows + " of " + r.writes());
            }
            return new Result(r.contender(), r.writes(), r.nanos(), r.writes() / rowsPerTransaction);
        } finally {
            Files2.deleteTree(dir);
        }
    }

    /** What memlife's spool stores for the benchmark's turn (its record's payload), as a peer's element. */
    static byte[] spooledBytes(Path scratch) {
        Spool spool = Spool.open(scratch);
        try {
            return SpoolRecords.encoded(spool, Turn.of(UUID.randomUUID() + ":1", Contender.SESSION, Contender.USER,
                    Contender.ASSISTANT, List.of(), Instant.now()));
        } finally {
            spool.close();
        }
    }

    static MemoryProvider sinkProvider(CountingSink sink) {
        return new MemoryProvider() {
            @Override
            public String name() {
                return "sink";
            }

            @Override
            public void syncTurn(Turn turn) {
                sink.accept(turn);
            }
        };
    }

    /** Runs the producers from one barrier until {@code time} has passed; the writes they confirmed. */
    private static Result race(String contender, int threads, Duration time, Producer producer) throws Exception {
        AtomicLong confirmed = new AtomicLong();
        long nanos = Producers.run(contender, threads, "spool-producer-",
                (index, startedAt) -> confirmed.addAndGet(producer.run(index, startedAt + time.toNanos())));
        return new Result(contender, confirmed.get(), nanos, 0);
    }
}
