package dev.memlife.micrometer;

import static java.util.Objects.requireNonNull;

import dev.memlife.MemoryManager;
import dev.memlife.SpoolFigures;
import dev.memlife.WriteFigures;
import dev.memlife.agent.TeardownMode;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.gateway.GatewayFigures;
import dev.memlife.gateway.GatewayFigures.TeardownCounts;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.Locale;
import java.util.function.Supplier;

/**
 * A Micrometer {@link MeterBinder} over memlife's live figures: those of one {@link MemoryManager}
 * ({@link MemoryManager#figures()}), of one {@link AgentGateway} (every agent together, {@link
 * AgentGateway#figures()}), or of any source of {@link WriteFigures}.
 *
 * <pre>{@code
 * new MemlifeMetrics(gateway).bindTo(registry);                          // tag name=<gateway name>
 * // or, for one manager, with a tag of your own:
 * new MemlifeMetrics(memory, Tags.of("app", "chat")).bindTo(registry);   // name=<manager name>, app=chat
 * }</pre>
 *
 * <p>Every binder registers the write path's meters; a gateway's adds its agents and teardowns.
 * Counters are function counters over the figures' counts, which never go back; the two timers
 * are function timers over a count and a total time that the figures carry, so a timer costs the
 * write path nothing per write.
 *
 * <table>
 *   <caption>The meters</caption>
 *   <tr><th>name</th><th>tags</th><th>type</th><th>what</th></tr>
 *   <tr><td>{@code memlife.writes}</td><td>{@code outcome}: {@code delivered}, {@code failed},
 *       {@code abandoned}, {@code rejected}</td><td>function counter</td><td>writes that ended so
 *       (rejected: never accepted)</td></tr>
 *   <tr><td>{@code memlife.writes.accepted}</td><td></td><td>function counter</td><td>writes
 *       accepted</td></tr>
 *   <tr><td>{@code memlife.writes.pending}</td><td></td><td>gauge</td><td>the queue depth: writes
 *       queued or being written</td></tr>
 *   <tr><td>{@code memlife.writes.oldest.pending}</td><td></td><td>time gauge</td><td>how long the
 *       oldest pending write has waited</td></tr>
 *   <tr><td>{@code memlife.batches}</td><td></td><td>function counter</td><td>batches the writer
 *       took</td></tr>
 *   <tr><td>{@code memlife.batch.writes}</td><td></td><td>function counter</td><td>writes in those
 *       batches (their rate over the batches' is the mean batch size)</td></tr>
 *   <tr><td>{@code memlife.batch.size.max}</td><td></td><td>gauge</td><td>the most writes in one
 *       batch so far</td></tr>
 *   <tr><td>{@code memlife.flush}</td><td></td><td>function timer</td><td>flushes that had to wait,
 *       and how long they waited</td></tr>
 *   <tr><td>{@code memlife.flush.timeouts}</td><td></td><td>function counter</td><td>of those, the
 *       ones that returned false</td></tr>
 *   <tr><td>{@code memlife.drain}</td><td></td><td>function timer</td><td>shutdown drains and how
 *       long they took</td></tr>
 *   <tr><td>{@code memlife.spool.backlog}</td><td></td><td>gauge</td><td>writes in the spool not
 *       yet delivered</td></tr>
 *   <tr><td>{@code memlife.spool.oldest.undelivered}</td><td></td><td>time gauge</td><td>how long
 *       the oldest of them has waited</td></tr>
 *   <tr><td>{@code memlife.spool.bytes}</td><td></td><td>gauge</td><td>the spool's size</td></tr>
 *   <tr><td>{@code memlife.spool.segments}</td><td></td><td>gauge</td><td>segment files on
 *       disk</td></tr>
 *   <tr><td>{@code memlife.spool.commits}</td><td></td><td>function counter</td><td>group commits
 *       (forces of the disk)</td></tr>
 *   <tr><td>{@code memlife.spool.replayed}</td><td></td><td>function counter</td><td>writes
 *       replayed from earlier runs</td></tr>
 *   <tr><td>{@code memlife.spool.corrupt}</td><td></td><td>function counter</td><td>damaged records
 *       found and skipped</td></tr>
 *   <tr><td>{@code memlife.spool.failed.kept}</td><td></td><td>function counter</td><td>failed
 *       writes kept for the next start</td></tr>
 *   <tr><td>{@code memlife.agents}</td><td>{@code state}: {@code idle}, {@code leased}, {@code
 *       tearing_down}</td><td>gauge</td><td>a gateway's agents: cached and not leased, cached
 *       and leased (mid-turn), left the cache and being torn down</td></tr>
 *   <tr><td>{@code memlife.teardowns}</td><td>{@code mode}: {@code close}, {@code release},
 *       {@code commit_then_release}; {@code outcome}: {@code completed}, {@code incomplete},
 *       {@code failed}</td><td>function counter</td><td>a gateway's teardowns that ran</td></tr>
 * </table>
 *
 * <p>Each tag's values add up to something meaningful: {@code memlife.writes} over every outcome
 * is every write that ended, {@code memlife.agents} over every state is every agent the gateway
 * holds. So accepted writes have a counter of their own (accepted = delivered + failed + abandoned
 * + pending). The spool's meters read zero for a manager without a spool. Every meter carries the
 * binder's tags: {@code name} (the manager's or the gateway's name) and those passed in. Binders
 * sharing a registry should use the same tag keys: a Prometheus registry refuses a meter whose
 * tag keys differ from those of a meter of the same name.
 *
 * <p><b>One snapshot per scrape.</b> Reading the figures takes a short lock per manager, and a
 * gateway's reads every agent's, so the meters of one binder share a snapshot: a meter takes a new
 * one when it has already read the current one or the current one is over a second old, and
 * otherwise reads the current one. So a scrape that reads every meter takes one snapshot, and no
 * meter reports the same snapshot twice or one older than a second.
 *
 * <p>The meters hold the manager, gateway or source strongly as long as they are registered:
 * remove them from the registry when the manager is gone, if it is not the application's only
 * one. Thread-safe.
 */
// Micrometer's types in this API are not re-exported: a module that uses the binder reads micrometer.core itself.
@SuppressWarnings("exports")
public final class MemlifeMetrics implements MeterBinder {

    private static final TeardownCounts NO_TEARDOWNS = new TeardownCounts(0, 0, 0);

    private final Snapshots<Figures> shared;
    private final Tags tags;
    private final boolean gateway;

    /**
     * The meters of one manager, tagged {@code name} with its name.
     *
     * @param manager the manager
     * @throws NullPointerException if {@code manager} is null
     */
    public MemlifeMetrics(MemoryManager manager) {
        this(manager, Tags.empty());
    }

    /**
     * The meters of one manager, tagged {@code name} with its name and with {@code tags} (a tag
     * {@code name} among them wins).
     *
     * @param manager the manager
     * @param tags more tags for every meter
     * @throws NullPointerException if an argument is null
     */
    public MemlifeMetrics(MemoryManager manager, Iterable<Tag> tags) {
        this(new Snapshots<>(writesOf(requireNonNull(manager, "manager")::figures)),
                Tags.of("name", manager.name()).and(requireNonNull(tags, "tags")), false);
    }

    /**
     * The meters of a gateway (every agent's writes together, its agents and its teardowns),
     * tagged {@code name} with its name.
     *
     * @param gateway the gateway
     * @throws NullPointerException if {@code gateway} is null
     */
    public MemlifeMetrics(AgentGateway gateway) {
        this(gateway, Tags.empty());
    }

    /**
     * The meters of a gateway, tagged {@code name} with its name and with {@code tags} (a tag
     * {@code name} among them wins).
     *
     * @param gateway the gateway
     * @param tags more tags for every meter
     * @throws NullPointerException if an argument is null
     */
    public MemlifeMetrics(AgentGateway gateway, Iterable<Tag> tags) {
        this(new Snapshots<>(() -> {
            GatewayFigures g = gateway.figures();
            return new Figures(g.writes(), g);
        }), Tags.of("name", requireNonNull(gateway, "gateway").name()).and(requireNonNull(tags, "tags")), true);
    }

    /**
     * The write path's meters over any source of figures, for example several managers added up
     * with {@link WriteFigures#plus}; tagged with {@code tags} only.
     *
     * @param figures reads the figures now; called about once per scrape (see the class notes),
     *     from the scraping thread
     * @param tags the tags of every meter
     * @throws NullPointerException if an argument is null
     */
    public MemlifeMetrics(Supplier<WriteFigures> figures, Iterable<Tag> tags) {
        this(new Snapshots<>(writesOf(requireNonNull(figures, "figures"))), Tags.of(requireNonNull(tags, "tags")),
                false);
    }

    private MemlifeMetrics(Snapshots<Figures> shared, Tags tags, boolean gateway) {
        this.shared = shared;
        this.tags = tags;
        this.gateway = gateway;
    }

    private static Supplier<Figures> writesOf(Supplier<WriteFigures> figures) {
        return () -> new Figures(figures.get(), null);
    }

    /**
     * Registers the meters with {@code registry}.
     *
     * @param registry the registry
     */
    @Override
    public void bindTo(MeterRegistry registry) {
        Meters<Figures> meters = new Meters<>(requireNonNull(registry, "registry"), shared, tags);
        bindWrites(meters);
        bindSpool(meters);
        if (gateway) {
            bindGateway(meters);
        }
    }

    private static void bindWrites(Meters<Figures> m) {
        String writes = "writes";
        String ended = "Writes that ended so: delivered to every provider, failed by one, abandoned at a drain "
                + "deadline, or rejected (never accepted)";
        m.counter("memlife.writes", writes, ended, f -> f.writes.delivered(), Tag.of("outcome", "delivered"));
        m.counter("memlife.writes", writes, ended, f -> f.writes.failed(), Tag.of("outcome", "failed"));
        m.counter("memlife.writes", writes, ended, f -> f.writes.abandoned(), Tag.of("outcome", "abandoned"));
        m.counter("memlife.writes", writes, ended, f -> f.writes.rejected(), Tag.of("outcome", "rejected"));
        m.counter("memlife.writes.accepted", writes, "Writes accepted (syncAll returned true)",
                f -> f.writes.accepted());
        m.gauge("memlife.writes.pending", writes,
                "Writes accepted and neither finished nor abandoned: the queue depth", f -> f.writes.pending());
        m.timeGauge("memlife.writes.oldest.pending", "How long the oldest pending write has waited",
                f -> f.writes.oldestPendingAge().toNanos());
        m.counter("memlife.batches", "batches", "Batches the writer took off the queue", f -> f.writes.batches());
        m.counter("memlife.batch.writes", writes, "Writes in the batches the writer took",
                f -> f.writes.batchedWrites());
        m.gauge("memlife.batch.size.max", writes, "The most writes in one batch so far",
                f -> f.writes.largestBatch());
        m.timer("memlife.flush", "Flushes that had to wait for the writer, and how long they waited",
                f -> f.writes.flushWaits(), f -> f.writes.flushWaitTime().toNanos());
        m.counter("memlife.flush.timeouts", "flushes", "Flushes that had to wait and returned false: timeout, "
                + "interrupt or abandonment", f -> f.writes.flushTimeouts());
        m.timer("memlife.drain", "Shutdown drains of the write queue, and how long they took",
                f -> f.writes.drains(), f -> f.writes.drainTime().toNanos());
    }

    private static void bindSpool(Meters<Figures> m) {
        m.gauge("memlife.spool.backlog", "writes", "Writes in the durable spool not yet delivered to every provider",
                f -> spool(f).backlog());
        m.timeGauge("memlife.spool.oldest.undelivered", "How long the oldest write in the spool has waited",
                f -> spool(f).oldestUndeliveredAge().toNanos());
        m.gauge("memlife.spool.bytes", BaseUnits.BYTES, "The spool's size on disk and in its buffer",
                f -> spool(f).bytes());
        m.gauge("memlife.spool.segments", "segments", "Spool segment files on disk", f -> spool(f).segments());
        m.counter("memlife.spool.commits", "commits", "Spool group commits: forces of the disk",
                f -> spool(f).groupCommits());
        m.counter("memlife.spool.replayed", "writes", "Writes replayed from the spool of an earlier run",
                f -> spool(f).replayed());
        m.counter("memlife.spool.corrupt", "records", "Damaged spool records found and skipped",
                f -> spool(f).corruptRecords());
        m.counter("memlife.spool.failed.kept", "writes", "Writes a provider failed, kept in the spool for the "
                + "next start", f -> spool(f).failedKept());
    }

    private static SpoolFigures spool(Figures f) {
        return f.writes.spool();
    }

    private static void bindGateway(Meters<Figures> m) {
        String agents = "A gateway's agents: cached and idle, cached and leased (mid-turn), or left the cache and "
                + "being torn down";
        m.gauge("memlife.agents", "agents", agents, f -> f.gateway.agentsCached() - f.gateway.agentsLeased(),
                Tag.of("state", "idle"));
        m.gauge("memlife.agents", "agents", agents, f -> f.gateway.agentsLeased(), Tag.of("state", "leased"));
        m.gauge("memlife.agents", "agents", agents, f -> f.gateway.agentsTearingDown(),
                Tag.of("state", "tearing_down"));
        String teardowns = "A gateway's teardowns that ran, by mode and outcome";
        for (TeardownMode mode : TeardownMode.values()) {
            Tag modeTag = Tag.of("mode", mode.name().toLowerCase(Locale.ROOT));
            m.counter("memlife.teardowns", "teardowns", teardowns, f -> counts(f, mode).completed(), modeTag,
                    Tag.of("outcome", "completed"));
            m.counter("memlife.teardowns", "teardowns", teardowns, f -> counts(f, mode).incomplete(), modeTag,
                    Tag.of("outcome", "incomplete"));
            m.counter("memlife.teardowns", "teardowns", teardowns, f -> counts(f, mode).failed(), modeTag,
                    Tag.of("outcome", "failed"));
        }
    }

    private static TeardownCounts counts(Figures f, TeardownMode mode) {
        return f.gateway.teardowns().getOrDefault(mode, NO_TEARDOWNS);
    }

    /** One snapshot: a manager's or a source's write figures, and a gateway's figures (null otherwise). */
    private record Figures(WriteFigures writes, GatewayFigures gateway) {}
}
