/**
 * memlife's live figures as Micrometer meters: {@link dev.memlife.micrometer.MemlifeMetrics} is a
 * {@code MeterBinder} over one {@link dev.memlife.MemoryManager}, one {@link
 * dev.memlife.gateway.AgentGateway} (every agent it caches, has cached and is tearing down), or any
 * source of {@link dev.memlife.WriteFigures}. Micrometer ({@code io.micrometer:micrometer-core})
 * is an optional dependency of memlife: add it to use this package; nothing else in memlife loads
 * it. The package depends on the core, {@code dev.memlife.agent} and {@code dev.memlife.gateway};
 * nothing in memlife depends on it.
 */
package dev.memlife.micrometer;
