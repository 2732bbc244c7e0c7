/**
 * The durable write-ahead spool: {@link dev.memlife.spool.Spool} stores every write a manager
 * accepts into a memory-mapped segment file, checksummed, before it is queued (so it survives a
 * crash of the process at once), group-commits the forces that make it survive power loss
 * (callers share one force of the disk), marks delivery crash-safely, deletes the segments whose writes were all
 * delivered, and on the next start replays what a crash left undelivered, in order and with the
 * original write ids. With the idempotent JDBC store this stores every write exactly once across
 * crashes. {@link dev.memlife.spool.SpoolInspection} reads a spool without opening it, for the
 * command line's {@code spool inspect}. It depends on the core and the JDK alone.
 */
package dev.memlife.spool;
