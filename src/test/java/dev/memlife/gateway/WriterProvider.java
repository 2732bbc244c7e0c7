package dev.memlife.gateway;

import dev.memlife.MemoryProvider;
import dev.memlife.Message;
import dev.memlife.Turn;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Consumer;

/**
 * The seed's {@code _WriterProvider}: a provider that owns a real writer thread which only {@link
 * #shutdown()} stops, so a teardown that forgets to shut the providers down leaks a live thread the
 * test can see. It records only {@code "on_session_end"} and {@code "shutdown"} into the shared
 * event list; a test swaps a hook in ({@link #onSync}, {@link #onSessionEnd}, {@link #onShutdown})
 * the way the seed monkeypatches the provider's methods.
 */
final class WriterProvider implements MemoryProvider {

    private static final Object STOP = new Object();

    final List<String> events;
    private final BlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    private final Thread writer;
    private final List<List<Message>> transcripts = Collections.synchronizedList(new ArrayList<>());
    private volatile Consumer<Turn> syncHook = turn -> {};
    private volatile Consumer<List<Message>> sessionEndHook = messages -> record("on_session_end");
    private volatile Runnable shutdownHook = this::realShutdown;

    WriterProvider(List<String> events) {
        this.events = events;
        this.writer = new Thread(this::run, "test-mem-writer");
        writer.setDaemon(true);
        writer.start();
    }

    private void run() {
        try {
            while (queue.take() != STOP) {
                // a real provider would write here
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String name() {
        return "writerstub";
    }

    @Override
    public void syncTurn(Turn turn) {
        syncHook.accept(turn);
    }

    @Override
    public void onSessionEnd(List<Message> messages) {
        transcripts.add(List.copyOf(messages));
        sessionEndHook.accept(messages);
    }

    @Override
    public void shutdown() {
        shutdownHook.run();
    }

    /** The real shutdown: records it, then stops and joins the writer thread. */
    void realShutdown() {
        record("shutdown");
        queue.add(STOP);
        try {
            writer.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    void record(String event) {
        events.add(event);
    }

    void onSync(Consumer<Turn> hook) {
        this.syncHook = hook;
    }

    void onSessionEnd(Consumer<List<Message>> hook) {
        this.sessionEndHook = hook;
    }

    void onShutdown(Runnable hook) {
        this.shutdownHook = hook;
    }

    boolean writerAlive() {
        return writer.isAlive();
    }

    /** The transcript each extraction was handed. */
    List<List<Message>> transcripts() {
        synchronized (transcripts) {
            return List.copyOf(transcripts);
        }
    }
}
