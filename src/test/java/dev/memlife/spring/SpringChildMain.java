package dev.memlife.spring;

import dev.memlife.MemoryManager;
import dev.memlife.agent.AgentMemory;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.gateway.AgentLease;
import dev.memlife.langchain4j.SqliteChatMemoryStore;
import dev.memlife.langchain4j.WriteBehindChatMemoryStore;
import dev.memlife.springai.SqliteChatMemoryRepository;
import dev.memlife.springai.WriteBehindChatMemoryRepository;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.sqlite.SQLiteDataSource;

/**
 * The child JVM of {@link SpringSigtermProcessTest}: a Spring Boot application on its real embedded
 * Tomcat (port 0, graceful shutdown, Boot's default), wired only by the starter: the application
 * defines a {@code DataSource} (a SQLite file) and a controller, and gets the store, the gateway
 * and the lifecycle from {@link MemlifeAutoConfiguration}. No {@code ShutdownHooks}: Spring's own
 * shutdown hook closes the context on SIGTERM.
 *
 * <p>{@code GET /turn?sid=S&n=N} answers like a chat service: first the model (with {@code
 * &hold=1} a slow one: the handler prints {@code IN_FLIGHT S N} and waits until the parent writes
 * {@code RELEASE} on stdin), then the turn under a lease: {@code syncAll("turn-S-N", "reply-S-N")}
 * and 200. The lease is taken after the model, as a real service does, so the turn is only safe
 * if the gateway still leases when the model answers. A refused lease is a 503. {@code GET
 * /durable?sid=S&n=N} records the turn through the starter's agent factory (which gives each agent
 * a spool when {@code --memlife.spool.dir} is passed) and answers 200 once it is on disk.
 *
 * <p>On stdout: {@code PORT p} once it serves, {@code CLOSING} when the context starts closing,
 * {@code DRAINED ...} with the lifecycle's report once the store is about to close.
 *
 * <p>Usage: {@code SpringChildMain <sqlite file> [Spring arguments]}. Runs under Boot 3.5 and 4.0.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({SpringChildMain.Chat.class, SpringChildMain.LangChain4jChat.class, SpringChildMain.SpringAiChat.class})
public class SpringChildMain {

    static final CountDownLatch RELEASE = new CountDownLatch(1);

    public static void main(String[] args) {
        System.setProperty("memlife.child.db", args[0]);
        Thread stdin = new Thread(SpringChildMain::readCommands, "stdin-commands");
        stdin.setDaemon(true);
        stdin.start();
        String[] rest = java.util.Arrays.copyOfRange(args, 1, args.length);
        // local.server.port: set by Boot 3 and 4 alike (their WebServerInitializedEvent differ by package).
        out("BOOT " + org.springframework.boot.SpringBootVersion.getVersion());
        out("PORT " + SpringApplication.run(SpringChildMain.class, rest).getEnvironment()
                .getProperty("local.server.port"));
    }

    @Bean
    DataSource dataSource() {
        SQLiteDataSource sqlite = new SQLiteDataSource();
        sqlite.setUrl("jdbc:sqlite:" + System.getProperty("memlife.child.db"));
        return sqlite;
    }

    @Bean
    ApplicationListener<ContextClosedEvent> closing() {
        return e -> out("CLOSING");
    }

    /**
     * With {@code --child.hold-store=true}: the application's one memory provider, a store that
     * takes no write (it parks every batch until the process dies), so the starter creates no
     * store of its own, and every accepted write stays in the agents' spools.
     */
    @Bean
    @org.springframework.boot.autoconfigure.condition.ConditionalOnProperty(name = "child.hold-store", havingValue = "true")
    dev.memlife.MemoryProvider heldStore() {
        return new dev.memlife.MemoryProvider() {
            @Override
            public String name() {
                return "held-store";
            }

            @Override
            public void syncTurn(dev.memlife.Turn turn) {
                holdUntilKilled();
            }
        };
    }

    /** Prints the drain's report when the context closes its beans, after every lifecycle stopped. */
    @Bean
    Object drainReporter(org.springframework.beans.factory.ObjectProvider<MemlifeLifecycle> lifecycle) {
        return new AutoCloseable() {
            @Override
            public void close() {
                MemlifeLifecycle l = lifecycle.getIfAvailable();
                out("DRAINED " + (l == null ? "none" : l.report().map(Object::toString).orElse("none")));
            }
        };
    }

    /**
     * With {@code --child.l4j-file=F}: LangChain4j's door, a {@link WriteBehindChatMemoryStore} bean
     * over a plain JDBC store on the SQLite file {@code F}; the context's close drains it.
     */
    @Bean
    @org.springframework.boot.autoconfigure.condition.ConditionalOnProperty(name = "child.l4j-file")
    WriteBehindChatMemoryStore chatStore(org.springframework.core.env.Environment environment) throws Exception {
        dev.langchain4j.store.memory.chat.ChatMemoryStore behind = new SqliteChatMemoryStore(
                java.nio.file.Path.of(environment.getRequiredProperty("child.l4j-file")));
        if (environment.getProperty("child.l4j-held", Boolean.class, false)) {
            behind = new HeldChatMemoryStore(behind);
        }
        WriteBehindChatMemoryStore.Builder builder = WriteBehindChatMemoryStore.builder(behind);
        String spool = environment.getProperty("child.l4j-spool");
        if (spool != null) {
            builder.spool(java.nio.file.Path.of(spool)).durable(true);
        }
        return builder.build();
    }

    /**
     * With {@code --child.sai-file=F}: Spring AI's door, a {@link WriteBehindChatMemoryRepository}
     * bean over a plain JDBC repository on the SQLite file {@code F}; with {@code
     * --child.sai-spool=D}, a durable spool in {@code D}; with {@code --child.sai-held=true}, the
     * repository behind takes no save.
     */
    @Bean
    @org.springframework.boot.autoconfigure.condition.ConditionalOnProperty(name = "child.sai-file")
    WriteBehindChatMemoryRepository chatRepository(org.springframework.core.env.Environment environment) throws Exception {
        SqliteChatMemoryRepository sqlite = new SqliteChatMemoryRepository(
                java.nio.file.Path.of(environment.getRequiredProperty("child.sai-file")));
        org.springframework.ai.chat.memory.ChatMemoryRepository behind = sqlite;
        if (environment.getProperty("child.sai-held", Boolean.class, false)) {
            behind = new org.springframework.ai.chat.memory.ChatMemoryRepository() {
                @Override
                public java.util.List<String> findConversationIds() {
                    return sqlite.findConversationIds();
                }

                @Override
                public java.util.List<org.springframework.ai.chat.messages.Message> findByConversationId(String id) {
                    return sqlite.findByConversationId(id);
                }

                @Override
                public void saveAll(String id, java.util.List<org.springframework.ai.chat.messages.Message> messages) {
                    holdUntilKilled();
                }

                @Override
                public void deleteByConversationId(String id) {
                    saveAll(id, java.util.List.of());
                }
            };
        }
        WriteBehindChatMemoryRepository.Builder builder = WriteBehindChatMemoryRepository.builder(behind);
        String spool = environment.getProperty("child.sai-spool");
        if (spool != null) {
            builder.spool(java.nio.file.Path.of(spool)).durable(true);
        }
        return builder.build();
    }

    /** {@code GET /sai?cid=C&n=N}: appends message {@code turn-C-N} to conversation C, behind. */
    @RestController
    @org.springframework.boot.autoconfigure.condition.ConditionalOnProperty(name = "child.sai-file")
    static class SpringAiChat {
        private final WriteBehindChatMemoryRepository repository;

        SpringAiChat(WriteBehindChatMemoryRepository repository) {
            this.repository = repository;
        }

        @GetMapping("/sai")
        ResponseEntity<String> add(@RequestParam("cid") String cid, @RequestParam("n") int n) {
            java.util.List<org.springframework.ai.chat.messages.Message> state =
                    new java.util.ArrayList<>(repository.findByConversationId(cid));
            state.add(new org.springframework.ai.chat.messages.UserMessage("turn-" + cid + "-" + n));
            repository.saveAll(cid, state);
            return ResponseEntity.ok("saved behind " + n);
        }
    }

    /** A LangChain4j store that takes no update: it parks every one until the process dies. */
    static final class HeldChatMemoryStore implements dev.langchain4j.store.memory.chat.ChatMemoryStore {
        private final dev.langchain4j.store.memory.chat.ChatMemoryStore delegate;

        HeldChatMemoryStore(dev.langchain4j.store.memory.chat.ChatMemoryStore delegate) {
            this.delegate = delegate;
        }

        @Override
        public java.util.List<dev.langchain4j.data.message.ChatMessage> getMessages(Object memoryId) {
            return delegate.getMessages(memoryId);
        }

        @Override
        public void updateMessages(Object memoryId, java.util.List<dev.langchain4j.data.message.ChatMessage> messages) {
            holdUntilKilled();
        }

        @Override
        public void deleteMessages(Object memoryId) {
            updateMessages(memoryId, java.util.List.of());
        }
    }

    /** {@code GET /l4j?cid=C&n=N}: appends message {@code turn-C-N} to conversation C's chat memory, behind. */
    @RestController
    @org.springframework.boot.autoconfigure.condition.ConditionalOnProperty(name = "child.l4j-file")
    static class LangChain4jChat {
        private final WriteBehindChatMemoryStore store;

        LangChain4jChat(WriteBehindChatMemoryStore store) {
            this.store = store;
        }

        @GetMapping("/l4j")
        ResponseEntity<String> add(@RequestParam("cid") String cid, @RequestParam("n") int n) {
            java.util.List<dev.langchain4j.data.message.ChatMessage> state = new java.util.ArrayList<>(store.getMessages(cid));
            state.add(dev.langchain4j.data.message.UserMessage.from("turn-" + cid + "-" + n));
            store.updateMessages(cid, state);
            return ResponseEntity.ok("saved behind " + n);
        }
    }

    @RestController
    static class Chat {
        private final AgentGateway gateway;
        private final dev.memlife.MemoryProvider store;

        Chat(AgentGateway gateway, dev.memlife.MemoryProvider store) {
            this.gateway = gateway;
            this.store = store;
        }

        @GetMapping("/turn")
        ResponseEntity<String> turn(@RequestParam("sid") String sid, @RequestParam("n") int n,
                @RequestParam(name = "hold", defaultValue = "0") int hold) throws InterruptedException {
            String user = "turn-" + sid + "-" + n;
            String reply = "reply-" + sid + "-" + n;
            if (hold == 1) { // the slow model, before the turn is recorded
                out("IN_FLIGHT " + sid + " " + n);
                if (!RELEASE.await(30, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("never released: " + user);
                }
            }
            try (AgentLease lease = gateway.acquire(sid, this::newAgent)) {
                boolean accepted = lease.agent().memory().syncAll(user, reply, sid);
                return accepted ? ResponseEntity.ok("stored " + user)
                        : ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body("not accepted " + user);
            }
        }

        /**
         * A turn through the starter's own agent factory (with {@code memlife.spool.dir}, an agent
         * with a spool), recorded in one call and answered 200 only once it is on disk.
         */
        @GetMapping("/durable")
        ResponseEntity<String> durable(@RequestParam("sid") String sid, @RequestParam("n") int n) {
            String user = "turn-" + sid + "-" + n;
            try (AgentLease lease = gateway.acquire(sid)) {
                if (!lease.agent().recordTurn(user, "reply-" + sid + "-" + n, sid)) {
                    return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body("not accepted " + user);
                }
                boolean durable = lease.agent().memory().awaitDurable(java.time.Duration.ofSeconds(10));
                return durable ? ResponseEntity.ok("durable " + user)
                        : ResponseEntity.status(HttpStatus.ACCEPTED).body("accepted, not yet durable " + user);
            }
        }

        private AgentMemory newAgent(String sid) {
            MemoryManager memory = MemoryManager.builder().name("session-" + sid).build();
            memory.useProvider(store);
            return AgentMemory.create(memory);
        }

        @ExceptionHandler(RejectedExecutionException.class) // StoppedException, QueueFullException
        ResponseEntity<String> refused(RejectedExecutionException e) {
            return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body("refused: " + e);
        }
    }

    private static void readCommands() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.equals("RELEASE")) {
                    RELEASE.countDown();
                }
            }
        } catch (IOException e) {
            e.printStackTrace();
        }
    }

    /** A held store's write: says {@code STORE_HELD}, then parks until the parent kills the process. */
    static void holdUntilKilled() {
        out("STORE_HELD");
        for (;;) {
            java.util.concurrent.locks.LockSupport.park();
        }
    }

    static void out(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
