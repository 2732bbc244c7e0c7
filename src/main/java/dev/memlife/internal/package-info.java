/**
 * Shared machinery of memlife that is not part of its API: the module does not export this
 * package, so code outside memlife cannot use it on the module path, and on the class path it
 * carries no compatibility promise. It holds {@link dev.memlife.internal.Checks}, the argument
 * checks and saturating time arithmetic of the builders; {@link dev.memlife.internal.Deadline},
 * every bounded wait on a ticker; {@link dev.memlife.internal.Threads}, the thread policy; {@link
 * dev.memlife.internal.Failures}, what a caught throwable means; {@link
 * dev.memlife.internal.ThrottledLog}, warnings logged once per burst; and {@link
 * dev.memlife.internal.LeadingPadding}, the cache-line padding before fields written on every
 * operation. Every memlife package may use it. It depends on the JDK, SLF4J and one type of the
 * core, {@link dev.memlife.Ticker} (an interface that depends on nothing), so no dependency cycle
 * can run through it.
 */
package dev.memlife.internal;
