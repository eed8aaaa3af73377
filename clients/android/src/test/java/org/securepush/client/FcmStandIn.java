package org.securepush.client;

import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.Executors;
import org.json.JSONObject;

/**
 * A local stand-in for Google's OAuth token endpoint and FCM HTTP v1, run by ops/android-test before the server
 * ({@code FcmStandIn PORT KEYSTORE RECORD_FILE}): the real FCM provider exchanges its service-account JWT at
 * {@code /token} and sends each message to {@code /v1/projects/{project}/messages:send}; every message is appended
 * to RECORD_FILE as a JSON line, for the tests to read as the phone's FCM would hand it over.
 */
public final class FcmStandIn {
    private FcmStandIn() {}

    public static void main(String[] arguments) throws Exception {
        HttpsServer server = HttpsServer.create(new InetSocketAddress("127.0.0.1", Integer.parseInt(arguments[0])), 0);
        server.setHttpsConfigurator(new HttpsConfigurator(TestTls.context(arguments[1])));
        String record = arguments[2];
        server.createContext("/token", exchange -> {
            String form = read(exchange.getRequestBody());
            boolean grant = form.contains("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer") && form.contains("assertion=");
            byte[] answer = (grant ? "{\"access_token\":\"stand-in-token\",\"expires_in\":3600,\"token_type\":\"Bearer\"}" : "{\"error\":\"invalid_grant\"}")
                    .getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(grant ? 200 : 400, answer.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(answer);
            }
        });
        server.createContext("/v1/projects/", exchange -> {
            String body = read(exchange.getRequestBody());
            String line;
            try {
                line = new JSONObject().put("path", exchange.getRequestURI().getPath())
                        .put("authorization", String.valueOf(exchange.getRequestHeaders().getFirst("Authorization")))
                        .put("traceparent", String.valueOf(exchange.getRequestHeaders().getFirst("traceparent"))).put("body", body).toString() + "\n";
            } catch (org.json.JSONException e) {
                throw new java.io.IOException(e);
            }
            synchronized (FcmStandIn.class) {
                Files.write(Paths.get(record), line.getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            }
            byte[] answer = "{\"name\":\"projects/android-test/messages/0:1\"}".getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, answer.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(answer);
            }
        });
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.start();
        System.out.println("fcm stand-in listening on " + server.getAddress().getPort());
    }

    private static String read(InputStream stream) throws java.io.IOException {
        try (InputStream in = stream) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            in.transferTo(out);
            return new String(out.toByteArray(), StandardCharsets.UTF_8);
        }
    }
}
