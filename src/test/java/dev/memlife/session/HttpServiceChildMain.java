package dev.memlife.session;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.memlife.MemoryManager;
import dev.memlife.Message;
import dev.memlife.agent.AgentMemory;
import dev.memlife.agent.TeardownListener;
import dev.memlife.gateway.AgentGateway;
import dev.memlife.gateway.AgentLease;
import dev.memlife.gateway.GatewayStopReport;
import dev.memlife.store.CountingDataSource;
import dev.memlife.store.JdbcMemoryProvider;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.sqlite.SQLiteDataSource;

/**
 * The child JVM of {@link HttpServiceSigtermProcessTest}: a chat service on the JDK's {@link
 * HttpServer} (127.0.0.1), wired the way the README shows for many agents and one store. One
 * {@link JdbcMemoryProvider} is built once, at start, on a HikariCP pool of a few connections over
 * a SQLite file, and every session's {@link MemoryManager} only <em>uses</em> it; an {@link
 * AgentGateway} caches one {@link AgentMemory} per session key; the memlife shutdown hook stops
 * the HTTP server and the gateway on SIGTERM, and closes the store (then the pool) after the
 * gateway.
 *
 * <p>Endpoints:
 *
 * <ul>
 *   <li>{@code GET /turn?sid=S&n=N} completes one turn of session S under a lease: user text
 *       {@code turn-S-N}, assistant text {@code reply-S-N}, {@code syncAll}, then 200. With
 *       {@code &hold=1} the handler takes its lease, prints {@code IN_FLIGHT S N} on stdout and
 *       waits (a slow model) until the parent writes {@code RELEASE} to its stdin; then completes
 *       the turn the same way. A lease refused ({@code StoppedException}), a full queue or a write
 *       the manager did not accept are answered 503: nothing was stored. Anything else is a 500.
 *   <li>{@code GET /ping}: 200, touches nothing; lets the parent open a connection before SIGTERM.
 * </ul>
 *
 * <p>On stdout, besides {@code PORT p} once it serves: {@code STOPPING} when the hook starts the
 * gateway's stop, {@code GATEWAY ...} with the stop's report and how many agents began their
 * teardown while a held turn still waited (a stop that did not wait for the open leases), {@code
 * POOL ...} with the connection figures once the store and the pool are closed.
 *
 * <p>Usage: {@code HttpServiceChildMain <sqlite file> <hook deadline millis> <pool size>}.
 */
public final class HttpServiceChildMain {

    private final JdbcMemoryProvider store;
    private final AgentGateway gateway;
    private final CountDownLatch release = new CountDownLatch(1);
    /** Teardowns that began while the held turns still waited: the stop did not wait for their leases. */
    private final AtomicInteger teardownsBeforeRelease = new AtomicInteger();

    private HttpServiceChildMain(JdbcMemoryProvider store, AgentGateway gateway) {
        this.store = store;
        this.gateway = gateway;
    }

    public static void main(String[] args) throws IOException {
        Path file = Path.of(args[0]);
        Duration deadline = Duration.ofMillis(Long.parseLong(args[1]));
        int poolSize = Integer.parseInt(args[2]);

        // The physical connections the pool opens, and the ones the store borrows from it.
        SQLiteDataSource sqlite = new SQLiteDataSource();
        sqlite.setUrl("jdbc:sqlite:" + file.toAbsolutePath());
        CountingDataSource physical = new CountingDataSource(sqlite);
        HikariConfig config = new HikariConfig();
        config.setPoolName("child-pool");
        config.setDataSource(physical);
        config.setMaximumPoolSize(poolSize);
        config.setConnectionTimeout(2_000); // a starved pool fails fast: the write fails, the turn is missing
        HikariDataSource pool = new HikariDataSource(config);
        CountingDataSource borrowed = new CountingDataSource(pool);

        JdbcMemoryProvider store = JdbcMemoryProvider.builder(borrowed).build(); // once, app-owned
        AgentGateway gateway = AgentGateway.builder().name("http").build();
        HttpServiceChildMain service = new HttpServiceChildMain(store, gateway);

        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
        ExecutorService handlers = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "http-handler");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(handlers);
        server.createContext("/turn", service::turn);
        server.createContext("/ping", ex -> respond(ex, 200, "pong"));

        ShutdownHooks hooks = ShutdownHooks.install(deadline);
        // The hook runs the components of one group at once; the server's stop closes the listener
        // (new connections are refused) and waits for the exchanges in flight, while the gateway
        // refuses new leases (503 on connections already open) and waits for the open ones.
        // (On JDK 17, stop(delay) returns early only when an exchange in flight ends; with none in
        // flight it waits the whole delay. In the test three are in flight at SIGTERM.)
        hooks.register("http server", budget -> {
            server.stop((int) Math.max(1, budget.toSeconds() - 1));
            handlers.shutdown();
            return null;
        });
        // The gateway drains beside the server; the store and its pool, which everything above uses,
        // close last, one at a time: the store first (registered last), then the pool.
        hooks.register("gateway", budget -> {
            out("STOPPING");
            GatewayStopReport report = gateway.stop(budget.multipliedBy(9).dividedBy(10));
            out("GATEWAY complete=" + report.complete() + " stillLeased=" + report.stillLeased() + " closed="
                    + report.closed().size() + " notFinished=" + report.notFinished() + " failed="
                    + report.failed().keySet() + " teardownsBeforeRelease=" + service.teardownsBeforeRelease.get());
            return report;
        });
        hooks.closeLast("pool", () -> {
            int borrowedAtClose = borrowed.open();
            pool.close();
            out("POOL physicalMax=" + physical.peak() + " physicalOpened=" + physical.opened()
                    + " borrowedMax=" + borrowed.peak() + " borrowedAtStoreClose=" + borrowedAtClose
                    + " physicalOpenAfterPoolClose=" + physical.open());
        });
        hooks.closeLast("store", store);

        Thread stdin = new Thread(service::readCommands, "stdin-commands");
        stdin.setDaemon(true);
        stdin.start();

        server.start();
        out("PORT " + server.getAddress().getPort());
    }

    /** One turn of one session, under a lease; see the class javadoc. */
    private void turn(HttpExchange ex) throws IOException {
        try {
            Map<String, String> q = query(ex.getRequestURI());
            String sid = q.get("sid");
            String n = q.get("n");
            String user = "turn-" + sid + "-" + n;
            String reply = "reply-" + sid + "-" + n;
            boolean accepted;
            try (AgentLease lease = gateway.acquire(sid, this::newAgent)) {
                if ("1".equals(q.get("hold"))) {
                    out("IN_FLIGHT " + sid + " " + n);
                    if (!release.await(30, TimeUnit.SECONDS)) {
                        throw new IllegalStateException("the parent never released " + user);
                    }
                }
                AgentMemory agent = lease.agent();
                agent.append(Message.user(user));
                agent.append(Message.assistant(reply));
                accepted = agent.memory().syncAll(user, reply, sid);
            }
            if (accepted) {
                respond(ex, 200, "stored " + user);
            } else {
                respond(ex, 503, "not accepted: " + user);
            }
        } catch (RejectedExecutionException refused) { // StoppedException, QueueFullException
            respond(ex, 503, "refused: " + refused.getClass().getSimpleName() + ": " + refused.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            respond(ex, 500, e.toString());
        } catch (RuntimeException e) {
            e.printStackTrace();
            respond(ex, 500, e.toString());
        }
    }

    /** The gateway's factory: one manager and agent per session key, using the one shared store. */
    private AgentMemory newAgent(String sid) {
        MemoryManager memory = MemoryManager.builder().name("session-" + sid).build();
        memory.useProvider(store); // uses it; the manager's shutdown does not shut it down
        return AgentMemory.builder(memory).listener((agent, mode, phase) -> {
            if (phase == TeardownListener.Phase.FLUSH && release.getCount() > 0) {
                teardownsBeforeRelease.incrementAndGet();
            }
        }).build();
    }

    /** Reads the parent's commands on stdin: {@code RELEASE} lets the held turns go on. */
    private void readCommands() {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.equals("RELEASE")) {
                    release.countDown();
                }
            }
        } catch (IOException e) {
            e.printStackTrace();
        }
    }

    private static void out(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static Map<String, String> query(URI uri) {
        Map<String, String> q = new HashMap<>();
        for (String pair : uri.getQuery().split("&")) {
            String[] kv = pair.split("=", 2);
            q.put(kv[0], kv[1]);
        }
        return q;
    }

    private static void respond(HttpExchange ex, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream os = ex.getResponseBody()) {
            os.write(bytes);
        }
    }

}
