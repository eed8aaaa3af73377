package org.securepush.client;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.json.JSONArray;
import org.json.JSONException;
import org.json.JSONObject;

/**
 * What an id-only push asks the app to do, parsed from what the platform handed the app: an FCM data message
 * ({@code RemoteMessage.getData()}) or a decrypted UnifiedPush / Web Push message body. A push never carries
 * content in the clear: ids only, and a preview sealed to the device's key.
 */
public final class PushMessage {
    /** The kind of message. */
    public enum Kind {
        /** A new notification: fetch it by id and show it. */
        NOTIFICATION,
        /** A new notification with a sealed record: open it to show its preview without the network. */
        SEALED,
        /** The user read these notifications on another device: remove them and update the badge. */
        CLEAR
    }

    private final Kind kind;
    private final String notificationId;
    private final SealedPush sealed;
    private final List<String> clearIds;

    private PushMessage(Kind kind, String notificationId, SealedPush sealed, List<String> clearIds) {
        this.kind = kind;
        this.notificationId = notificationId;
        this.sealed = sealed;
        this.clearIds = clearIds;
    }

    /**
     * An FCM data message: {@code secureId} (and {@code secureSealed} beside it when sealed), or {@code secureClear}
     * (comma-separated ids). {@code null} when the message is not SecurePush's.
     */
    public static PushMessage fromFcmData(Map<String, String> data) {
        if (data == null) return null;
        List<String> clear = ids(data.get("secureClear"));
        if (clear != null) return new PushMessage(Kind.CLEAR, null, null, clear);
        String id = uuid(data.get("secureId"));
        return id == null ? null : created(id, data.get("secureSealed"));
    }

    /**
     * A decrypted UnifiedPush or Web Push message body: the Declarative Web Push form (the id in
     * {@code notification.data.secureId}) or a plain JSON message with {@code secureId} / {@code secureClear}.
     */
    public static PushMessage fromWebPushBody(byte[] body) {
        JSONObject message;
        try {
            message = new JSONObject(new String(body, StandardCharsets.UTF_8));
        } catch (JSONException e) {
            return null;
        }
        JSONObject notification = message.optJSONObject("notification");
        JSONObject fields = notification != null && notification.optJSONObject("data") != null ? notification.optJSONObject("data") : message;
        Object clearValue = fields.opt("secureClear");
        List<String> clear = clearValue instanceof JSONArray ? ids((JSONArray) clearValue) : ids(fields.optString("secureClear", null));
        if (clear != null) return new PushMessage(Kind.CLEAR, null, null, clear);
        String id = uuid(fields.optString("secureId", null));
        return id == null ? null : created(id, fields.optString("secureSealed", null));
    }

    public Kind kind() {
        return kind;
    }

    /** The new notification's id; {@code null} for a clear. */
    public String notificationId() {
        return notificationId;
    }

    /** The sealed record of a {@link Kind#SEALED} message, else {@code null}. */
    public SealedPush sealed() {
        return sealed;
    }

    /** The ids a {@link Kind#CLEAR} removes (empty otherwise). */
    public List<String> clearIds() {
        return clearIds;
    }

    /** Sealed when {@code sealed} is a record's base64url; a damaged record still names a notification to fetch. */
    private static PushMessage created(String id, String sealed) {
        SealedPush push = SealedPush.parse(id, sealed);
        return push == null ? new PushMessage(Kind.NOTIFICATION, id, null, Collections.<String>emptyList())
                : new PushMessage(Kind.SEALED, id, push, Collections.<String>emptyList());
    }

    private static List<String> ids(String commaSeparated) {
        if (commaSeparated == null) return null;
        List<String> out = new ArrayList<>();
        for (String part : commaSeparated.split(",")) {
            String id = uuid(part.trim());
            if (id != null) out.add(id);
        }
        return out.isEmpty() ? null : Collections.unmodifiableList(out);
    }

    private static List<String> ids(JSONArray array) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < array.length(); i++) {
            String id = uuid(array.optString(i, null));
            if (id != null) out.add(id);
        }
        return out.isEmpty() ? null : Collections.unmodifiableList(out);
    }

    /** The lower-case UUID, or {@code null} when {@code text} is not one. */
    static String uuid(String text) {
        if (text == null || text.length() != 36) return null;
        try {
            return UUID.fromString(text).toString();
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
