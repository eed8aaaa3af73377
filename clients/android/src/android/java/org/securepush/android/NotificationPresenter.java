package org.securepush.android;

import org.securepush.client.FetchedNotification;

/**
 * How the app shows SecurePush's notifications (its channels, icons, texts and the notification permission are
 * the app's). Every call names the notification by its id: use it as the notification's tag, so a redelivered
 * push or a fetch that completes replaces the same notification instead of adding one.
 */
public interface NotificationPresenter {
    /** A push arrived: show something at once (FCM lowers the priority of apps whose pushes show nothing). */
    void showGeneric(String notificationId);

    /** A sealed preview opened on the device: show it at once, no network needed. */
    void showPreview(String notificationId, String title, String body);

    /** The content was fetched: replace the notification shown for {@code notificationId}. */
    void showFetched(FetchedNotification notification);

    /** Remove these notifications (read on another device, gone, or not the user's). */
    void remove(Iterable<String> notificationIds);
}
