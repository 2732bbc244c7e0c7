/**
 * Shared machinery of memlife that is not part of its API: the module does not export this
 * package, so code outside memlife cannot use it on the module path, and on the class path it
 * carries no compatibility promise. Today it holds {@link dev.memlife.internal.Checks}, the
 * argument checks and saturating time arithmetic of the builders. Every memlife package may use
 * it; it depends on nothing of memlife's public API (only on the JDK), so no dependency cycle can
 * run through it.
 */
package dev.memlife.internal;
