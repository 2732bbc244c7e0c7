/**
 * Shared machinery of memlife that is not part of its API: the module does not export this
 * package, so code outside memlife cannot use it on the module path, and on the class path it
 * carries no compatibility promise. It holds {@link dev.memlife.internal.Checks}, the argument
 * checks and saturating time arithmetic of the builders; {@link dev.memlife.internal.Deadline},
 * every bounded wait on a ticker; {@link dev.memlife.internal.Threads}, the thread policy; {@link
 * dev.memlife.internal.Failures}, what a caught throwable means; {@link
 * dev.memlife.internal.ThrottledLog}, warnings logged once per burst; {@link
 * dev.memlife.internal.LeadingPadding}, the cache-line padding before fields written on every
 * operation; {@link dev.memlife.internal.WriteBehindEngine}, the write-behind engine of the LangChain4j
 * and Spring AI chat memory decorators; and the spool's protocol ({@link
 * dev.memlife.internal.WriteAheadLog}). Every memlife package may use it. It depends on the JDK,
 * SLF4J and the core types it serves ({@link dev.memlife.Ticker}, {@link dev.memlife.Turn},
 * {@link dev.memlife.DurableLog}, {@link dev.memlife.SpoolFigures}, {@link
 * dev.memlife.StoppedException}, the write-behind's builder, report and figures), never on an
 * integration package.
 */
package dev.memlife.internal;
