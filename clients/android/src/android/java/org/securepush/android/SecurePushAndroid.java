package org.securepush.android;

import android.content.Context;
import org.securepush.client.SecurePushClient;

/**
 * What the adapters need, set once in {@code Application.onCreate}: how to make the client (the service and the
 * workers run in the app's process, maybe before any activity) and how to show notifications.
 */
public final class SecurePushAndroid {
    /** Makes the client for a context. */
    public interface ClientFactory {
        SecurePushClient client(Context context);
    }

    private static volatile ClientFactory clients;
    private static volatile NotificationPresenter presenter;

    private SecurePushAndroid() {}

    public static void configure(ClientFactory clientFactory, NotificationPresenter notificationPresenter) {
        clients = clientFactory;
        presenter = notificationPresenter;
    }

    static SecurePushClient client(Context context) {
        ClientFactory factory = clients;
        if (factory == null) throw new IllegalStateException("call SecurePushAndroid.configure in Application.onCreate");
        return factory.client(context.getApplicationContext());
    }

    static NotificationPresenter presenter() {
        NotificationPresenter current = presenter;
        if (current == null) throw new IllegalStateException("call SecurePushAndroid.configure in Application.onCreate");
        return current;
    }
}
