/**
 * memlife's live figures as Micrometer meters: {@link dev.memlife.micrometer.MemlifeMetrics} is a
 * {@code MeterBinder} over one {@link dev.memlife.MemoryManager}, one {@link
 * dev.memlife.gateway.AgentGateway} (every agent it caches, has cached and is tearing down), or any
 * source of {@link dev.memlife.WriteFigures}; {@link dev.memlife.micrometer.SharedLogMetrics} binds
 * the meters of a replica's {@link dev.memlife.spool.SharedLog}, and {@link
 * dev.memlife.micrometer.WriteBehindMetrics} those of a write-behind decorator. Micrometer ({@code
 * io.micrometer:micrometer-core}) is an optional dependency of memlife: add it to use this package;
 * nothing else in memlife loads it. The package depends on the core, {@code dev.memlife.agent},
 * {@code dev.memlife.gateway} and {@code dev.memlife.spool}; nothing in memlife depends on it.
 */
package dev.memlife.micrometer;
