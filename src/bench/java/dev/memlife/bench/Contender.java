package dev.memlife.bench;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.AppenderBase;
import dev.memlife.MemoryManager;
import dev.memlife.MemoryProvider;
import dev.memlife.Turn;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * A write-behind path a user could pick to get work off the request thread: memlife, or one of
 * its peers. Every contender hands each write to the same {@link CountingSink} on its own
 * background thread, and holds at most {@link #CAPACITY} pending writes.
 */
abstract class Contender {

    static final int CAPACITY = 10_000;
    static final String USER = "what did I say about the deadline?";
    static final String ASSISTANT = "You said the report is due on Friday.";
    static final String SESSION = "session-1";

    final CountingSink sink = new CountingSink();

    /** Hands one write over; called from producer threads. */
    abstract void submit();

    /** Waits until {@code total} writes reached the sink. */
    void awaitDelivered(long total) {
        sink.awaitCount(total);
    }

    abstract void close();

    static Contender named(String name) {
        switch (name) {
            case "memlife": return new Memlife();
            case "executor": return new SingleThreadExecutor();
            case "logback": return new LogbackAsync();
            case "otel": return new OtelBatch();
            default: throw new IllegalArgumentException("unknown contender: " + name);
        }
    }

    /** memlife's {@code syncAll} with one provider. */
    static final class Memlife extends Contender {
        private final MemoryManager manager = MemoryManager.builder().name("bench").queueCapacity(CAPACITY)
                .enqueueTimeout(Duration.ofMinutes(1)).build();

        Memlife() {
            manager.addProvider(new MemoryProvider() {
                @Override
                public String name() {
                    return "sink";
                }

                @Override
                public void syncTurn(Turn turn) {
                    sink.accept(turn);
                }
            });
        }

        @Override
        void submit() {
            manager.syncAll(USER, ASSISTANT, SESSION);
        }

        @Override
        void close() {
            manager.stop(Duration.ofSeconds(5));
        }
    }

    /** {@code Executors.newSingleThreadExecutor()}, one task per write. */
    static final class SingleThreadExecutor extends Contender {
        private final ExecutorService executor = Executors.newSingleThreadExecutor();

        @Override
        void submit() {
            String user = USER;
            String assistant = ASSISTANT;
            executor.execute(() -> sink.accept(user.length() + assistant.length() > 0 ? user : null));
        }

        @Override
        void close() {
            executor.shutdownNow();
        }
    }

    /** Logback's {@code AsyncAppender} in front of a no-op appender, blocking (never discarding) when full. */
    static final class LogbackAsync extends Contender {
        private final LoggerContext context = new LoggerContext();
        private final ch.qos.logback.classic.Logger logger = context.getLogger("bench");
        private final ch.qos.logback.classic.AsyncAppender async = new ch.qos.logback.classic.AsyncAppender();

        LogbackAsync() {
            context.setMDCAdapter(new ch.qos.logback.classic.util.LogbackMDCAdapter());
            AppenderBase<ILoggingEvent> noop = new AppenderBase<>() {
                @Override
                protected void append(ILoggingEvent event) {
                    sink.accept(event);
                }
            };
            noop.setName("noop");
            noop.setContext(context);
            noop.start();
            async.setName("async");
            async.setContext(context);
            async.setQueueSize(CAPACITY);
            async.setDiscardingThreshold(0);
            async.setNeverBlock(false);
            async.setIncludeCallerData(false);
            async.addAppender(noop);
            async.start();
        }

        @Override
        void submit() {
            async.doAppend(new LoggingEvent("bench", logger, Level.INFO, ASSISTANT, null, new Object[] {USER, SESSION}));
        }

        @Override
        void close() {
            async.stop();
            context.stop();
        }
    }

    /** OpenTelemetry's {@code BatchSpanProcessor} in front of a no-op exporter. */
    static final class OtelBatch extends Contender {
        private final BatchSpanProcessor processor;
        private final SdkTracerProvider provider;
        private final Tracer tracer;

        OtelBatch() {
            SpanExporter exporter = new SpanExporter() {
                @Override
                public CompletableResultCode export(Collection<SpanData> spans) {
                    for (SpanData span : spans) {
                        sink.accept(span);
                    }
                    return CompletableResultCode.ofSuccess();
                }

                @Override
                public CompletableResultCode flush() {
                    return CompletableResultCode.ofSuccess();
                }

                @Override
                public CompletableResultCode shutdown() {
                    return CompletableResultCode.ofSuccess();
                }
            };
            // A queue this large never drops within one benchmark operation; OTel would drop, not block, when full.
            processor = BatchSpanProcessor.builder(exporter).setMaxQueueSize(1 << 20).setMaxExportBatchSize(512)
                    .setScheduleDelay(Duration.ofMillis(1)).build();
            provider = SdkTracerProvider.builder().addSpanProcessor(processor).build();
            tracer = provider.get("bench");
        }

        @Override
        void submit() {
            tracer.spanBuilder(ASSISTANT).startSpan().end();
        }

        @Override
        void awaitDelivered(long total) {
            processor.forceFlush().join(1, TimeUnit.MINUTES);
            super.awaitDelivered(total);
        }

        @Override
        void close() {
            provider.shutdown().join(10, TimeUnit.SECONDS);
        }
    }
}
