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
 * users' own tests.
 *
 * <p>The only module memlife needs at run time is {@code org.slf4j}. The JDBC drivers of the store
 * are found through {@link java.sql.DriverManager}, so they may sit on the class path or the module
 * path. The jar works on the class path as well.
 */
module dev.memlife {
    requires org.slf4j;
    // JdbcMemoryProvider.builder(DataSource) takes a javax.sql.DataSource, so readers of this
    // module need java.sql too.
    requires transitive java.sql;

    exports dev.memlife;
    exports dev.memlife.agent;
    exports dev.memlife.gateway;
    exports dev.memlife.session;
    exports dev.memlife.spool;
    exports dev.memlife.store;
    exports dev.memlife.testing;
}
