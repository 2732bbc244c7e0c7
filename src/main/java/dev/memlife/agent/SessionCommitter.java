package dev.memlife.agent;

/**
 * Something that can commit a session's memory: run end-of-session extraction over the work done
 * so far, without tearing anything down. {@link AgentMemory} is one; the session layer's commit
 * tracker calls it at session boundaries and at shutdown, and compares committers by identity.
 */
@FunctionalInterface
public interface SessionCommitter {

    /**
     * Commits the session's memory. Blocks until the commit is done.
     *
     * @throws Exception if the commit failed; the work then stays uncommitted for a retry
     */
    void commitSession() throws Exception;
}
