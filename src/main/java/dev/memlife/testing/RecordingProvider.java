package dev.memlife.testing;

import static java.util.Objects.requireNonNull;

import dev.memlife.MemoryProvider;
import dev.memlife.Message;
import dev.memlife.Turn;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A provider that remembers everything it is handed, for tests: the turns in delivery order, the
 * transcripts of every end-of-session call, and an event log of the lifecycle hooks
 * ({@code "initialize:<session>"}, {@code "sync:<user content>"}, {@code "on_session_end"},
 * {@code "shutdown"}).
 *
 * <p>Thread-safe: the manager's threads record while the test reads; every accessor returns a
 * snapshot. Open for extension: a test overrides a hook to add behaviour and calls {@code super}
 * (or {@link #record(String)}) to keep the log.
 */
public class RecordingProvider implements MemoryProvider {

    private final String name;
    private final Object lock = new Object();
    private final List<Turn> turns = new ArrayList<>();
    private final List<String> events = new ArrayList<>();
    private final List<List<Message>> sessionEnds = new ArrayList<>();

    /**
     * A recording provider with the given name.
     *
     * @param name the provider's name
     * @throws NullPointerException if {@code name} is null
     */
    public RecordingProvider(String name) {
        this.name = requireNonNull(name, "name");
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public void initialize(String sessionId) {
        record("initialize:" + sessionId);
    }

    @Override
    public void syncTurn(Turn turn) {
        synchronized (lock) {
            turns.add(turn);
            events.add("sync:" + turn.userContent());
            lock.notifyAll();
        }
    }

    @Override
    public void onSessionEnd(List<Message> messages) {
        synchronized (lock) {
            sessionEnds.add(List.copyOf(messages));
            events.add("on_session_end");
        }
    }

    @Override
    public void shutdown() {
        record("shutdown");
    }

    /**
     * Appends an event to the log; for subclasses that add hooks of their own.
     *
     * @param event the event, as {@link #events()} will list it
     */
    protected final void record(String event) {
        synchronized (lock) {
            events.add(event);
        }
    }

    /** {@return the turns delivered so far, in delivery order} */
    public List<Turn> turns() {
        synchronized (lock) {
            return List.copyOf(turns);
        }
    }

    /** {@return the assistant content of every delivered turn, in delivery order} */
    public List<String> assistantContents() {
        List<String> out = new ArrayList<>();
        for (Turn t : turns()) {
            out.add(t.assistantContent());
        }
        return out;
    }

    /** {@return the event log so far, oldest first} */
    public List<String> events() {
        synchronized (lock) {
            return List.copyOf(events);
        }
    }

    /** {@return the transcript handed to each end-of-session call, in call order} */
    public List<List<Message>> sessionEnds() {
        synchronized (lock) {
            return List.copyOf(sessionEnds);
        }
    }

    /**
     * How many times the given event was recorded.
     *
     * @param event the event, as {@link #events()} lists it
     * @return the number of times it is in the log
     */
    public int count(String event) {
        int n = 0;
        for (String e : events()) {
            n += e.equals(event) ? 1 : 0;
        }
        return n;
    }

    /**
     * Waits until at least {@code count} turns were delivered, for at most {@code timeout}.
     *
     * @param count how many turns to wait for, in all (not counting from this call)
     * @param timeout how long to wait at most
     * @return true if they were; false on timeout or interrupt (the interrupt flag is restored)
     */
    public boolean awaitTurns(int count, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (lock) {
            while (turns.size() < count) {
                long remaining = deadline - System.nanoTime();
                if (remaining <= 0) {
                    return false;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(lock, remaining);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return true;
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + name + "]";
    }
}
