package org.securepush.client;

/**
 * This device's credential: its id and secret (sent as {@code Authorization: Bearer <id>.<secret>}), and its
 * sealing key when it has one. Keep it in a {@link CredentialStore}; the secret is shown once by the server.
 */
public final class DeviceCredential {
    private final String deviceId;
    private final String secret;
    private final SealingKey sealingKey;

    public DeviceCredential(String deviceId, String secret, SealingKey sealingKey) {
        this.deviceId = deviceId;
        this.secret = secret;
        this.sealingKey = sealingKey;
    }

    public String deviceId() {
        return deviceId;
    }

    public String secret() {
        return secret;
    }

    /** The key previews are sealed to, or {@code null}. */
    public SealingKey sealingKey() {
        return sealingKey;
    }

    /** The same credential with another sealing key (or none). */
    public DeviceCredential withSealingKey(SealingKey key) {
        return new DeviceCredential(deviceId, secret, key);
    }

    String bearer() {
        return "Bearer " + deviceId + "." + secret;
    }

    /** Never the secret: a credential must not reach a log. */
    @Override
    public String toString() {
        return "DeviceCredential(" + deviceId + ")";
    }
}
