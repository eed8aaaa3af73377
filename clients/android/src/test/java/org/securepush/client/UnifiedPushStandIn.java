package org.securepush.client;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.TreeMap;
import javax.net.ssl.SSLContext;

/**
 * A local UnifiedPush distributor's push endpoint (RFC 8030 over https, as ntfy serves it): records every message
 * POSTed to {@code /up/...} and answers 201, as a distributor does before handing the encrypted body to the app.
 */
final class UnifiedPushStandIn implements AutoCloseable {
    /** One received message. */
    static final class Received {
        final String path;
        final Map<String, String> headers;
        final byte[] body;

        Received(String path, Map<String, String> headers, byte[] body) {
            this.path = path;
            this.headers = headers;
            this.body = body;
        }
    }

    private final HttpsServer server;
    private final ExecutorService executor = Executors.newFixedThreadPool(2);
    private final BlockingQueue<Received> received = new LinkedBlockingQueue<>();

    UnifiedPushStandIn(String keystore) throws Exception {
        SSLContext tls = TestTls.context(keystore);
        server = HttpsServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setHttpsConfigurator(new HttpsConfigurator(tls));
        server.createContext("/up/", exchange -> {
            Map<String, String> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
            exchange.getRequestHeaders().forEach((name, values) -> headers.put(name, String.join(",", values)));
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            try (InputStream in = exchange.getRequestBody()) {
                in.transferTo(body);
            }
            received.add(new Received(exchange.getRequestURI().getPath(), headers, body.toByteArray()));
            exchange.getResponseHeaders().add("Location", "https://127.0.0.1/m/1");
            exchange.sendResponseHeaders(201, -1);
            exchange.close();
        });
        server.setExecutor(executor);
        server.start();
    }

    /** An endpoint of this distributor. */
    String endpoint(String name) {
        return "https://127.0.0.1:" + server.getAddress().getPort() + "/up/" + name;
    }

    /** The next message, or {@code null} after {@code seconds}. */
    Received next(int seconds) throws InterruptedException {
        return received.poll(seconds, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
