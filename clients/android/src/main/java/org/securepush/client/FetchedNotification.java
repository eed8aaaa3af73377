package org.securepush.client;

import org.json.JSONObject;

/** A notification's content as the device fetched it (the server marked it read). */
public final class FetchedNotification {
    private final JSONObject json;

    FetchedNotification(JSONObject json) {
        this.json = json;
    }

    public String id() {
        return json.optString("id");
    }

    /** The producer's payload (any JSON value; usually an object with {@code title} and {@code body}). */
    public Object payload() {
        return json.opt("payload");
    }

    /** The payload's {@code title} when it is an object with one, else {@code null}. */
    public String title() {
        JSONObject payload = json.optJSONObject("payload");
        return payload == null ? null : payload.optString("title", null);
    }

    /** The payload's {@code body} when it is an object with one, else {@code null}. */
    public String body() {
        JSONObject payload = json.optJSONObject("payload");
        return payload == null ? null : payload.optString("body", null);
    }

    /** ISO 8601. */
    public String createdAt() {
        return json.optString("created_at");
    }

    /** ISO 8601, or {@code null}. */
    public String readAt() {
        return json.isNull("read_at") ? null : json.optString("read_at", null);
    }

    /** The producer's category, or {@code null}. */
    public String category() {
        return json.isNull("category") ? null : json.optString("category", null);
    }

    /** The whole object as the API returned it. */
    public JSONObject json() {
        return json;
    }
}
