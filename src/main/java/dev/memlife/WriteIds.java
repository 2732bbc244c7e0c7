package dev.memlife;

import java.util.AbstractList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.RandomAccess;

/**
 * Write ids kept as sequence numbers and spelled out only when read. A drain may abandon a million
 * writes at its deadline; making a million id strings there cost hundreds of milliseconds past the
 * deadline (most of it in garbage collection), and keeping the turns would keep their payloads
 * alive as long as the report. A write replayed from a spool keeps the id it was first given,
 * which is kept whole, by its place in the queue. Immutable.
 */
final class WriteIds extends AbstractList<String> implements RandomAccess {

    private final String idPrefix;
    private final long[] seqs;
    /** The ids of replayed writes among {@link #seqs}, by queue place; empty for most. */
    private final Map<Long, String> given;
    /** {@link #seqs} sorted, made on the first look-up. */
    private volatile long[] sorted;

    private WriteIds(String idPrefix, long[] seqs, Map<Long, String> given) {
        this.idPrefix = idPrefix;
        this.seqs = seqs;
        this.given = given;
    }

    /** The prefix every id here starts with, before {@code ':'} and the sequence number. */
    String idPrefix() {
        return idPrefix;
    }

    @Override
    public String get(int index) {
        String id = given.isEmpty() ? null : given.get(seqs[index]);
        return id != null ? id : idPrefix + ':' + seqs[index];
    }

    /** Whether {@code writeId} is the given id of a replayed write here. */
    boolean containsGiven(String writeId) {
        return !given.isEmpty() && given.containsValue(writeId);
    }

    @Override
    public int size() {
        return seqs.length;
    }

    /** Whether {@code seq} is one of these writes; sorts a copy on the first call. */
    boolean containsSeq(long seq) {
        long[] sorted = this.sorted;
        if (sorted == null) {
            sorted = seqs.clone();
            Arrays.sort(sorted);
            this.sorted = sorted; // racy but idempotent: every thread computes the same array
        }
        return Arrays.binarySearch(sorted, seq) >= 0;
    }

    /** Collects sequence numbers; not thread-safe. */
    static final class Builder {
        private static final long[] NONE = new long[0];

        private final String idPrefix;
        /** Allocated at the first id: most managers never fail or abandon a write. */
        private long[] seqs = NONE;
        private int size;
        private Map<Long, String> given = Map.of();

        Builder(String idPrefix) {
            this.idPrefix = idPrefix;
        }

        void add(Turn turn) {
            if (size == seqs.length) {
                seqs = Arrays.copyOf(seqs, Math.max(16, size * 2));
            }
            seqs[size++] = turn.seq();
            if (turn.idGiven()) {
                if (given.isEmpty()) {
                    given = new HashMap<>();
                }
                given.put(turn.seq(), turn.writeId());
            }
        }

        int size() {
            return size;
        }

        /** The first {@code n} ids added. */
        WriteIds build(int n) {
            long[] first = Arrays.copyOf(seqs, n);
            if (given.isEmpty()) {
                return new WriteIds(idPrefix, first, Map.of());
            }
            long[] sorted = first.clone();
            Arrays.sort(sorted);
            Map<Long, String> ids = new HashMap<>();
            given.forEach((seq, id) -> {
                if (Arrays.binarySearch(sorted, seq) >= 0) {
                    ids.put(seq, id);
                }
            });
            return new WriteIds(idPrefix, first, Map.copyOf(ids));
        }

        WriteIds build() {
            return build(size);
        }
    }
}
