package dev.memlife.spool;

import dev.memlife.Turn;

/** What a spool stores for a turn, for the benchmarks outside this package: its record's payload. */
public final class SpoolRecords {

    private SpoolRecords() {}

    /**
     * The bytes {@code spool} would store for {@code turn}.
     *
     * @param spool an open spool
     * @param turn the turn
     * @return its encoded record
     */
    public static byte[] encoded(Spool spool, Turn turn) {
        return spool.log().encode(turn);
    }
}
