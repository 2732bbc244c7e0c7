/**
 * The host side of agent memory: {@link dev.memlife.gateway.AgentGateway} caches agents by session
 * key (LRU cap, idle TTL, {@link dev.memlife.gateway.AgentLease leases} that keep a mid-turn agent
 * from eviction), evicts softly off the caller's thread, and sends every path that ends a session
 * ({@code /reset}, {@code /new}, expiry, gateway stop) through one cleanup that hard-closes the
 * agent. {@link dev.memlife.gateway.EvictionResult}, {@link dev.memlife.gateway.ResetResult} and
 * {@link dev.memlife.gateway.GatewayStopReport} say what each of those did. The package depends on
 * {@code dev.memlife.agent} and the core {@code dev.memlife} (and the unexported {@code
 * dev.memlife.internal}); nothing in memlife depends on it: the shutdown hook of {@code
 * dev.memlife.session} drains a gateway through its {@code stop} method as a plain {@code
 * Stoppable}.
 */
package dev.memlife.gateway;
