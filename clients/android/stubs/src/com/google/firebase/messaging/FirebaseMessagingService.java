// Compile-time stub of Firebase Messaging's FirebaseMessagingService. Never shipped.
// https://firebase.google.com/docs/reference/android/com/google/firebase/messaging/FirebaseMessagingService
// (extends android.app.Service; onMessageReceived(RemoteMessage), onNewToken(String), onDeletedMessages(),
// all invoked on a background thread)
package com.google.firebase.messaging;

public class FirebaseMessagingService extends android.app.Service {
    public void onMessageReceived(RemoteMessage message) {}

    public void onNewToken(String token) {}

    public void onDeletedMessages() {}

    @Override
    public android.content.Context getApplicationContext() {
        throw new UnsupportedOperationException("stub");
    }

    @Override
    public android.content.SharedPreferences getSharedPreferences(String name, int mode) {
        throw new UnsupportedOperationException("stub");
    }
}
