package dev.memlife.agent;

import dev.memlife.MemoryManager;
import dev.memlife.Message;
import dev.memlife.agent.TeardownReport.Extraction;
import dev.memlife.internal.Deadline;
import dev.memlife.internal.Threads;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a manager's end-of-session extraction on a thread of its own and waits for it at most a
 * timeout, so a provider that hangs in {@code onSessionEnd} cannot hold the calling thread (a
 * housekeeping worker) forever. An extraction still running at the timeout is left to finish
 * detached on its (daemon) thread, and reported. If no thread can be made for it, extraction runs
 * on the calling thread, unbounded, rather than not at all; that is logged.
 */
final class BoundedExtraction {

    private static final Logger LOG = LoggerFactory.getLogger(AgentMemory.class);

    private BoundedExtraction() {}

    /**
     * Waits until {@code deadline} for the extraction; an interrupt ends the wait early, is
     * reported as {@link Extraction#TIMED_OUT} and leaves the interrupt flag set.
     */
    static Extraction run(MemoryManager manager, List<Message> transcript, Threads threads, Deadline deadline) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        Runnable extraction = () -> {
            try {
                manager.onSessionEnd(transcript);
                done.complete(null);
            } catch (Throwable t) {
                done.completeExceptionally(t);
            }
        };
        Thread thread = threads.start(extraction, t -> LOG.warn("agent '{}': no thread could be made for end-of-session "
                + "extraction ({}); running it on this thread, unbounded", manager.name(), t.toString()));
        if (thread == null) {
            extraction.run();
            return done.isCompletedExceptionally() ? Extraction.FAILED : Extraction.COMPLETED;
        }
        try {
            deadline.get(done);
            return Extraction.COMPLETED;
        } catch (TimeoutException e) {
            LOG.warn("agent '{}': end-of-session extraction did not return within {} ms; left running detached on {}",
                    manager.name(), deadline.budget().toMillis(), thread.getName());
            return Extraction.TIMED_OUT;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            LOG.warn("agent '{}': interrupted while waiting for end-of-session extraction; left running detached",
                    manager.name());
            return Extraction.TIMED_OUT;
        } catch (ExecutionException e) {
            LOG.warn("agent '{}': end-of-session extraction could not run", manager.name(), e.getCause());
            return Extraction.FAILED;
        }
    }
}
