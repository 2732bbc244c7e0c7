package dev.memlife;

import java.time.Duration;

/**
 * A write-behind decorator: it takes writes at once and one writer thread hands them to the
 * framework's store behind it (the <em>backend</em>). memlife's write-behind chat memories and
 * vector stores are each one, and this is what they share: a name, a {@link #flush} barrier, a
 * bounded {@link #stop} that reports by id, and live {@link #figures}. The Spring Boot starter's
 * health entry, meters and start-up line find every bean of this type.
 *
 * @param <K> the ids writes are reported by: the framework's memory, conversation or document ids
 */
public interface WriteBehind<K> extends Stoppable<WriteBehindReport<K>>, AutoCloseable {

    /** {@return the decorator's name, as its writer thread, logs and errors use it} */
    String name();

    /**
     * Waits until every write handed over before this call is in the backend, or the timeout
     * passes. Writes the backend refused earlier are tried again first. Writes handed over later
     * do not extend the wait. Idle, it returns true at once.
     *
     * @param timeout the longest wait; zero or more
     * @return true if everything handed over before the call is in the backend; false if the
     *     timeout passed, the backend refused one of those writes again, the decorator was stopped
     *     with some still waiting, or the calling thread was interrupted (its flag is set again)
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException if {@code timeout} is negative or too large to measure
     */
    boolean flush(Duration timeout);

    /**
     * Refuses every later write ({@link StoppedException}), writes what waits, writes the backend
     * refused earlier included, until everything is written or {@code budget} has passed, and
     * reports by id. At the deadline the writer takes nothing more: what it has not started is
     * abandoned (it stays readable through the decorator's reads, but is never written), and a
     * write it is in the middle of goes on, detached; how it ended is logged. The call that ends
     * the stop logs it: a summary when nothing was left unwritten, the report otherwise. Calls
     * after the first wait for the same drain within their own budget, the earliest deadline
     * holds, and a call after the end reports at once. The reads go on working. The backend is not
     * closed: it is the application's.
     *
     * @param budget the longest the call takes; zero or more
     * @return what became of every id that was waiting
     * @throws NullPointerException if {@code budget} is null
     * @throws IllegalArgumentException if {@code budget} is negative or too large to measure
     */
    @Override
    WriteBehindReport<K> stop(Duration budget);

    /**
     * Stops within the builder's {@link WriteBehindBuilder#closeTimeout closeTimeout} (5 s by
     * default): {@link #stop(Duration)}, for try-with-resources and frameworks (Spring infers it as
     * a bean's destroy method). An incomplete stop is logged with its report.
     */
    @Override
    void close();

    /**
     * The figures now: cheap, one short lock.
     *
     * @return the counters and the number of ids waiting
     */
    WriteBehindFigures figures();
}
