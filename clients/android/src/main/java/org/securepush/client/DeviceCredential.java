package org.securepush.client;

import org.json.JSONException;
import org.json.JSONObject;

/**
 * This device's credential: its id and secret (sent as {@code Authorization: Bearer <id>.<secret>}), and its
 * sealing key when it has one. Keep it in a {@link CredentialStore}; the secret is shown once by the server.
 */
public final class DeviceCredential {
    private final String deviceId;
    private final String secret;
    private final SealingKey sealingKey;
    private final boolean subscriptionKey;

    public DeviceCredential(String deviceId, String secret, SealingKey sealingKey) {
        this(deviceId, secret, sealingKey, false);
    }

    /**
     * A credential whose key is the push subscription's own ({@code subscriptionKey}: a UnifiedPush or Web Push
     * device, whose every message is encrypted to it) or a sealing key for previews.
     */
    public DeviceCredential(String deviceId, String secret, SealingKey sealingKey, boolean subscriptionKey) {
        this.deviceId = deviceId;
        this.secret = secret;
        this.sealingKey = sealingKey;
        this.subscriptionKey = subscriptionKey && sealingKey != null;
    }

    /** Whether {@link #sealingKey()} is the push subscription's key (it then stays as it is when the secret rotates). */
    public boolean isSubscriptionKey() {
        return subscriptionKey;
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
        return new DeviceCredential(deviceId, secret, key, false);
    }

    /**
     * The credential as JSON for a {@link CredentialStore} to keep (encrypted: it holds the secret and the sealing
     * key's private scalar).
     */
    public String toStorageJSON() {
        try {
            JSONObject json = new JSONObject().put("device_id", deviceId).put("secret", secret);
            if (sealingKey != null) {
                JSONObject key = new JSONObject().put("public", Base64Url.encode(sealingKey.publicKey()))
                        .put("auth", Base64Url.encode(sealingKey.auth())).put("subscription", subscriptionKey);
                // A held key is stored by its alias: its private half never leaves its key store.
                if (sealingKey.alias() != null) key.put("alias", sealingKey.alias());
                else key.put("private", Base64Url.encode(sealingKey.privateScalar()));
                json.put("sealing_key", key);
            }
            return json.toString();
        } catch (JSONException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A credential from {@link #toStorageJSON()} with software keys; {@code null} when the text is not one. */
    public static DeviceCredential fromStorageJSON(String text) {
        return fromStorageJSON(text, SealingKeyStore.SOFTWARE);
    }

    /** A credential from {@link #toStorageJSON()}, its held key restored from {@code keys}; {@code null} when not one. */
    public static DeviceCredential fromStorageJSON(String text, SealingKeyStore keys) {
        try {
            JSONObject json = new JSONObject(text);
            JSONObject key = json.optJSONObject("sealing_key");
            SealingKey sealingKey = null;
            boolean subscription = key != null && key.optBoolean("subscription", false);
            if (key != null) {
                byte[] point = Base64Url.decode(key.optString("public"));
                byte[] auth = Base64Url.decode(key.optString("auth"));
                if (point == null || auth == null) return null;
                String alias = key.optString("alias", "");
                if (!alias.isEmpty()) {
                    try {
                        sealingKey = keys.restore(alias, point, auth);
                    } catch (java.security.GeneralSecurityException e) {
                        sealingKey = null;  // the held key is gone (the app's data was restored elsewhere): fetch by id
                    }
                } else {
                    byte[] scalar = Base64Url.decode(key.optString("private"));
                    if (scalar == null) return null;
                    sealingKey = SealingKey.fromParts(scalar, point, auth);
                }
            }
            String id = json.optString("device_id", "");
            String secret = json.optString("secret", "");
            return id.isEmpty() || secret.isEmpty() ? null : new DeviceCredential(id, secret, sealingKey, subscription);
        } catch (JSONException | IllegalArgumentException e) {
            return null;
        }
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
