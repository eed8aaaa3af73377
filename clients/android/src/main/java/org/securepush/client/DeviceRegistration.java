package org.securepush.client;

import org.json.JSONException;
import org.json.JSONObject;

/** How the server reaches this device: the body of {@code POST /v1/devices} and {@code PUT /v1/devices/current/token}. */
public final class DeviceRegistration {
    final JSONObject fields;

    private DeviceRegistration(JSONObject fields) {
        this.fields = fields;
    }

    /** An FCM registration token ({@code FirebaseMessaging.getToken()}, {@code onNewToken}). */
    public static DeviceRegistration fcm(String token) {
        return of("fcm", token);
    }

    /**
     * A UnifiedPush endpoint (what the distributor gave the app, for phones without Google's services) with the
     * subscription key the app made for it: the server encrypts every message to it (RFC 8291), and the app
     * opens them with {@link WebPushMessage#open}.
     */
    public static DeviceRegistration unifiedPush(String endpoint, SealingKey subscriptionKey) {
        return of("unifiedpush", endpoint).with("p256dh", subscriptionKey.publicKeyBase64Url()).with("auth", subscriptionKey.authBase64Url());
    }

    /** A device of any platform by its token ({@code simulated} for local tries). */
    public static DeviceRegistration of(String platform, String token) {
        try {
            return new DeviceRegistration(new JSONObject().put("platform", platform).put("token", token));
        } catch (JSONException e) {
            throw new IllegalArgumentException(e);
        }
    }

    /** The same registration with an option ({@code project} for FCM, ...). */
    public DeviceRegistration with(String option, String value) {
        try {
            return new DeviceRegistration(new JSONObject(fields.toString()).put(option, value));
        } catch (JSONException e) {
            throw new IllegalArgumentException(e);
        }
    }

    String platform() {
        return fields.optString("platform", "");
    }

    /** Whether the platform encrypts each message to the device itself (Web Push, UnifiedPush): no sealing key then. */
    boolean sealsItsOwnMessage() {
        return platform().equals("webpush") || platform().equals("unifiedpush");
    }
}
