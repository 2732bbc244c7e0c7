/**
 * memlife: makes an AI agent's memory writes survive every way a conversation ends.
 *
 * <p>The core ({@link dev.memlife}) queues every write off the request path and delivers it to the
 * registered {@link dev.memlife.MemoryProvider}s on one writer thread per manager; {@link
 * dev.memlife.agent} tears one agent down exactly once; {@link dev.memlife.gateway} caches agents
 * and routes every session ending through one cleanup; {@link dev.memlife.session} commits
 * sessions in the background and drains everything at JVM shutdown; {@link dev.memlife.store} is a
 * JDBC provider for SQLite and PostgreSQL; {@link dev.memlife.spool} is the durable write-ahead
 * spool that makes accepted writes survive a crash; {@link dev.memlife.testing} is the test kit for
 * users' own tests; {@link dev.memlife.micrometer} publishes the live figures as Micrometer meters.
 *
 * <p>The only module memlife needs at run time besides the JDK's is {@code org.slf4j}. The JDBC
 * drivers of the store are found through {@link java.sql.DriverManager}, so they may sit on the
 * class path or the module path. Micrometer is optional: only {@code dev.memlife.micrometer} uses
 * it, and nothing else loads it. The jar works on the class path as well.
 *
 * <p><b>Flight recorder.</b> memlife emits JDK Flight Recorder events (category {@code memlife}),
 * on by default above a 10 ms threshold, so a slow shutdown shows in JDK Mission Control with its
 * figures: {@code dev.memlife.Flush} (a flush that waited), {@code dev.memlife.Drain} (a manager's
 * shutdown drain), {@code dev.memlife.Batch} (a batch handed to the providers), {@code
 * dev.memlife.Teardown} (an agent's teardown), {@code dev.memlife.Reset} (a gateway reset) and
 * {@code dev.memlife.SpoolCommit} (a spool group commit). None is emitted per write.
 */
// Micrometer's jar is an automatic module (its manifest names it micrometer.core).
@SuppressWarnings("requires-automatic")
module dev.memlife {
    requires org.slf4j;
    // JdbcMemoryProvider.builder(DataSource) takes a javax.sql.DataSource, so readers of this
    // module need java.sql too.
    requires transitive java.sql;
    // The flight-recorder events (dev.memlife.internal.Events). Not static: the JDK ships the
    // module, jlink adds it to the image of an application that uses memlife. A static requirement
    // would need a guard around every event, and would leave the module out of a modular
    // application's graph unless it said --add-modules jdk.jfr: its recordings would silently hold
    // no memlife event.
    requires jdk.jfr;
    // Only dev.memlife.micrometer uses Micrometer, and nothing else loads it. Not transitive: an
    // application that uses the binder has a registry, so it reads micrometer.core itself.
    requires static micrometer.core;

    exports dev.memlife;
    exports dev.memlife.agent;
    exports dev.memlife.gateway;
    exports dev.memlife.micrometer;
    exports dev.memlife.session;
    exports dev.memlife.spool;
    exports dev.memlife.store;
    exports dev.memlife.testing;
}
