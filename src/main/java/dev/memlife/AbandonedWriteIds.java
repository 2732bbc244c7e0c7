package dev.memlife;

import java.util.AbstractList;
import java.util.Arrays;
import java.util.RandomAccess;

/**
 * The ids of the writes a drain abandoned, kept as sequence numbers and spelled out only when read.
 * A drain may abandon a million writes at its deadline; making a million id strings there cost
 * hundreds of milliseconds past the deadline (most of it in garbage collection), and keeping the
 * turns would keep their payloads alive as long as the report. Immutable.
 */
final class AbandonedWriteIds extends AbstractList<String> implements RandomAccess {

    private final String idPrefix;
    private final long[] seqs;

    private AbandonedWriteIds(String idPrefix, long[] seqs) {
        this.idPrefix = idPrefix;
        this.seqs = seqs;
    }

    @Override
    public String get(int index) {
        return idPrefix + ':' + seqs[index];
    }

    @Override
    public int size() {
        return seqs.length;
    }

    /** Collects the sequence numbers of abandoned writes; not thread-safe. */
    static final class Builder {
        private final String idPrefix;
        private long[] seqs = new long[16];
        private int size;

        Builder(String idPrefix) {
            this.idPrefix = idPrefix;
        }

        void add(Turn turn) {
            if (size == seqs.length) {
                seqs = Arrays.copyOf(seqs, size * 2);
            }
            seqs[size++] = turn.seq();
        }

        int size() {
            return size;
        }

        AbandonedWriteIds build() {
            return new AbandonedWriteIds(idPrefix, Arrays.copyOf(seqs, size));
        }
    }
}
