package dev.memlife.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Hot path, end to end: one operation hands {@link #WRITES} writes to a contender from 1 or 2
 * producer threads and waits until all of them reached the shared no-op sink. Throughput is
 * {@code WRITES / time per operation}; measuring delivery (not just submission) keeps a contender
 * from looking fast by piling work up or dropping it.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class HotPathBenchmark {

    static final int WRITES = 20_000;

    @Param({"memlife", "executor", "logback", "otel"})
    public String contender;

    @Param({"1", "2"})
    public int producers;

    private Contender target;
    private ExecutorService producerThreads;
    private long delivered;

    @Setup(Level.Trial)
    public void setUp() {
        target = Contender.named(contender);
        producerThreads = Executors.newFixedThreadPool(producers);
        delivered = 0;
    }

    @TearDown(Level.Trial)
    public void teardown() {
        producerThreads.shutdownNow();
        target.close();
    }

    @Benchmark
    public long deliver20kWrites() throws Exception {
        int share = WRITES / producers;
        List<Future<?>> running = new ArrayList<>(producers);
        for (int p = 0; p < producers; p++) {
            running.add(producerThreads.submit(() -> {
                for (int i = 0; i < share; i++) {
                    target.submit();
                }
            }));
        }
        for (Future<?> f : running) {
            f.get();
        }
        delivered += (long) share * producers;
        target.awaitDelivered(delivered);
        return delivered;
    }
}
