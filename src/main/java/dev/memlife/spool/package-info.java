/**
 * The durable spool, being built (issue 14): an accepted write appended to disk, checksummed,
 * before it enters the writer's queue, and replayed after a crash. So far this package holds only
 * the segment format ({@code SegmentFormat}: length-prefixed, CRC32C-checked records, a torn tail
 * detected and cut, a corrupt record in the middle skipped); nothing in memlife uses it yet, and
 * the module does not export it. It depends on the JDK alone.
 */
package dev.memlife.spool;
