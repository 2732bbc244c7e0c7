package dev.memlife.bench;

import dev.memlife.MemoryManager;
import dev.memlife.MemoryProvider;
import dev.memlife.Turn;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/** The cost of {@code flushPending}: on an idle manager, and with 1,000 writes queued. */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class FlushBenchmark {

    static final Duration TIMEOUT = Duration.ofSeconds(10);

    /** A manager whose writes all went through already. */
    @State(Scope.Benchmark)
    public static class Idle {
        MemoryManager manager;

        @Setup(Level.Trial)
        public void setUp() {
            manager = MemoryManager.create();
            manager.addProvider(() -> "noop");
            manager.syncAll(Contender.USER, Contender.ASSISTANT, Contender.SESSION);
            if (!manager.flushPending(TIMEOUT)) {
                throw new IllegalStateException("setup flush failed");
            }
        }

        @TearDown(Level.Trial)
        public void teardown() {
            manager.stop();
        }
    }

    /** Before each call: 1,000 writes queued behind a gate the call opens. */
    @State(Scope.Benchmark)
    public static class Queued {
        static final int QUEUED = 1_000;
        MemoryManager manager;
        volatile CountDownLatch gate;

        @Setup(Level.Trial)
        public void setUp() {
            manager = MemoryManager.builder().queueCapacity(QUEUED + 1).build();
            manager.addProvider(new MemoryProvider() {
                @Override
                public String name() {
                    return "gated-noop";
                }

                @Override
                public void syncTurn(Turn turn) {
                    CountDownLatch g = gate;
                    if (g != null) {
                        try {
                            g.await();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                }
            });
        }

        @Setup(Level.Invocation)
        public void queue() {
            gate = new CountDownLatch(1);
            for (int i = 0; i < QUEUED; i++) {
                manager.syncAll(Contender.USER, Contender.ASSISTANT, Contender.SESSION);
            }
        }

        @TearDown(Level.Trial)
        public void teardown() {
            gate.countDown();
            manager.stop();
        }
    }

    @Benchmark
    public boolean idleFlush(Idle state) {
        return state.manager.flushPending(TIMEOUT);
    }

    @Benchmark
    public boolean flushWith1000Queued(Queued state) {
        state.gate.countDown();
        boolean done = state.manager.flushPending(TIMEOUT);
        if (!done) {
            throw new IllegalStateException("flush did not complete");
        }
        return done;
    }
}
