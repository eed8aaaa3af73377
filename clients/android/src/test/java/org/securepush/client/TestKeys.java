package org.securepush.client;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import java.util.Base64;

/** Writes a P-256 private key as PKCS#8 PEM (the server's VAPID key for the UnifiedPush test): {@code TestKeys FILE}. */
public final class TestKeys {
    private TestKeys() {}

    public static void main(String[] arguments) throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec("secp256r1"));
        byte[] der = generator.generateKeyPair().getPrivate().getEncoded();
        String pem = "-----BEGIN PRIVATE KEY-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END PRIVATE KEY-----\n";
        Files.write(Paths.get(arguments[0]), pem.getBytes(StandardCharsets.US_ASCII));
    }
}
