package org.securepush.client;

/** What fetching one notification found. Only {@link Status#UNAVAILABLE} is worth retrying later. */
public final class FetchResult {
    /** The outcome. */
    public enum Status {
        FOUND,
        /** It was read and its payload purged, or it expired or was cancelled. */
        GONE,
        /** No such notification for this device's user: another user's looks exactly the same. */
        NOT_FOUND,
        /** The credential is missing, invalid or revoked: register again. */
        UNAUTHORIZED,
        /** No usable answer within the deadline. */
        UNAVAILABLE
    }

    private final Status status;
    private final FetchedNotification notification;
    private final String reason;

    FetchResult(Status status, FetchedNotification notification, String reason) {
        this.status = status;
        this.notification = notification;
        this.reason = reason;
    }

    public Status status() {
        return status;
    }

    /** The notification when {@link Status#FOUND}, else {@code null}. */
    public FetchedNotification notification() {
        return notification;
    }

    /** Why it is unavailable, else {@code null}. */
    public String reason() {
        return reason;
    }
}
