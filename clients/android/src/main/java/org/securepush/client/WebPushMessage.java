package org.securepush.client;

/**
 * A UnifiedPush (or Web Push) message body as the distributor hands it to the app: one RFC 8291 {@code aes128gcm}
 * record encrypted to the subscription's keys. The app registered those keys ({@link DeviceRegistration#unifiedPush})
 * and keeps them ({@link SecurePushClient#register} stores them as the credential's sealing key).
 */
public final class WebPushMessage {
    private WebPushMessage() {}

    /** Decrypts {@code body} with the subscription's key and parses it; throws when it is not SecurePush's. */
    public static PushMessage open(byte[] body, SealingKey subscriptionKey) throws SealedPushException {
        if (subscriptionKey == null) throw new SealedPushException(SealedPushException.Reason.NO_SEALING_KEY);
        PushMessage message = PushMessage.fromWebPushBody(SealedPush.decrypt(body, subscriptionKey));
        if (message == null) throw new SealedPushException(SealedPushException.Reason.MALFORMED_CONTENT);
        return message;
    }
}
