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
}
