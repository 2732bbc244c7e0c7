package dev.memlife.internal;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;
import jdk.jfr.Threshold;
import jdk.jfr.Timespan;

/**
 * memlife's JDK Flight Recorder events, all in one place: a slow flush, drain, write batch,
 * teardown, reset or spool group commit shows up in a recording (JDK Mission Control: category
 * "memlife") with its figures. Not part of the API: the package is not exported; the event names
 * ({@code dev.memlife.Flush}, ...) and fields are what users see.
 *
 * <p><b>On by default, above a threshold.</b> Every event is enabled by default with a threshold
 * of {@value #THRESHOLD}, so a recording with the JDK's default settings ({@code
 * -XX:StartFlightRecording}, which does not name these events) keeps the operations that took
 * that long or longer and leaves the fast ones out; a recording may lower the threshold or disable
 * an event by name. Ten milliseconds is two orders of magnitude above a healthy batch or group
 * commit (a SQLite commit or a disk force takes well under a millisecond on a healthy disk) and a
 * hundredth of the default budgets of a flush or a drain: what crosses it is a slow provider, a
 * stalled disk or a shutdown waiting, which is what a recording is for.
 *
 * <p><b>Cost.</b> The core emits an event per operation that can be slow, never per write: per
 * flush that has to wait (a flush that returns at once creates nothing), per drain, per batch the
 * writer hands to its providers, per teardown that ran, per reset of a cached agent, per group
 * commit that wrote something. Without a recording, an event's methods are empty and the JIT can
 * remove the allocation (the hot-path benchmark allocates no more per write than before the
 * events); with one, an event under its threshold costs two reads of the recorder's clock and is
 * not written. {@code syncAll} creates none.
 *
 * <p>The pattern at every site: {@code begin()} when the operation starts; at its end {@code
 * end()}, then the fields are filled and the event committed only if {@code shouldCommit()} says
 * the recording wants it.
 */
public final class Events {

    /** The default threshold of every memlife event. */
    public static final String THRESHOLD = "10 ms";

    private Events() {}

    /** A {@code flushPending} that had to wait for the writer. */
    @Name("dev.memlife.Flush")
    @Label("Memory Flush")
    @Category("memlife")
    @Description("A flush barrier that had to wait for the writer: every write accepted before it handed to every "
            + "provider, or the timeout")
    @Threshold(THRESHOLD)
    public static final class Flush extends Event {
        /** The manager's name. */
        @Label("Manager")
        public String manager;
        /** Writes the flush waited for: accepted before it and not yet finished when it began. */
        @Label("Writes")
        @Description("Writes accepted before the flush and not yet finished when it began")
        public long writes;
        /** Whether the barrier was met; false on timeout, interrupt or abandonment. */
        @Label("Met")
        @Description("The barrier was met; false on timeout, interrupt or abandonment")
        public boolean met;
        /** The flush's timeout. */
        @Label("Timeout")
        @Timespan
        public long timeout;
    }

    /** A manager's drain at shutdown: the queue drained until the drain deadline. */
    @Name("dev.memlife.Drain")
    @Label("Memory Drain")
    @Category("memlife")
    @Description("A manager's shutdown drain: the queue written until the deadline, then what was not started "
            + "abandoned")
    @Threshold(THRESHOLD)
    public static final class Drain extends Event {
        /** The manager's name. */
        @Label("Manager")
        public String manager;
        /** Writes pending (queued or being written) when the drain began. */
        @Label("Pending")
        @Description("Writes queued or being written when the drain began")
        public long pending;
        /** Writes delivered while the drain ran. */
        @Label("Delivered")
        @Description("Writes delivered while the drain ran")
        public long delivered;
        /** Writes at least one provider failed while the drain ran. */
        @Label("Failed")
        @Description("Writes at least one provider failed while the drain ran")
        public long failed;
        /** Writes abandoned at the deadline, never started. */
        @Label("Abandoned")
        @Description("Writes abandoned at the deadline, never started")
        public long abandoned;
        /** Writes still with a provider at the deadline. */
        @Label("Still Running")
        @Description("Writes still with a provider at the deadline")
        public long stillRunning;
        /** The drain's budget when it began. */
        @Label("Budget")
        @Timespan
        public long budget;
    }

    /** A batch the writer took off the queue and handed to the providers. */
    @Name("dev.memlife.Batch")
    @Label("Memory Write Batch")
    @Category("memlife")
    @Description("A batch of writes the writer thread handed to every provider of their route")
    @Threshold(THRESHOLD)
    @StackTrace(false)
    public static final class Batch extends Event {
        /** The manager's name. */
        @Label("Manager")
        public String manager;
        /** Writes in the batch. */
        @Label("Writes")
        public long writes;
        /** Writes of the batch at least one provider failed. */
        @Label("Failed")
        public long failed;
        /** Writes of the batch the drain abandoned before the writer started them. */
        @Label("Abandoned")
        public long abandoned;
    }

    /** One teardown of an agent that ran (a call that lost the claim does nothing and records nothing). */
    @Name("dev.memlife.Teardown")
    @Label("Agent Teardown")
    @Category("memlife")
    @Description("An agent's teardown: flush, extraction if the mode extracts, the manager's shutdown")
    @Threshold(THRESHOLD)
    public static final class Teardown extends Event {
        /** The agent's (its manager's) name. */
        @Label("Agent")
        public String agent;
        /** The teardown mode: CLOSE, RELEASE or COMMIT_THEN_RELEASE. */
        @Label("Mode")
        public String mode;
        /** Whether the flush barrier was met before the shutdown. */
        @Label("Flushed")
        public boolean flushed;
        /** What became of extraction: NOT_RUN, COMPLETED, TIMED_OUT or FAILED. */
        @Label("Extraction")
        public String extraction;
        /** Writes delivered by the agent's manager in its whole life. */
        @Label("Delivered")
        public long delivered;
        /** Writes failed in the manager's whole life. */
        @Label("Failed")
        public long failed;
        /** Writes abandoned at the drain deadline. */
        @Label("Abandoned")
        public long abandoned;
        /** Writes still with a provider at the drain deadline. */
        @Label("Still Running")
        public long stillRunning;
        /** Providers whose shutdown did not finish within the budget. */
        @Label("Providers Not Shut Down")
        public int providersNotShutDown;
        /** What the teardown threw, if it did; null otherwise. */
        @Label("Failure")
        public String failure;
    }

    /** A gateway's reset ({@code /reset}, {@code /new}) of a cached agent. */
    @Name("dev.memlife.Reset")
    @Label("Gateway Reset")
    @Category("memlife")
    @Description("A gateway reset of a cached agent: the hard close, as long as the reset waited for it")
    @Threshold(THRESHOLD)
    public static final class Reset extends Event {
        /** The gateway's name. */
        @Label("Gateway")
        public String gateway;
        /** The session key. */
        @Label("Key")
        public String key;
        /** The agent's (its manager's) name. */
        @Label("Agent")
        public String agent;
        /** How the hard close ended within the wait: CLOSED, TIMED_OUT or FAILED. */
        @Label("Status")
        public String status;
    }

    /** A group commit of a spool that wrote something: the buffer written and forced. */
    @Name("dev.memlife.SpoolCommit")
    @Label("Spool Group Commit")
    @Category("memlife")
    @Description("A spool group commit: the appended writes written to the segment and forced to disk")
    @Threshold(THRESHOLD)
    @StackTrace(false)
    public static final class SpoolCommit extends Event {
        /** The manager's name. */
        @Label("Manager")
        public String manager;
        /** The spool's directory. */
        @Label("Directory")
        public String directory;
        /** Writes the commit made durable. */
        @Label("Writes")
        public long writes;
        /** Bytes written. */
        @Label("Bytes")
        @DataAmount
        public long bytes;
        /** Segments started during the commit. */
        @Label("Segments Started")
        public int segmentsStarted;
        /** Whether this was the spool's last commit, at close. */
        @Label("Closing")
        public boolean closing;
        /** Whether the write or force failed (the spool then refuses new writes). */
        @Label("Failed")
        public boolean failed;
    }
}
