package dev.memlife.session;

import static java.util.Objects.requireNonNull;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The registry of fire-and-forget commit workers of one tracker, so the shutdown drain can join
 * them. Bounded: it holds at most {@code capacity} workers, and a worker removes itself when it
 * finishes. Once draining has begun it refuses every registration for good, so no worker can slip
 * in after the drain took its snapshot. Thread-safe: one lock guards the set and the draining flag.
 */
final class BackgroundCommits {

    /** Why a registration was or was not accepted. */
    enum Registration {
        /** Registered: the caller must start the worker. */
        ACCEPTED,
        /** Refused because the drain has begun: the caller must not start the worker. */
        DRAINING,
        /** Refused because the registry is full: the caller must not start the worker. */
        FULL
    }

    private final int capacity;
    private final Object lock = new Object();
    /** Guarded by {@link #lock}. */
    private final Set<Thread> workers = new LinkedHashSet<>();
    /** Guarded by {@link #lock}; set once by {@link #startDraining()}, never cleared. */
    private boolean draining;

    BackgroundCommits(int capacity) {
        this.capacity = capacity;
    }

    Registration register(Thread worker) {
        requireNonNull(worker, "worker");
        synchronized (lock) {
            if (draining) {
                return Registration.DRAINING;
            }
            if (workers.size() >= capacity && !workers.contains(worker)) {
                return Registration.FULL;
            }
            workers.add(worker);
            return Registration.ACCEPTED;
        }
    }

    /** Idempotent: removing a worker that is not registered does nothing. */
    void unregister(Thread worker) {
        requireNonNull(worker, "worker");
        synchronized (lock) {
            workers.remove(worker);
        }
    }

    /** Refuses every later registration and returns the workers registered until now. */
    List<Thread> startDraining() {
        synchronized (lock) {
            draining = true;
            return List.copyOf(workers);
        }
    }

    boolean draining() {
        synchronized (lock) {
            return draining;
        }
    }

    List<Thread> snapshot() {
        synchronized (lock) {
            return List.copyOf(workers);
        }
    }
}
