package org.securepush.client;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Sends one API request under an overall deadline with a timeout per attempt, retrying with jitter on network
 * errors, timeouts, 408, 429 and 5xx only (never on 401, 403, 404 or 410), and waiting at least what a
 * {@code Retry-After} asks, but never past the deadline. Blocking: call it from a worker thread.
 */
final class HttpRequester {
    /** An HTTP answer. */
    static final class Answer {
        final int status;
        final String body;
        /** {@code Retry-After} in milliseconds (0 without one). */
        final long retryAfterMillis;

        Answer(int status, String body, long retryAfterMillis) {
            this.status = status;
            this.body = body;
            this.retryAfterMillis = retryAfterMillis;
        }
    }

    private final SecurePushClient.Configuration configuration;

    HttpRequester(SecurePushClient.Configuration configuration) {
        this.configuration = configuration;
    }

    Answer send(URL url, String method, String body, String authorization) throws SecurePushException {
        long deadline = System.nanoTime() + configuration.deadlineMillis * 1_000_000L;
        String lastProblem = "no attempt";
        for (int attempt = 1; attempt <= Math.max(1, configuration.maxAttempts); attempt++) {
            long remaining = (deadline - System.nanoTime()) / 1_000_000L;
            if (remaining <= 0) break;
            long retryAfter = 0;
            try {
                Answer answer = attemptOnce(url, method, body, authorization, (int) Math.min(configuration.requestTimeoutMillis, remaining));
                if (!isRetried(answer.status)) return answer;
                lastProblem = "HTTP " + answer.status;
                retryAfter = answer.retryAfterMillis;
            } catch (IOException e) {
                lastProblem = e.getClass().getSimpleName();
            }
            if (attempt == configuration.maxAttempts) break;
            long base = (long) (Math.min(4000, 250L << attempt) * ThreadLocalRandom.current().nextDouble(0.5, 1.0));
            long pause = Math.min(Math.max(retryAfter, base), (deadline - System.nanoTime()) / 2_000_000L);
            if (pause <= 0) break;
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SecurePushException(0, "unavailable", "interrupted");
            }
        }
        throw new SecurePushException(0, "unavailable", lastProblem);
    }

    static boolean isRetried(int status) {
        return status == 408 || status == 429 || (status >= 500 && status <= 599);
    }

    private Answer attemptOnce(URL url, String method, String body, String authorization, int timeoutMillis) throws IOException {
        HttpURLConnection connection = (HttpURLConnection) url.openConnection();
        try {
            connection.setConnectTimeout(timeoutMillis);
            connection.setReadTimeout(timeoutMillis);
            connection.setInstanceFollowRedirects(false);
            connection.setUseCaches(false);
            connection.setRequestMethod(method);
            connection.setRequestProperty("Accept", "application/json");
            if (authorization != null) connection.setRequestProperty("Authorization", authorization);
            if (body != null) {
                byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
                connection.setDoOutput(true);
                connection.setRequestProperty("Content-Type", "application/json");
                connection.setFixedLengthStreamingMode(bytes.length);
                try (OutputStream out = connection.getOutputStream()) {
                    out.write(bytes);
                }
            }
            int status = connection.getResponseCode();
            long retryAfter = retryAfterMillis(connection.getHeaderField("Retry-After"));
            InputStream stream = status >= 400 ? connection.getErrorStream() : connection.getInputStream();
            return new Answer(status, stream == null ? "" : read(stream), retryAfter);
        } finally {
            connection.disconnect();
        }
    }

    static long retryAfterMillis(String value) {
        if (value == null) return 0;
        try {
            return Math.min(60_000L, Math.max(0L, Long.parseLong(value.trim()) * 1000L));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static String read(InputStream stream) throws IOException {
        try (InputStream in = stream) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            byte[] buffer = new byte[8192];
            int count;
            while ((count = in.read(buffer)) != -1) {
                if (out.size() + count > 4 << 20) throw new IOException("answer larger than 4 MiB");
                out.write(buffer, 0, count);
            }
            return new String(out.toByteArray(), StandardCharsets.UTF_8);
        }
    }
}
