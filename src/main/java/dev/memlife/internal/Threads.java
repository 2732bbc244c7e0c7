package dev.memlife.internal;

import static java.util.Objects.requireNonNull;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * memlife's thread policy, in one place: what memlife's own threads are called, that they are
 * daemon threads, what a component does with a thread factory the user gave it, and what happens
 * when a factory refuses. Not part of the API: the package is not exported.
 *
 * <ul>
 *   <li><b>memlife's own threads</b> are daemon threads, so a forgotten manager, agent or gateway
 *       never keeps the JVM alive, named {@code memlife-<role>-<owner>} ({@link #named}), with
 *       {@code -1, -2, ...} after it where a component makes many ({@link #numbered}).
 *   <li><b>A user's factory</b> replaces them. Its threads are used as it makes them ({@link
 *       #orUser}: the builders ask for daemon threads), or switched to daemon before they start
 *       where the component promises that ({@link #orUserAsDaemon}: the session tracker, whose
 *       threads wait on owners that may hang).
 *   <li><b>A factory refuses</b> by throwing or by returning null; both are refusals. {@link
 *       #newThread} turns a null into an {@link IllegalStateException} naming the thread it was
 *       asked for, so callers handle one thing; {@link #start} hands either refusal, or a thread
 *       that cannot start, to the caller's fallback.
 * </ul>
 *
 * <p>Immutable and thread-safe.
 */
public final class Threads implements ThreadFactory {

    private final String name;
    /** Numbers memlife's threads after {@link #name}; null where each gets exactly {@link #name}. */
    private final AtomicInteger count;
    /** The user's factory, or null: memlife makes the threads. */
    private final ThreadFactory user;
    private final boolean forceDaemon;

    private Threads(String name, AtomicInteger count, ThreadFactory user, boolean forceDaemon) {
        this.name = name;
        this.count = count;
        this.user = user;
        this.forceDaemon = forceDaemon;
    }

    /** memlife's own daemon threads, each named exactly {@code name} (a component's one thread). */
    public static Threads named(String name) {
        return new Threads(requireNonNull(name, "name"), null, null, false);
    }

    /** memlife's own daemon threads, named {@code prefix-1}, {@code prefix-2}, ... */
    public static Threads numbered(String prefix) {
        return new Threads(requireNonNull(prefix, "prefix"), new AtomicInteger(), null, false);
    }

    /** The user's factory instead, if there is one; its threads are used as it makes them. */
    public Threads orUser(ThreadFactory user) {
        return user == null ? this : new Threads(name, count, user, false);
    }

    /** The user's factory instead, if there is one; a non-daemon thread it makes is switched to daemon. */
    public Threads orUserAsDaemon(ThreadFactory user) {
        return user == null ? this : new Threads(name, count, user, true);
    }

    /**
     * A new, unstarted thread that runs {@code body}.
     *
     * @throws IllegalStateException if the user's factory returned null; whatever it throws comes
     *     through as it is
     */
    @Override
    public Thread newThread(Runnable body) {
        if (user == null) {
            Thread t = new Thread(body, count == null ? name : name + "-" + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        }
        Thread t = user.newThread(body);
        if (t == null) {
            throw new IllegalStateException("thread factory returned null for " + (count == null ? name : name + "-<n>"));
        }
        if (forceDaemon && !t.isDaemon()) {
            t.setDaemon(true);
        }
        return t;
    }

    /**
     * Makes and starts a thread that runs {@code body}. If the factory refuses, or the thread
     * cannot start (an {@link OutOfMemoryError} "unable to create native thread" included), tells
     * {@code refused} why and returns null: the caller falls back (runs {@code body} itself, or
     * does without).
     *
     * @return the started thread, or null
     */
    public Thread start(Runnable body, Consumer<Throwable> refused) {
        try {
            Thread t = newThread(body);
            t.start();
            return t;
        } catch (Throwable t) { // a refusal, whatever it is: the caller has a way on without this thread
            refused.accept(t);
            return null;
        }
    }
}
