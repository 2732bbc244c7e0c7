package dev.memlife;

import dev.memlife.internal.WriteAheadLog;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The replay of what an earlier run left in a manager's write-ahead log: once, before the first
 * new write (or when the application asks, {@link MemoryManager#replaySpool()}), to the providers
 * registered then, in the log's order and with the writes' own ids.
 */
final class LogReplay {

    private static final Logger LOG = LoggerFactory.getLogger(MemoryManager.class);

    private final String managerName;
    /** Null for a manager without a log: nothing to replay, ever. */
    private final WriteAheadLog log;
    private final Writer writer;
    private final ProviderRegistry registry;
    /** Guards the replay; {@link #done} is set once it ran. */
    private final Object lock = new Object();
    private volatile boolean done;

    LogReplay(String managerName, WriteAheadLog log, Writer writer, ProviderRegistry registry) {
        this.managerName = managerName;
        this.log = log;
        this.writer = writer;
        this.registry = registry;
    }

    /**
     * Whether a new write must replay first: there is a log, it was not replayed, and the write is
     * not a provider's on the writer thread (the replay waits for that thread: its write is queued
     * at once, behind the replayed writes queued so far).
     */
    boolean dueBefore() {
        return log != null && !done && !writer.onWriterThread();
    }

    /** The first write replays the log, if a provider would take the replayed writes. */
    void beforeFirstWrite(Consumer<String> checkRunning) {
        if (registry.current().length == 0) {
            return; // a write to no provider goes nowhere, and is not spooled; the replay waits for a provider
        }
        try {
            replay(checkRunning);
        } catch (StoppedException e) {
            // shutdown began: the write is rejected by the caller, and the log keeps what it holds
        }
    }

    /** See {@link MemoryManager#replaySpool()}. */
    long replay(Consumer<String> checkRunning) {
        checkLog("replaySpool");
        if (writer.onWriterThread() && !done) { // a replay waits for the writer thread: it would wait for itself
            throw new IllegalStateException("memory manager '" + managerName + "': replaySpool was called by a "
                    + "provider, on the writer thread, while the replay runs; call it at start-up instead");
        }
        synchronized (lock) {
            checkRunning.accept("replaySpool");
            if (done) {
                return 0;
            }
            RegisteredProvider[] route = registry.current();
            if (route.length == 0) {
                throw new IllegalStateException("memory manager '" + managerName + "' has no provider registered: "
                        + "register its providers before replaying its spool, or the writes would go nowhere");
            }
            long replayed = log.replay((turn, position) -> writer.enqueueReplayed(turn, position, route));
            done = true;
            if (replayed > 0) {
                LOG.info("memory manager '{}' replayed {} writes from its spool", managerName, replayed);
            }
            return replayed;
        }
    }

    /** Throws unless the manager has a log; {@code method} is the call that needs one. */
    void checkLog(String method) {
        if (log == null) {
            throw new IllegalStateException("memory manager '" + managerName + "' has no spool (" + method
                    + "): build it with MemoryManager.builder().spool(Spool.open(dir))");
        }
    }
}
