package dev.memlife.internal;

/**
 * Padding before the fields of a class that one thread writes on every operation while others
 * read the objects next to it: a class that extends this keeps its own fields off the cache line
 * of whatever precedes the object in the heap. It works because the JVM lays out a superclass's
 * fields before its subclass's, which is the only field order it promises; a class pads its end
 * with fields of its own.
 */
public abstract class LeadingPadding {

    /** Fills the gap after a compressed object header, where the JVM would otherwise put a later field. */
    int headerGap;
    long p00, p01, p02, p03, p04, p05, p06, p07;

    /** For subclasses. */
    protected LeadingPadding() {}
}
