package dev.memlife.session;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.memlife.MemoryManager;
import dev.memlife.MemoryProvider;
import dev.memlife.Message;
import dev.memlife.Turn;
import dev.memlife.agent.SessionCommitter;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;

/**
 * The child JVM of {@link SigtermDrainProcessTest}: a tiny web-UI-like server on 127.0.0.1 that
 * completes turns ({@code GET /turn?sid=..&n=..}: {@code syncAll} + {@code markTurnCompleted}) and
 * starts new chats ({@code GET /new?sid=..}: a fire-and-forget background commit). It installs the
 * memlife shutdown hook, so SIGTERM drains the tracker and the managers. Every agent's provider
 * appends {@code sync <sid> <turn>} and {@code commit <sid> <turn>} lines to the output file, which
 * the test reads from outside. The session named {@code hangSession} has a provider that never
 * returns from its end-of-session extraction.
 *
 * <p>Usage: {@code ChildGatewayMain <output file> <drain deadline millis> <hangSession|->
 * <extraction millis>}: every other session's extraction takes that long. Prints
 * {@code PORT <port>} on stdout once it serves.
 */
public final class ChildGatewayMain {

    private final Path out;
    private final String hangSession;
    private final SessionCommitTracker tracker = SessionCommitTracker.builder().name("child").build();
    private final ShutdownHooks hooks;
    private final Map<String, ChildAgent> agents = new ConcurrentHashMap<>();

    private final long extractionMillis;

    private ChildGatewayMain(Path out, Duration deadline, String hangSession, long extractionMillis) {
        this.out = out;
        this.extractionMillis = extractionMillis;
        this.hangSession = hangSession;
        this.hooks = ShutdownHooks.install(deadline);
        hooks.register(tracker);
    }

    public static void main(String[] args) throws IOException {
        ChildGatewayMain gateway = new ChildGatewayMain(Path.of(args[0]), Duration.ofMillis(Long.parseLong(args[1])),
                args[2], Long.parseLong(args[3]));
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/turn", gateway::turn);
        server.createContext("/new", gateway::newChat);
        server.start(); // its dispatcher thread is not a daemon: the JVM lives until SIGTERM
        // Stop serving on shutdown too: an idle dispatcher blocked in native code makes the JVM's
        // exit wait up to 300 ms for it after the hooks are done.
        gateway.hooks.register("http server", budget -> {
            server.stop(0);
            return null;
        });
        System.out.println("PORT " + server.getAddress().getPort());
        System.out.flush();
    }

    private void turn(HttpExchange ex) throws IOException {
        Map<String, String> q = query(ex.getRequestURI());
        String sid = q.get("sid");
        ChildAgent agent = agents.computeIfAbsent(sid, this::newAgent);
        agent.completeTurn("turn-" + q.get("n"));
        long generation = tracker.markTurnCompleted(sid, agent);
        respond(ex, "generation " + generation);
    }

    private void newChat(HttpExchange ex) throws IOException {
        String sid = query(ex.getRequestURI()).get("sid");
        respond(ex, tracker.commitInBackground(sid).status().name());
    }

    private ChildAgent newAgent(String sid) {
        MemoryManager manager = MemoryManager.builder().name("agent-" + sid).build();
        manager.addProvider(new FileProvider(sid));
        hooks.register(manager);
        ChildAgent agent = new ChildAgent(sid, manager);
        tracker.registerOwner(sid, agent);
        return agent;
    }

    /** One agent: its manager and the turns it completed since its last commit. */
    private static final class ChildAgent implements SessionCommitter {
        private final String sid;
        private final MemoryManager manager;
        private final List<Message> uncommitted = new ArrayList<>();

        ChildAgent(String sid, MemoryManager manager) {
            this.sid = sid;
            this.manager = manager;
        }

        /** Recorded before the tracker hears of the turn, so a commit never misses counted work. */
        void completeTurn(String text) {
            synchronized (uncommitted) {
                uncommitted.add(Message.user(text));
            }
            manager.syncAll(text, "reply to " + text, sid);
        }

        @Override
        public void commitSession() {
            List<Message> batch;
            synchronized (uncommitted) {
                batch = List.copyOf(uncommitted);
            }
            manager.onSessionEnd(batch);
            synchronized (uncommitted) {
                uncommitted.subList(0, batch.size()).clear();
            }
        }

        @Override
        public String toString() {
            return "agent-" + sid;
        }
    }

    /** Appends what it is handed to the output file; the hang session's extraction never returns. */
    private final class FileProvider implements MemoryProvider {
        private final String sid;

        FileProvider(String sid) {
            this.sid = sid;
        }

        @Override
        public String name() {
            return "file";
        }

        @Override
        public void syncTurn(Turn turn) {
            append("sync " + sid + " " + turn.userContent());
        }

        @Override
        public void onSessionEnd(List<Message> messages) {
            if (sid.equals(hangSession)) {
                hangForever();
            }
            try {
                Thread.sleep(extractionMillis); // sleep-ok: an end-of-session extraction takes time
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            StringBuilder lines = new StringBuilder();
            for (Message m : messages) {
                lines.append("commit ").append(sid).append(' ').append(m.content()).append('\n');
            }
            append(lines.toString().strip());
        }
    }

    private static void hangForever() {
        CountDownLatch never = new CountDownLatch(1);
        while (true) {
            try {
                never.await();
            } catch (InterruptedException e) {
                // a wedged provider does not notice interrupts
            }
        }
    }

    private void append(String lines) {
        if (lines.isEmpty()) {
            return;
        }
        synchronized (this) {
            try {
                Files.writeString(out, lines + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new IllegalStateException("cannot append to " + out, e);
            }
        }
    }

    private static Map<String, String> query(URI uri) {
        Map<String, String> q = new HashMap<>();
        for (String pair : uri.getQuery().split("&")) {
            String[] kv = pair.split("=", 2);
            q.put(kv[0], kv[1]);
        }
        return q;
    }

    private static void respond(HttpExchange ex, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(200, bytes.length);
        try (OutputStream os = ex.getResponseBody()) {
            os.write(bytes);
        }
    }
}
