/**
 * memlife's command line, {@link dev.memlife.cli.Main}: {@code spool inspect} reads a spool
 * directory without opening it, {@code spool replay} delivers what a spool holds to a JDBC store,
 * {@code shared-log} lists a shared log's agents, leases and backlogs.
 * Not part of the library's API: the module does not export this package. The tool runs on the
 * class path ({@code java -cp memlife.jar:slf4j-api.jar:DRIVER.jar dev.memlife.cli.Main}) or on
 * the module path ({@code java -p ... -m dev.memlife/dev.memlife.cli.Main}, see {@link
 * dev.memlife.cli.Main}); it needs nothing the core does not: SLF4J's API, plus the JDBC driver
 * for {@code spool replay} and {@code shared-log}.
 */
package dev.memlife.cli;
