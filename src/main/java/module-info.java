/**
 * memlife: makes an AI agent's memory writes survive every way a conversation ends.
 *
 * <p>The core ({@link dev.memlife}) queues every write off the request path and delivers it to the
 * registered {@link dev.memlife.MemoryProvider}s on one writer thread per manager; {@link
 * dev.memlife.agent} tears one agent down exactly once; {@link dev.memlife.gateway} caches agents
 * and routes every session ending through one cleanup; {@link dev.memlife.session} commits
 * sessions in the background and drains everything at JVM shutdown; {@link dev.memlife.store} is a
 * JDBC provider for SQLite and PostgreSQL; {@link dev.memlife.spool} is the durable write-ahead
 * spool that makes accepted writes survive a crash; {@link dev.memlife.langchain4j} plugs memlife
 * under and over LangChain4j's chat memory, {@link dev.memlife.springai} under Spring AI's; {@link
 * dev.memlife.spring} is the Spring Boot starter; {@link dev.memlife.micrometer} publishes the
 * live figures as Micrometer meters; {@link dev.memlife.testing} is the test kit for users' own
 * tests.
 *
 * <p>The only module memlife needs at run time besides the JDK's is {@code org.slf4j}. The JDBC
 * drivers of the store are found through {@link java.sql.DriverManager}, so they may sit on the
 * class path or the module path. Micrometer is optional: only {@code dev.memlife.micrometer} uses
 * it, and nothing else loads it. The jar works on the class path as well.
 *
 * <p>LangChain4j is optional: only {@link dev.memlife.langchain4j} uses it, and the module reads it
 * with {@code requires static transitive}, so the rest of memlife resolves and runs without it, and
 * where LangChain4j is present, readers of this module read it too. LangChain4j's jars (1.19.0)
 * declare no module name, so on the module path {@code langchain4j-core} is the automatic module
 * {@code langchain4j.core}, named after its file; that is the name required here.
 *
 * <p>Spring AI is optional the same way: only {@link dev.memlife.springai} uses it, read with
 * {@code requires static transitive}. Its {@code spring-ai-model} jar (1.1.2, and 2.0.1) declares no
 * module name either, so the name required is the file-based {@code spring.ai.model}. javac's
 * warnings about requiring an automatic module are suppressed on the declaration: these two, and
 * Micrometer's {@code micrometer.core} (named in its manifest), are the automatic modules required.
 *
 * <p>Spring Boot is optional too: only {@link dev.memlife.spring} uses it, read with {@code requires
 * static transitive}; its jars name their modules ({@code spring.boot} and the others).
 *
 * <p><b>Flight recorder.</b> memlife emits JDK Flight Recorder events (category {@code memlife}),
 * on by default above a 10 ms threshold, so a slow shutdown shows in JDK Mission Control with its
 * figures: {@code dev.memlife.Flush} (a flush that waited), {@code dev.memlife.Drain} (a manager's
 * shutdown drain), {@code dev.memlife.Batch} (a batch handed to the providers), {@code
 * dev.memlife.Teardown} (an agent's teardown), {@code dev.memlife.Reset} (a gateway reset) and
 * {@code dev.memlife.SpoolCommit} (a spool group commit). None is emitted per write.
 */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"})
module dev.memlife {
    requires org.slf4j;
    // dev.memlife.langchain4j only; absent at run time unless the application brings it.
    // Transitive: that package's API takes and returns LangChain4j types, so its readers read
    // LangChain4j too. A file-name based automatic module (see above): a later LangChain4j that
    // declares another name needs --add-reads dev.memlife=<that name> on the module path until
    // this line follows it.
    requires static transitive langchain4j.core;
    // dev.memlife.springai only, the same way (a file-name based automatic module, see above).
    requires static transitive spring.ai.model;
    // dev.memlife.springai.WriteBehindVectorStore uses Spring AI's VectorStore (spring-ai-vector-store)
    // and Document (spring-ai-commons). Those jars name no module, and spring-ai-commons splits the
    // package org.springframework.ai.embedding with spring-ai-model, so they cannot be modules beside
    // spring.ai.model: memlife is compiled with both patched into it (the pom's --patch-module and
    // --add-exports), and a modular application that uses them must do the same. On the class path,
    // where Spring applications run, none of this applies.
    // dev.memlife.spring only (the Spring Boot starter); absent at run time unless the application is
    // a Spring Boot one. Boot 3's health indicator is in its actuator, Boot 4's in spring-boot-health.
    // Transitive: the starter's public classes extend and are annotated with Spring types.
    requires static transitive spring.beans;
    requires static transitive spring.boot;
    requires static transitive spring.boot.actuator;
    requires static transitive spring.boot.autoconfigure;
    requires static transitive spring.boot.health;
    requires static transitive spring.context;
    requires static transitive spring.core;
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
    exports dev.memlife.langchain4j;
    exports dev.memlife.micrometer;
    exports dev.memlife.session;
    exports dev.memlife.springai;
    exports dev.memlife.spool;
    exports dev.memlife.spring;
    exports dev.memlife.store;
    exports dev.memlife.testing;
}
