package dev.memlife.spool;

import dev.memlife.store.JdbcBuilder;

/**
 * The two tables of a {@link SharedLog} and every statement on them. {@code <prefix>shared_log}
 * holds the writes: one row per agent per group commit, its records ({@link SpoolRecord}s, one
 * after another) numbered {@code first_seq..last_seq} in the agent's log. {@code
 * <prefix>shared_log_leases} holds one row per agent: who holds it (owner, epoch, expiry) and how
 * far its writes were delivered. Every append, mark and renewal names the epoch it holds, in a
 * transaction that locks the lease row: a claim that bumps the epoch waits for it, and nothing the
 * old epoch sends afterwards matches.
 */
final class SharedLogSql {

    final String log;
    final String leases;

    SharedLogSql(String tablePrefix) {
        JdbcBuilder.checkTablePrefix(tablePrefix);
        this.log = tablePrefix + "shared_log";
        this.leases = tablePrefix + "shared_log_leases";
    }

    /** Serializes the replicas' first start: concurrent {@code CREATE TABLE IF NOT EXISTS} can collide. */
    String createLock() {
        return on("SELECT pg_advisory_xact_lock(hashtext('{log}'))");
    }

    String[] create() {
        return new String[] {
            on("""
                CREATE TABLE IF NOT EXISTS {leases} (agent TEXT PRIMARY KEY, owner TEXT NOT NULL,
                  epoch BIGINT NOT NULL, expires_at TIMESTAMPTZ NOT NULL, released BOOLEAN NOT NULL,
                  delivered_seq BIGINT NOT NULL, claimed_at TIMESTAMPTZ NOT NULL)"""),
            on("""
                CREATE TABLE IF NOT EXISTS {log} (agent TEXT NOT NULL, first_seq BIGINT NOT NULL,
                  last_seq BIGINT NOT NULL, epoch BIGINT NOT NULL, kept BOOLEAN NOT NULL, id_prefix TEXT NOT NULL,
                  accepted_at TIMESTAMPTZ NOT NULL DEFAULT now(), records BYTEA NOT NULL,
                  PRIMARY KEY (agent, first_seq))""")
        };
    }

    /**
     * Compresses the records with lz4 where the server has it (PostgreSQL 14 and later, built with
     * lz4): a group commit's row is tens of kilobytes, TOASTed, and pglz's compression of it was the
     * largest part of the commit's insert.
     */
    String recordsLz4() {
        return on("""
                DO $$ BEGIN
                  IF EXISTS (SELECT 1 FROM pg_settings
                             WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals))
                     AND (SELECT attcompression FROM pg_attribute WHERE attrelid = '{log}'::regclass
                          AND attname = 'records') IS DISTINCT FROM 'l'
                  THEN EXECUTE 'ALTER TABLE {log} ALTER COLUMN records SET COMPRESSION lz4';
                  END IF;
                END $$""");
    }

    // ---- claiming an agent (SharedLog.agent) ----

    String lockLease() {
        return on("""
                SELECT owner, epoch, expires_at <= now(), released, delivered_seq,
                       EXTRACT(EPOCH FROM (now() - expires_at)) * 1000
                FROM {leases} WHERE agent = ? FOR UPDATE""");
    }

    String insertLease() {
        return on("""
                INSERT INTO {leases} (agent, owner, epoch, expires_at, released, delivered_seq, claimed_at)
                VALUES (?, ?, 1, now() + ? * interval '1 millisecond', false, 0, now())
                ON CONFLICT (agent) DO NOTHING""");
    }

    /** Raises the epoch: every append, mark and renewal the old holder sends afterwards misses. */
    String takeLease() {
        return on("""
                UPDATE {leases} SET owner = ?, epoch = epoch + 1, expires_at = now() + ? * interval '1 millisecond',
                       released = false, claimed_at = now()
                WHERE agent = ? RETURNING epoch""");
    }

    String lastSeq() {
        return on("SELECT max(last_seq) FROM {log} WHERE agent = ?");
    }

    /** Writes a provider failed: kept for the next holder, who moves them to the tail of the log. */
    String keptRows() {
        return on("SELECT first_seq, id_prefix, records FROM {log} WHERE agent = ? AND kept ORDER BY first_seq");
    }

    String deleteKept() {
        return on("DELETE FROM {log} WHERE agent = ? AND kept");
    }

    String replay() {
        return on("""
                SELECT first_seq, id_prefix, records FROM {log}
                WHERE agent = ? AND NOT kept AND last_seq > ? ORDER BY first_seq""");
    }

    // ---- a group commit (SharedLogWorker) ----

    /**
     * Renews and marks the leases this replica holds, with the epochs it holds them at, and locks
     * their rows until the commit; returns the ones still held. A lease being released ends now.
     */
    String renew() {
        return on("""
                UPDATE {leases} l
                SET expires_at = CASE WHEN h.release THEN now() ELSE now() + ? * interval '1 millisecond' END,
                    released = h.release, delivered_seq = GREATEST(l.delivered_seq, h.mark)
                FROM unnest(?::text[], ?::bigint[], ?::bigint[], ?::boolean[]) AS h(agent, epoch, mark, release)
                WHERE l.agent = h.agent AND l.epoch = h.epoch AND l.owner = ? RETURNING l.agent""");
    }

    String insertRows() {
        return on("""
                INSERT INTO {log} (agent, first_seq, last_seq, epoch, kept, id_prefix, records)
                VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (agent, first_seq) DO NOTHING""");
    }

    /**
     * After a failed commit: how far each agent's log really reached at the epoch this replica
     * holds, so a retry adds only what is missing. Only its own epoch's rows count: rows a newer
     * holder appended are not this replica's writes.
     */
    String committedSeqs() {
        return on("""
                SELECT e.agent, max(e.last_seq) FROM {log} e
                JOIN unnest(?::text[], ?::bigint[]) AS h(agent, epoch) ON e.agent = h.agent AND e.epoch = h.epoch
                GROUP BY e.agent""");
    }

    String deleteDelivered() {
        return on("DELETE FROM {log} WHERE agent = ? AND last_seq <= ? AND NOT kept");
    }

    /** Expired leases that still have writes to deliver: what the sweeper hands to the adopter. */
    String orphans() {
        return on("""
                SELECT l.agent FROM {leases} l
                WHERE l.expires_at <= now()
                  AND EXISTS (SELECT 1 FROM {log} e
                              WHERE e.agent = l.agent AND (e.kept OR e.last_seq > l.delivered_seq))
                ORDER BY l.expires_at LIMIT 64""");
    }

    /** Every agent's lease and backlog, for {@link SharedLog#inspect}. */
    String inspect() {
        return on("""
                SELECT l.agent, l.owner, l.epoch, l.expires_at, l.expires_at > now(), l.released, l.delivered_seq,
                       GREATEST(l.delivered_seq,
                                coalesce((SELECT max(e.last_seq) FROM {log} e
                                          WHERE e.agent = l.agent AND NOT e.kept), 0)),
                       (SELECT count(*) FROM {log} e WHERE e.agent = l.agent AND e.kept)
                FROM {leases} l ORDER BY l.agent""");
    }

    /** {@code statement} with this log's two table names in place of {@code {log}} and {@code {leases}}. */
    private String on(String statement) {
        return statement.replace("{leases}", leases).replace("{log}", log);
    }
}
