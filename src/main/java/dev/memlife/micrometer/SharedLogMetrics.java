package dev.memlife.micrometer;

import static java.util.Objects.requireNonNull;

import dev.memlife.spool.SharedLogFigures;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.function.Supplier;

/**
 * The meters of one replica's shared log ({@link dev.memlife.spool.SharedLog}), read from its
 * {@link SharedLogFigures}:
 *
 * <pre>{@code
 * new SharedLogMetrics("shared", sharedLog::figures, Tags.empty()).bindTo(registry);   // tag name=shared
 * }</pre>
 *
 * <table>
 *   <caption>The meters</caption>
 *   <tr><th>name</th><th>type</th><th>what</th></tr>
 *   <tr><td>{@code memlife.sharedlog.agents}</td><td>gauge</td><td>agents whose lease this replica
 *       holds</td></tr>
 *   <tr><td>{@code memlife.sharedlog.pending}</td><td>gauge</td><td>writes appended and not yet
 *       committed: what a crash of this replica now would lose (none was confirmed durable)</td></tr>
 *   <tr><td>{@code memlife.sharedlog.appended}</td><td>function counter</td><td>writes appended by
 *       this replica's agents</td></tr>
 *   <tr><td>{@code memlife.sharedlog.committed}</td><td>function counter</td><td>of them, writes
 *       committed in the database</td></tr>
 *   <tr><td>{@code memlife.sharedlog.commits}</td><td>function counter</td><td>group commits:
 *       transactions that committed writes, delivery marks or renewals</td></tr>
 *   <tr><td>{@code memlife.sharedlog.replayed}</td><td>function counter</td><td>writes replayed
 *       from the log to a manager when it claimed its agent</td></tr>
 *   <tr><td>{@code memlife.sharedlog.takeovers}</td><td>function counter</td><td>leases taken over
 *       from a replica that let them expire (it died or froze)</td></tr>
 *   <tr><td>{@code memlife.sharedlog.adoptions}</td><td>function counter</td><td>agents the sweeper
 *       found expired with writes undelivered and handed to the adopter</td></tr>
 *   <tr><td>{@code memlife.sharedlog.fenced.writes}</td><td>function counter</td><td>writes refused,
 *       or dropped uncommitted, because another replica took their agent's lease</td></tr>
 *   <tr><td>{@code memlife.sharedlog.fenced.leases}</td><td>function counter</td><td>leases this
 *       replica found taken by another at its next renewal or commit</td></tr>
 *   <tr><td>{@code memlife.sharedlog.database.failures}</td><td>function counter</td><td>transactions
 *       that failed (a lost connection, a restart) and were tried again</td></tr>
 *   <tr><td>{@code memlife.sharedlog.takeover.lag}</td><td>time gauge</td><td>for the last takeover,
 *       from the lease's expiry until the writes it left were replayed; zero before the first</td></tr>
 * </table>
 *
 * <p>Every meter has the tag {@code name} and the caller's tags. The meters of one binder share a
 * snapshot of the figures, as {@link MemlifeMetrics}'s do: a scrape reads them once, and no meter
 * reports a snapshot older than a second. The meters hold the source strongly as long as they are
 * registered. Thread-safe.
 */
// Micrometer's types in this API are not re-exported: a module that uses the binder reads micrometer.core itself.
@SuppressWarnings("exports")
public final class SharedLogMetrics implements MeterBinder {

    private final Snapshots<SharedLogFigures> shared;
    private final Tags tags;

    /**
     * The meters of one shared log.
     *
     * @param name what the {@code name} tag says: the log's bean name, say
     * @param figures its figures, such as {@code sharedLog::figures}; called about once per scrape,
     *     from the scraping thread
     * @param tags further tags for every meter (a tag {@code name} among them loses to {@code name})
     * @throws NullPointerException if an argument is null
     */
    public SharedLogMetrics(String name, Supplier<SharedLogFigures> figures, Iterable<Tag> tags) {
        requireNonNull(name, "name");
        this.shared = new Snapshots<>(requireNonNull(figures, "figures"));
        this.tags = Tags.of(requireNonNull(tags, "tags")).and("name", name);
    }

    /**
     * Registers the meters with {@code registry}.
     *
     * @param registry the registry
     */
    @Override
    public void bindTo(MeterRegistry registry) {
        Meters<SharedLogFigures> m = new Meters<>(requireNonNull(registry, "registry"), shared, tags);
        String writes = "writes";
        m.gauge("memlife.sharedlog.agents", "agents", "Agents whose lease this replica holds",
                SharedLogFigures::heldAgents);
        m.gauge("memlife.sharedlog.pending", writes, "Writes appended and not yet committed: what a crash of this "
                + "replica now would lose", SharedLogFigures::pending);
        m.counter("memlife.sharedlog.appended", writes, "Writes appended", SharedLogFigures::appended);
        m.counter("memlife.sharedlog.committed", writes, "Writes committed (durable)", SharedLogFigures::committed);
        m.counter("memlife.sharedlog.commits", "commits", "Group commits: transactions that committed writes, "
                + "delivery marks or lease renewals", SharedLogFigures::groupCommits);
        m.counter("memlife.sharedlog.replayed", writes, "Writes replayed to a manager that claimed their agent",
                SharedLogFigures::replayed);
        String fenced = "Writes refused or dropped uncommitted, and leases found taken, because another replica "
                + "took the agent";
        m.counter("memlife.sharedlog.fenced.writes", writes, fenced, SharedLogFigures::fencedWrites);
        m.counter("memlife.sharedlog.fenced.leases", "leases", fenced, SharedLogFigures::fencedLeases);
        m.counter("memlife.sharedlog.takeovers", "leases", "Leases taken over from a replica that let them expire",
                SharedLogFigures::takeovers);
        m.counter("memlife.sharedlog.adoptions", "agents", "Agents found expired with writes undelivered and handed "
                + "to the adopter", SharedLogFigures::adoptions);
        m.counter("memlife.sharedlog.database.failures", "transactions", "Transactions that failed and were tried "
                + "again", SharedLogFigures::databaseFailures);
        m.timeGauge("memlife.sharedlog.takeover.lag", "For the last takeover, from the lease's expiry until the "
                + "writes it left were replayed", f -> f.lastTakeoverLag().toNanos());
    }
}
