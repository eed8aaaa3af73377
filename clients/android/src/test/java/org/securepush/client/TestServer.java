package org.securepush.client;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.json.JSONObject;

/**
 * The real SecurePush that ops/android-test started for these tests (API and dispatcher, the simulated platform
 * recording the FCM request it would send, sealed previews on), and the ways a test acts on it: a producer's SQL
 * through psql, a user token, the recorded pushes.
 */
final class TestServer {
    static final String URL = setting("SECUREPUSH_TEST_URL");
    static final String DATABASE_URL = setting("SECUREPUSH_TEST_DATABASE_URL");
    static final String PSQL = setting("SECUREPUSH_TEST_PSQL");
    static final Path OUTBOX = Paths.get(setting("SECUREPUSH_TEST_OUTBOX"));
    static final String JWT_SECRET = setting("SECUREPUSH_TEST_JWT_SECRET");
    static final Path FCM_RECORD = Paths.get(setting("SECUREPUSH_TEST_FCM_RECORD"));

    private TestServer() {}

    private static String setting(String name) {
        String value = System.getenv(name);
        if (value == null || value.isEmpty()) throw new IllegalStateException(name + " is not set: run the tests with ops/android-test");
        return value;
    }

    /** A new user's id. */
    static String newUser() {
        return "android-" + UUID.randomUUID();
    }

    /** A user token for {@code user} (HS256, as the API's SECUREPUSH_USER_JWT_SECRET checks it). */
    static String userToken(String user) throws Exception {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        String header = b64.encodeToString("{\"alg\":\"HS256\",\"typ\":\"JWT\"}".getBytes(StandardCharsets.UTF_8));
        JSONObject claims = new JSONObject().put("sub", user).put("exp", System.currentTimeMillis() / 1000 + 3600);
        String payload = b64.encodeToString(claims.toString().getBytes(StandardCharsets.UTF_8));
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(JWT_SECRET.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        String signature = b64.encodeToString(mac.doFinal((header + "." + payload).getBytes(StandardCharsets.US_ASCII)));
        return header + "." + payload + "." + signature;
    }

    /** Runs {@code sql} with psql as a producer would; returns its output (unaligned, tuples only). */
    static String sql(String sql) throws Exception {
        Process process = new ProcessBuilder(PSQL, DATABASE_URL, "-qAtX", "-v", "ON_ERROR_STOP=1", "-c", sql).redirectErrorStream(true).start();
        String output = read(process.getInputStream());
        if (process.waitFor() != 0) fail("psql failed: " + output);
        return output.trim();
    }

    /** Enqueues a notification for {@code user}; returns its id. */
    static String enqueue(String user, String payloadJSON, String previewJSON, String category) throws Exception {
        return sql("SELECT securepush.enqueue(user_id => " + quote(user) + ", payload => " + quote(payloadJSON) + "::jsonb"
                + (previewJSON == null ? "" : ", preview => " + quote(previewJSON) + "::jsonb")
                + (category == null ? "" : ", category => " + quote(category)) + ")");
    }

    static String quote(String text) {
        return "'" + text.replace("'", "''") + "'";
    }

    /** The FCM request the dispatcher recorded for notification {@code id} to {@code token} (waits up to 30 s). */
    static JSONObject recordedPush(String id, String token) throws Exception {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (Files.exists(OUTBOX)) {
                List<String> lines = Files.readAllLines(OUTBOX, StandardCharsets.UTF_8);
                for (String line : lines) {
                    if (line.isEmpty()) continue;
                    JSONObject push = new JSONObject(line);
                    if (id.equals(push.optString("notification_id")) && token.equals(push.optString("token"))
                            && push.optString("body").contains("secureId")) {
                        return push;
                    }
                }
            }
            Thread.sleep(50);
        }
        fail("no push of " + id + " to " + token + " was recorded in 30 s");
        return null;
    }

    /**
     * The FCM HTTP v1 request the real FCM provider sent the local stand-in for notification {@code id} to
     * {@code token} (waits up to 30 s): {@code path}, {@code authorization}, {@code traceparent} and {@code body}.
     */
    static JSONObject fcmRequest(String id, String token) throws Exception {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (Files.exists(FCM_RECORD)) {
                for (String line : Files.readAllLines(FCM_RECORD, StandardCharsets.UTF_8)) {
                    if (line.isEmpty()) continue;
                    JSONObject request = new JSONObject(line);
                    JSONObject message = new JSONObject(request.getString("body")).getJSONObject("message");
                    JSONObject data = message.optJSONObject("data");
                    if (token.equals(message.optString("token")) && data != null && id.equals(data.optString("secureId"))) return request;
                }
            }
            Thread.sleep(50);
        }
        fail("the FCM stand-in received no message of " + id + " to " + token + " in 30 s");
        return null;
    }

    /** The FCM data message of a recorded request, as {@code RemoteMessage.getData()} hands it to the app. */
    static Map<String, String> fcmData(JSONObject recorded) throws Exception {
        JSONObject data = new JSONObject(recorded.getString("body")).getJSONObject("message").getJSONObject("data");
        Map<String, String> out = new HashMap<>();
        for (Iterator<String> keys = data.keys(); keys.hasNext(); ) {
            String key = keys.next();
            out.put(key, data.getString(key));
        }
        return out;
    }

    private static String read(InputStream stream) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buffer = new byte[4096];
        int count;
        while ((count = stream.read(buffer)) != -1) out.write(buffer, 0, count);
        return new String(out.toByteArray(), StandardCharsets.UTF_8);
    }
}
