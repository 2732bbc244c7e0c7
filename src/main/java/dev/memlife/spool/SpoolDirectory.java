package dev.memlife.spool;

import static java.util.Objects.requireNonNull;

import dev.memlife.DrainReport;
import dev.memlife.MemoryManager;
import dev.memlife.MemoryProvider;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One directory holding the spools of many managers: a gateway's agents, each with a spool of its
 * own in a subdirectory. An agent's spool gets a fresh subdirectory each time ({@link #newSpool}),
 * so an agent being torn down and a new agent of the same session never share one, and the
 * subdirectory is removed when the agent's manager shuts down with every write delivered. What a
 * crash leaves behind, {@link #recover} replays at start-up, before the service takes requests.
 *
 * <pre>{@code
 * SpoolDirectory spools = SpoolDirectory.open(Path.of("/var/lib/app/spool"));
 * spools.recover(Duration.ofMinutes(1), store);   // before the gateway takes requests
 * gateway.acquire(key, k -> {
 *     MemoryManager memory = MemoryManager.builder().name(k).spool(spools.newSpool(k)).build();
 *     memory.useProvider(store);
 *     return AgentMemory.create(memory);
 * });
 * }</pre>
 *
 * Thread-safe.
 */
public final class SpoolDirectory {

    /** The file that marks a write-behind chat memory's spool, which is not a manager's to replay. */
    private static final String WRITE_BEHIND_SPOOL_FILE = "states.log";

    private static final Logger LOG = LoggerFactory.getLogger(SpoolDirectory.class);

    private final Path root;
    private final Spool.Builder settings;

    private SpoolDirectory(Path root, long maxBytes, long segmentBytes) {
        this.root = root;
        this.settings = Spool.builder(root).maxBytes(maxBytes).segmentBytes(segmentBytes);
    }

    /**
     * The spool directory {@code root}, created if missing, whose spools have the default bounds.
     *
     * @param root the directory
     * @return it
     * @throws UncheckedIOException if it cannot be created
     */
    public static SpoolDirectory open(Path root) {
        return open(root, Spool.DEFAULT_MAX_BYTES, Spool.DEFAULT_SEGMENT_BYTES);
    }

    /**
     * The spool directory {@code root}, created if missing.
     *
     * @param root the directory
     * @param maxBytes each spool's size bound ({@link Spool.Builder#maxBytes})
     * @param segmentBytes each spool's segment size ({@link Spool.Builder#segmentBytes})
     * @return it
     * @throws UncheckedIOException if it cannot be created
     * @throws IllegalArgumentException if a bound is out of range
     */
    public static SpoolDirectory open(Path root, long maxBytes, long segmentBytes) {
        requireNonNull(root, "root");
        try {
            Files.createDirectories(root);
        } catch (IOException e) {
            throw new UncheckedIOException("could not create spool directory " + root, e);
        }
        return new SpoolDirectory(root, maxBytes, segmentBytes);
    }

    /**
     * A new spool in a fresh subdirectory, named after {@code name} (its characters other than
     * letters, digits, {@code '-'} and {@code '_'} replaced) and a random suffix; removed when its
     * manager shuts down with every write delivered.
     *
     * @param name what the spool is for, such as the agent's session key
     * @return the spool, for one manager's builder
     */
    public Spool newSpool(String name) {
        requireNonNull(name, "name");
        String safe = name.replaceAll("[^A-Za-z0-9_-]", "_");
        if (safe.length() > 64) {
            safe = safe.substring(0, 64);
        }
        Path dir = root.resolve(safe + "." + UUID.randomUUID());
        return Spool.builder(dir).maxBytes(settings.maxBytes()).segmentBytes(settings.segmentBytes())
                .removeWhenEmpty(true).open();
    }

    /**
     * Replays what a crash left in this directory's spools into {@code providers}: each spool no
     * running manager holds is opened under a manager of its own, replayed (in order, with the
     * original write ids, so the idempotent store keeps each write once), drained, and removed
     * once every write in it was delivered. Spools in use (a manager of this process, or another
     * process, holds them) are skipped. Call it at start-up, before new writes, so replayed writes
     * come before them.
     *
     * @param timeout how long each spool's drain may take
     * @param providers where the writes go; the managers use them without owning them (they are
     *     not shut down here)
     * @return what was replayed, by spool
     * @throws IllegalArgumentException if no provider is given
     */
    public Recovery recover(Duration timeout, MemoryProvider... providers) {
        requireNonNull(timeout, "timeout");
        requireNonNull(providers, "providers");
        if (providers.length == 0) {
            throw new IllegalArgumentException("recover needs at least one provider to replay the spools into");
        }
        List<Recovered> recovered = new ArrayList<>();
        for (Path dir : subdirectories()) {
            if (Files.exists(dir.resolve(WRITE_BEHIND_SPOOL_FILE))) {
                LOG.warn("spool directory {}: skipping {}, a write-behind chat memory's spool (give those a directory "
                        + "outside this one); its own store replays it", root, dir.getFileName());
                continue;
            }
            Spool spool;
            try {
                spool = Spool.builder(dir).maxBytes(settings.maxBytes()).segmentBytes(settings.segmentBytes())
                        .removeWhenEmpty(true).open();
            } catch (IllegalStateException e) {
                LOG.info("spool directory {}: skipping {} ({})", root, dir.getFileName(), e.getMessage());
                continue;
            }
            MemoryManager manager = MemoryManager.builder().name("recover-" + dir.getFileName()).spool(spool).build();
            for (MemoryProvider p : providers) {
                manager.useProvider(p);
            }
            long replayed = manager.replaySpool();
            DrainReport report = manager.stop(timeout);
            recovered.add(new Recovered(dir.getFileName().toString(), replayed, report));
        }
        return new Recovery(recovered);
    }

    private List<Path> subdirectories() {
        try (Stream<Path> entries = Files.list(root)) {
            return entries.filter(Files::isDirectory).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("could not list spool directory " + root, e);
        }
    }

    /** {@return the directory} */
    public Path root() {
        return root;
    }

    /**
     * What {@link #recover} did with one spool.
     *
     * @param spool the spool's subdirectory
     * @param replayed the writes replayed from it
     * @param report its manager's drain: delivered, failed and abandoned by id (abandoned writes
     *     stay in the spool for the next recovery)
     */
    public record Recovered(String spool, long replayed, DrainReport report) {}

    /**
     * What {@link #recover} did.
     *
     * @param spools each spool it replayed
     */
    public record Recovery(List<Recovered> spools) {

        /**
         * Copies the list.
         *
         * @param spools each spool it replayed
         */
        public Recovery {
            spools = List.copyOf(spools);
        }

        /** {@return writes replayed from every spool} */
        public long replayed() {
            return spools.stream().mapToLong(Recovered::replayed).sum();
        }

        /** {@return writes every provider took} */
        public long delivered() {
            return spools.stream().mapToLong(r -> r.report().delivered()).sum();
        }

        /** {@return writes not delivered: failed, abandoned or still running at the drain deadline} */
        public long notDelivered() {
            return spools.stream().mapToLong(r -> r.report().failed() + r.report().abandoned()
                    + r.report().stillRunning()).sum();
        }
    }
}
