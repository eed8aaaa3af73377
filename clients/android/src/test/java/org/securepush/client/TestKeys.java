package org.securepush.client;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import java.util.Base64;

/**
 * Test keys for ops/android-test: {@code TestKeys FILE} writes a P-256 private key as PKCS#8 PEM (the server's VAPID
 * key); {@code TestKeys FILE --fcm-account TOKEN_URI} writes an FCM service-account JSON with a new RSA key whose
 * token endpoint is the local stand-in's.
 */
public final class TestKeys {
    private TestKeys() {}

    public static void main(String[] arguments) throws Exception {
        if (arguments.length == 3 && arguments[1].equals("--fcm-account")) {
            KeyPairGenerator rsa = KeyPairGenerator.getInstance("RSA");
            rsa.initialize(2048);
            String key = "-----BEGIN PRIVATE KEY-----\n"
                    + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(rsa.generateKeyPair().getPrivate().getEncoded())
                    + "\n-----END PRIVATE KEY-----\n";
            String account = new org.json.JSONObject().put("type", "service_account").put("project_id", "android-test")
                    .put("client_email", "securepush@android-test.iam.gserviceaccount.com").put("private_key_id", "stand-in")
                    .put("private_key", key).put("token_uri", arguments[2]).toString();
            Files.write(Paths.get(arguments[0]), account.getBytes(StandardCharsets.UTF_8));
            return;
        }
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec("secp256r1"));
        byte[] der = generator.generateKeyPair().getPrivate().getEncoded();
        String pem = "-----BEGIN PRIVATE KEY-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END PRIVATE KEY-----\n";
        Files.write(Paths.get(arguments[0]), pem.getBytes(StandardCharsets.US_ASCII));
    }
}
