package org.securepush.client;

import org.json.JSONObject;

/**
 * What an opened sealed push holds: the notification's id and the preview its producer let travel sealed
 * ({@code null}: sealed id-only, fetch the notification as usual).
 */
public final class SealedPreview {
    private final String id;
    private final JSONObject preview;

    SealedPreview(String id, JSONObject preview) {
        this.id = id;
        this.preview = preview;
    }

    /** The notification's id (checked to be the push's). */
    public String id() {
        return id;
    }

    /** The producer's preview object, or {@code null}. */
    public JSONObject preview() {
        return preview;
    }

    /** The preview's {@code title}, to show instead of the generic text, or {@code null}. */
    public String title() {
        return preview == null ? null : preview.optString("title", null);
    }

    /** The preview's {@code body}, or {@code null}. */
    public String body() {
        return preview == null ? null : preview.optString("body", null);
    }
}
