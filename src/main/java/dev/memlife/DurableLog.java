package dev.memlife;

/**
 * A durable log a {@link MemoryManager} writes every accepted write ahead to, before it queues it,
 * so the write survives a crash of the process: given to {@link MemoryManager.Builder#spool}. The
 * one implementation is {@code dev.memlife.spool.Spool} (open one with {@code Spool.open(dir)});
 * what passes between the manager and its log is memlife's own, and not part of this interface.
 * Applications do not implement it: a manager refuses a log memlife did not make.
 */
public interface DurableLog {

    /** {@return the log's figures now; the manager's {@link WriteFigures#spool()} are the same} */
    SpoolFigures figures();
}
