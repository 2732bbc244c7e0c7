package dev.memlife.gateway;

import dev.memlife.StoppedException;
import dev.memlife.Ticker;
import dev.memlife.WriteFigures;
import dev.memlife.agent.AgentMemory;
import dev.memlife.internal.Deadline;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The gateway's map of session key to agent, in least-recently-used order, with the lease counts
 * that mark an agent busy. Pure bookkeeping under one lock: it decides which entries leave the map
 * and hands them back; it never tears an agent down itself and never calls out while locked.
 */
final class AgentCache {

    /** One cached agent. Mutable fields are guarded by the cache's lock. */
    static final class Entry {
        final String key;
        final AgentMemory agent;
        /** Leases held right now; an entry with leases is busy (mid-turn) and never evicted. */
        int leases;
        /** When the entry was last leased or released, by the cache's ticker. */
        long lastUsedNanos;

        Entry(String key, AgentMemory agent, long now) {
            this.key = key;
            this.agent = agent;
            this.lastUsedNanos = now;
        }
    }

    /** What {@link #removeIfIdle} found. */
    enum Removal { REMOVED, NOT_CACHED, BUSY }

    private final int capacity;
    private final long idleTtlNanos;
    /** The gateway, as refusals name it. */
    private final String owner;
    private final Ticker ticker;
    private final Object lock = new Object();
    /**
     * In least-recently-used order: iteration starts at the entry leased longest ago. Only a lease
     * (or caching the same agent again) moves an entry to the end ({@link #touch}); looking ({@link
     * #peek}, eviction checks) does not, so looking never changes which agent is evicted next.
     * Guarded by lock.
     */
    private final LinkedHashMap<String, Entry> entries = new LinkedHashMap<>();
    /** Set once by {@link #stop}; after it nothing enters the map. Guarded by lock. */
    private boolean stopped;
    /**
     * Entries that left the map and whose agent's teardown has not finished: their figures still
     * move. Guarded by lock; an entry leaves it by {@link #retire}.
     */
    private final Set<Entry> departing = Collections.newSetFromMap(new IdentityHashMap<>());
    /** The final write figures of every agent retired, added up. Guarded by lock. */
    private WriteFigures retired = WriteFigures.NONE;

    AgentCache(String owner, int capacity, long idleTtlNanos, Ticker ticker) {
        this.owner = owner;
        this.capacity = capacity;
        this.idleTtlNanos = idleTtlNanos;
        this.ticker = ticker;
    }

    /**
     * Leases the cached agent for {@code key} if it is still open; an entry whose agent has been
     * claimed by a teardown is dropped into {@code left} instead.
     *
     * @return the leased entry, or null if there is none (or it was dropped)
     * @throws StoppedException if the cache is stopped
     */
    Entry leaseExisting(String key, List<Entry> left) {
        synchronized (lock) {
            checkRunning(key);
            Entry e = entries.get(key);
            if (e != null && !e.agent.isOpen()) {
                entries.remove(key);
                left.add(leave(e));
                return null;
            }
            if (e != null) {
                e.leases++;
                touch(e);
            }
            return e;
        }
    }

    /**
     * Inserts {@code agent} leased once, unless an open agent got there first (that one is leased
     * and returned instead). Entries pushed out by the capacity, or a claimed one replaced, go to
     * {@code left}.
     *
     * @return the leased entry, or null if the cache is stopped
     */
    Entry insertLeased(String key, AgentMemory agent, List<Entry> left) {
        synchronized (lock) {
            if (stopped) {
                return null;
            }
            Entry existing = entries.get(key);
            if (existing != null && existing.agent.isOpen()) {
                existing.leases++;
                touch(existing);
                return existing;
            }
            Entry e = put(key, agent, left);
            e.leases++;
            return e;
        }
    }

    /**
     * Puts {@code agent} under {@code key}; a different agent it replaces, and entries pushed out
     * by the capacity, go to {@code left}.
     *
     * @return false if the cache is stopped
     */
    boolean putAgent(String key, AgentMemory agent, List<Entry> left) {
        synchronized (lock) {
            if (stopped) {
                return false;
            }
            put(key, agent, left);
            return true;
        }
    }

    private Entry put(String key, AgentMemory agent, List<Entry> left) {
        Entry previous = entries.get(key);
        if (previous != null && previous.agent == agent) {
            touch(previous);
            return previous;
        }
        Entry e = new Entry(key, agent, ticker.read());
        entries.remove(key);
        entries.put(key, e); // a new agent: the most recently used
        if (previous != null) {
            left.add(leave(previous));
        }
        Iterator<Entry> lru = entries.values().iterator();
        while (entries.size() > capacity && lru.hasNext()) {
            Entry candidate = lru.next();
            if (candidate != e && candidate.leases == 0) {
                lru.remove();
                left.add(leave(candidate));
            }
        }
        return e;
    }

    /** Under the lock: {@code e} was used now; it becomes the most recently used. */
    private void touch(Entry e) {
        e.lastUsedNanos = ticker.read();
        if (entries.remove(e.key, e)) {
            entries.put(e.key, e);
        }
    }

    /** {@return how many agents the cache holds beyond its capacity: those the leases keep in} */
    int overCapacity() {
        synchronized (lock) {
            return Math.max(0, entries.size() - capacity);
        }
    }

    /** Ends one lease of {@code e}; harmless if the entry has left the map meanwhile. */
    void unlease(Entry e) {
        synchronized (lock) {
            e.leases--;
            e.lastUsedNanos = ticker.read();
            if (e.leases == 0 && stopped) {
                lock.notifyAll(); // a stop may be waiting for the last lease
            }
        }
    }

    /**
     * For a stop: waits until none of {@code stopped} is leased, or the deadline passes. An
     * interrupt ends the wait, with the flag restored.
     *
     * @return the keys of the entries still leased when the wait ended; empty if none is
     */
    List<String> awaitUnleased(List<Entry> stopped, Deadline deadline) {
        synchronized (lock) {
            while (true) {
                List<String> leased = new ArrayList<>();
                for (Entry e : stopped) {
                    if (e.leases > 0) {
                        leased.add(e.key);
                    }
                }
                if (leased.isEmpty() || deadline.expired()) {
                    return leased;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(lock, deadline.sliceNanos());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return leased;
                }
            }
        }
    }

    /** Removes the entry for {@code key} whatever its leases; null if there is none. */
    Entry remove(String key) {
        synchronized (lock) {
            Entry e = entries.remove(key);
            return e == null ? null : leave(e);
        }
    }

    /** Removes the entry for {@code key} into {@code left} unless it is busy. */
    Removal removeIfIdle(String key, List<Entry> left) {
        synchronized (lock) {
            Entry e = entries.get(key);
            if (e == null) {
                return Removal.NOT_CACHED;
            }
            if (e.leases > 0) {
                return Removal.BUSY;
            }
            entries.remove(key);
            left.add(leave(e));
            return Removal.REMOVED;
        }
    }

    /**
     * Removes every entry that is not busy, was last used at least the idle TTL ago, and whose key
     * {@code exempt} does not claim. {@code exempt} is the application's: it is asked outside the
     * lock, and an entry leased again meanwhile stays.
     */
    List<Entry> removeIdle(Predicate<String> exempt) {
        List<String> candidates = new ArrayList<>();
        synchronized (lock) {
            long now = ticker.read();
            for (Entry e : entries.values()) {
                if (isIdle(e, now)) {
                    candidates.add(e.key);
                }
            }
        }
        List<Entry> idle = new ArrayList<>();
        for (String key : candidates) {
            if (exempt.test(key)) {
                continue;
            }
            synchronized (lock) {
                Entry e = entries.get(key);
                if (e != null && isIdle(e, ticker.read())) {
                    entries.remove(key);
                    idle.add(leave(e));
                }
            }
        }
        return idle;
    }

    private boolean isIdle(Entry e, long now) {
        return e.leases == 0 && now - e.lastUsedNanos >= idleTtlNanos;
    }

    /** Stops the cache for good and hands back every entry, busy or not. */
    List<Entry> stop() {
        synchronized (lock) {
            stopped = true;
            List<Entry> all = new ArrayList<>(entries.values());
            entries.clear();
            departing.addAll(all);
            return all;
        }
    }

    /** Under the lock: {@code e} left the map; its agent counts as departing until {@link #retire retired}. */
    private Entry leave(Entry e) {
        departing.add(e);
        return e;
    }

    /**
     * The teardown of {@code e}'s agent has finished: its final figures move to the retired
     * totals. Only the first call for an entry counts.
     */
    void retire(Entry e, WriteFigures last) {
        synchronized (lock) {
            if (departing.remove(e)) {
                retired = retired.plus(last);
            }
        }
    }

    /**
     * One consistent look: what is cached and leased, the agents whose figures still move
     * (cached, or departing), and the retired totals. Each agent is in exactly one of the last
     * two, so figures summed from it count every agent once.
     */
    Census census() {
        synchronized (lock) {
            List<AgentMemory> live = new ArrayList<>(entries.size() + departing.size());
            int leased = 0;
            for (Entry e : entries.values()) {
                live.add(e.agent);
                if (e.leases > 0) {
                    leased++;
                }
            }
            for (Entry e : departing) {
                live.add(e.agent);
            }
            return new Census(entries.size(), leased, departing.size(), live, retired);
        }
    }

    /** What {@link #census()} saw. */
    record Census(int cached, int leased, int departing, List<AgentMemory> live, WriteFigures retired) {}

    /** The agent cached for {@code key}, without leasing it; null if none. */
    AgentMemory peek(String key) {
        synchronized (lock) {
            Entry e = entries.get(key);
            return e == null ? null : e.agent;
        }
    }

    int size() {
        synchronized (lock) {
            return entries.size();
        }
    }

    private void checkRunning(String key) {
        if (stopped) {
            throw new StoppedException(owner, "lease of key " + key);
        }
    }
}
