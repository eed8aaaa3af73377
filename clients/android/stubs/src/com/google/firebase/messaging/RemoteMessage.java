// Compile-time stub of Firebase Messaging's RemoteMessage. Never shipped.
// https://firebase.google.com/docs/reference/android/com/google/firebase/messaging/RemoteMessage
// (Map<String, String> getData(), String getMessageId(), int getPriority(), int getOriginalPriority(),
// PRIORITY_UNKNOWN = 0, PRIORITY_HIGH = 1, PRIORITY_NORMAL = 2)
package com.google.firebase.messaging;

import java.util.Map;

public final class RemoteMessage {
    public static final int PRIORITY_UNKNOWN = 0;
    public static final int PRIORITY_HIGH = 1;
    public static final int PRIORITY_NORMAL = 2;

    private RemoteMessage() {}

    public Map<String, String> getData() {
        throw new UnsupportedOperationException("stub");
    }

    public String getMessageId() {
        throw new UnsupportedOperationException("stub");
    }

    public int getPriority() {
        throw new UnsupportedOperationException("stub");
    }

    public int getOriginalPriority() {
        throw new UnsupportedOperationException("stub");
    }
}
