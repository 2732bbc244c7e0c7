package dev.memlife.soak;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.AppenderBase;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.LoggerFactory;

/**
 * Takes memlife's log over for the soak: every warning goes to a file instead of the console (a
 * soak logs thousands of injected failures), is counted, and the lines in which a writer says how
 * a write that was still running at a drain deadline ended are kept by write id, for the check that
 * every still-running write is eventually stored or logged.
 */
final class LogTap extends AppenderBase<ILoggingEvent> {

    /** Writer's line for a still-running write that finished after the drain: "write ID finished after ...". */
    private static final Pattern LATE = Pattern.compile(
            "write (\\S+) finished after the drain deadline: (every provider took it|at least one provider failed it)");

    private final PrintWriter file;
    private final ConcurrentHashMap<String, Boolean> late = new ConcurrentHashMap<>();
    private final AtomicLong warnings = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();

    private LogTap(PrintWriter file) {
        this.file = file;
    }

    /** Replaces the root logger's appenders with a tap writing to {@code logFile}. */
    static LogTap install(Path logFile) throws IOException {
        LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
        LogTap tap = new LogTap(new PrintWriter(Files.newBufferedWriter(logFile, StandardCharsets.UTF_8)));
        tap.setContext(context);
        tap.setName("soak-tap");
        tap.start();
        Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        root.detachAndStopAllAppenders();
        root.addAppender(tap);
        return tap;
    }

    @Override
    protected void append(ILoggingEvent event) { // AppenderBase calls this under its own lock
        String message = event.getFormattedMessage();
        (event.getLevel().isGreaterOrEqual(ch.qos.logback.classic.Level.ERROR) ? errors : warnings).incrementAndGet();
        Matcher m = LATE.matcher(message);
        if (m.find()) {
            late.put(m.group(1), m.group(2).startsWith("every"));
        }
        file.print(Instant.ofEpochMilli(event.getTimeStamp()) + " " + event.getLevel() + " [" + event.getThreadName()
                + "] " + event.getLoggerName() + " - " + message);
        for (IThrowableProxy t = event.getThrowableProxy(); t != null; t = t.getCause()) {
            file.print(" | " + t.getClassName() + ": " + t.getMessage());
        }
        file.println();
    }

    /**
     * How the still-running write {@code writeId} ended, as the writer logged it: true if every
     * provider took it, false if one failed it; null if nothing was logged. Forgets the entry.
     */
    Boolean takeLateOutcome(String writeId) {
        return late.remove(writeId);
    }

    long warnings() {
        return warnings.get();
    }

    long errors() {
        return errors.get();
    }

    /** Lines about still-running writes that no check took (should be none after the checks). */
    int untakenLateLines() {
        return late.size();
    }

    @Override
    public void stop() {
        synchronized (this) {
            file.flush();
        }
        super.stop();
    }

    void flush() {
        synchronized (this) {
            file.flush();
        }
    }
}
