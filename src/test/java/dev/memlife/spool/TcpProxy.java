package dev.memlife.spool;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy the test controls, between a replica and the database: every connection accepted on
 * {@link #port()} is piped to {@code host:port}; {@link #cutAll()} closes every piped connection at
 * once, as a lost network or a failed load balancer does, while new connections are still accepted.
 */
final class TcpProxy implements AutoCloseable {

    private final ServerSocket server;
    private final String host;
    private final int targetPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicInteger cut = new AtomicInteger();

    TcpProxy(String host, int targetPort) throws IOException {
        this.host = host;
        this.targetPort = targetPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::accept, "tcp-proxy-accept");
        accept.setDaemon(true);
        accept.start();
    }

    int port() {
        return server.getLocalPort();
    }

    /** Closes every connection piped so far; returns how many sockets it closed. */
    int cutAll() {
        int n = 0;
        for (Socket s : sockets) {
            try {
                s.close();
                n++;
            } catch (IOException ignored) {
                // closing anyway
            }
        }
        sockets.clear();
        cut.addAndGet(n);
        return n;
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket db = new Socket(host, targetPort);
                sockets.add(client);
                sockets.add(db);
                pipe(client, db);
                pipe(db, client);
            } catch (IOException e) {
                if (server.isClosed()) {
                    return;
                }
            }
        }
    }

    private void pipe(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException ignored) {
                // cut, or closed by either side
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "tcp-proxy-pipe");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        cutAll();
    }
}
