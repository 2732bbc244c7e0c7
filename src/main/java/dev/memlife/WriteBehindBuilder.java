package dev.memlife;

import dev.memlife.internal.Checks;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The settings every builder of a write-behind decorator shares, written and checked once: its
 * name, the budget of its {@code close()}, how long its idle writer thread lives and its spool, on
 * top of {@link OwnerBuilder}'s thread factory and ticker. The builders of {@code
 * dev.memlife.langchain4j.WriteBehindChatMemoryStore} and {@code
 * dev.memlife.springai.WriteBehindChatMemoryRepository} extend it; those of the vector store and
 * the embedding ingestor through {@link BatchingWriteBehindBuilder}. Every setter checks its
 * argument and names it when it refuses one. Not thread-safe: a builder is used by one thread.
 *
 * @param <B> the builder, returned by each setter
 */
public abstract class WriteBehindBuilder<B extends WriteBehindBuilder<B>> extends OwnerBuilder<B> {

    /** Default name: {@value}. */
    public static final String DEFAULT_NAME = "chat-memory";
    /** Default budget of {@code close()}: 5 s. */
    public static final Duration DEFAULT_CLOSE_TIMEOUT = Duration.ofSeconds(5);
    /** Default time an idle writer thread waits for work before it exits: 1 s. */
    public static final Duration DEFAULT_WRITER_KEEP_ALIVE = Duration.ofSeconds(1);

    private String name = DEFAULT_NAME;
    private Duration closeTimeout = DEFAULT_CLOSE_TIMEOUT;
    private Duration writerKeepAlive = DEFAULT_WRITER_KEEP_ALIVE;
    private Path spool;
    private boolean durable;

    /** For memlife's write-behind builders; the name defaults to {@value #DEFAULT_NAME}. */
    protected WriteBehindBuilder() {
        this(DEFAULT_NAME);
    }

    /**
     * For memlife's write-behind builders whose decorators have another default name.
     *
     * @param defaultName the name until {@link #name(String)} sets one
     */
    protected WriteBehindBuilder(String defaultName) {
        this.name = Checks.notBlank(defaultName, "defaultName");
    }

    /**
     * The name in the writer thread's name ({@code memlife-chat-writer-<name>}), logs and errors;
     * default {@value #DEFAULT_NAME}.
     *
     * @param name the name; not blank
     * @return this builder
     */
    public final B name(String name) {
        this.name = Checks.notBlank(name, "name");
        return self();
    }

    /**
     * The budget of {@code close()}; default 5 s.
     *
     * @param closeTimeout the longest {@code close()} takes; zero or more
     * @return this builder
     */
    public final B closeTimeout(Duration closeTimeout) {
        this.closeTimeout = Checks.nonNegative(closeTimeout, "closeTimeout");
        return self();
    }

    /**
     * How long the writer thread waits for work, idle, before it exits; default 1 s. The next save
     * starts a new one. Measured on the real clock, whatever the {@link #ticker}.
     *
     * @param writerKeepAlive the idle time before the writer exits; zero or more
     * @return this builder
     */
    public final B writerKeepAlive(Duration writerKeepAlive) {
        this.writerKeepAlive = Checks.nonNegative(writerKeepAlive, "writerKeepAlive");
        return self();
    }

    /**
     * Keeps every state handed over in a spool in {@code dir} before the call that handed it over
     * returns, so a crash (kill -9, an OOM kill) loses none of them: the next decorator built on the
     * same directory replays each conversation's last state before anything reads it, and writes it
     * to the backend. Off by default: without a spool a crash loses the states not yet written.
     * Coalescing bounds the spool to about one state per conversation waiting. One decorator per
     * directory (it is locked while in use), outside a memory manager's spool directory. Ids are
     * kept as the framework's ids: a LangChain4j memory id must be a {@code String}, {@code
     * Integer}, {@code Long} or {@code UUID}. A save or delete the spool cannot keep (an id of
     * another type, a disk that fails) is refused with an {@code IllegalArgumentException} or an
     * {@code UncheckedIOException}, and nothing is taken.
     *
     * @param dir the spool's directory, created if missing
     * @return this builder
     */
    public final B spool(Path dir) {
        this.spool = Objects.requireNonNull(dir, "dir");
        return self();
    }

    /**
     * With a {@linkplain #spool spool}, whether each save and delete is also forced to disk before
     * its call returns, so power loss loses none either; default false (a crash of the process
     * loses nothing, power loss may lose the last states). Each call then waits for the disk.
     *
     * @param durable true to force every state to disk before its call returns
     * @return this builder
     */
    public final B durable(boolean durable) {
        this.durable = durable;
        return self();
    }

    /** {@return the spool's directory set, if any} */
    public final Optional<Path> spool() {
        return Optional.ofNullable(spool);
    }

    /** {@return whether every state is forced to disk before its call returns} */
    public final boolean durable() {
        return durable;
    }

    /** {@return the name set, or {@value #DEFAULT_NAME}} */
    public final String name() {
        return name;
    }

    /** {@return the budget of {@code close()} set, or 5 s} */
    public final Duration closeTimeout() {
        return closeTimeout;
    }

    /** {@return the writer thread's keep-alive set, or 1 s} */
    public final Duration writerKeepAlive() {
        return writerKeepAlive;
    }

    @SuppressWarnings("unchecked")
    private B self() {
        return (B) this;
    }
}
