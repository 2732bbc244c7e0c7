package dev.memlife.bench;

import dev.memlife.MemoryManager;
import dev.memlife.MemoryProvider;
import dev.memlife.Turn;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Request-path latency of {@code syncAll} while the provider takes 1 ms per write: the caller must
 * never wait on the provider. Requests are paced (one every {@link #PACE_NANOS} ns, in an untimed
 * per-invocation setup) so the queue grows steadily but never fills within a run; JMH samples the
 * time of every call.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class LatencyBenchmark {

    static final long PACE_NANOS = 20_000;

    private MemoryManager manager;
    private long next;

    @Setup(Level.Trial)
    public void setUp() {
        manager = MemoryManager.builder().name("latency").queueCapacity(4_000_000).build();
        manager.addProvider(new MemoryProvider() {
            @Override
            public String name() {
                return "one-millisecond-store";
            }

            @Override
            public void syncTurn(Turn turn) {
                LockSupport.parkNanos(1_000_000);
            }
        });
        next = System.nanoTime();
    }

    @Setup(Level.Invocation)
    public void pace() {
        next += PACE_NANOS;
        while (System.nanoTime() < next) {
            Thread.onSpinWait();
        }
    }

    @TearDown(Level.Trial)
    public void teardown() {
        manager.stop(Duration.ZERO);
    }

    @Benchmark
    public boolean syncAllBehindASlowProvider() {
        return manager.syncAll(Contender.USER, Contender.ASSISTANT, Contender.SESSION);
    }
}
