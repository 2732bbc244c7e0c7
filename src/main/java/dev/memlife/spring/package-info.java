/**
 * The Spring Boot starter: add memlife to a Spring Boot 3.5 or 4.0 application and it creates the
 * shared store (on the application's {@code DataSource}), the {@link dev.memlife.gateway.AgentGateway},
 * the {@link dev.memlife.session.SessionCommitTracker} and a {@link
 * dev.memlife.spring.MemlifeLifecycle} that drains them when the context closes, after the web
 * server's graceful shutdown has let the requests in flight finish and before the {@code
 * DataSource} closes. Use it instead of {@link dev.memlife.session.ShutdownHooks} in a Spring
 * application: a second JVM hook runs at the same time as Spring's own and stops memlife while
 * requests are still in flight.
 *
 * <p>Spring Boot is optional: only this package uses it, and the module reads it with {@code
 * requires static}, so the rest of memlife runs without it.
 */
package dev.memlife.spring;
