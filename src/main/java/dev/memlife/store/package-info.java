/**
 * A durable memory store: {@link dev.memlife.store.JdbcMemoryProvider} is a {@link
 * dev.memlife.MemoryProvider} that keeps every turn and session end in SQLite or PostgreSQL over
 * plain JDBC, idempotently by write id, each batch in one transaction (shared by the batches of
 * several managers that wait together), with bounded retries; it reads them back as {@link
 * dev.memlife.store.StoredTurn}s and {@link dev.memlife.store.StoredSessionEnd}s and fails with
 * {@link dev.memlife.store.JdbcStoreException}. The JDBC driver is the user's
 * dependency ({@code org.xerial:sqlite-jdbc} or {@code org.postgresql:postgresql}), found through
 * {@link java.sql.DriverManager} or handed in as a {@link javax.sql.DataSource}; nothing here
 * refers to a driver's classes. The package depends on the core {@code dev.memlife} only (the
 * provider interface and the values it stores) and on {@code java.sql}; nothing in memlife
 * depends on it.
 */
package dev.memlife.store;
