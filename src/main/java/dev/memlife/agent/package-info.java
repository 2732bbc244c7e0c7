/**
 * One agent's memory and its end: {@link dev.memlife.agent.AgentMemory} owns an agent's {@link
 * dev.memlife.MemoryManager} and session transcript, and a once-only teardown claim, so that
 * exactly one of its three {@link dev.memlife.agent.TeardownMode teardown modes} (release, commit
 * then release, close) ever reaches the providers, whatever calls race; a {@link
 * dev.memlife.agent.TeardownReport} says what a call did, and a {@link
 * dev.memlife.agent.TeardownListener} observes the phases. {@link
 * dev.memlife.agent.SessionCommitter} is the "commit this session's memory" contract that the
 * session layer calls and {@code AgentMemory} fulfils. The package depends on the core ({@code
 * dev.memlife}) only (and the unexported {@code dev.memlife.internal}); the gateway and session
 * layers build on it.
 */
package dev.memlife.agent;
