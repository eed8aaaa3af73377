package org.securepush.client;

/** Why a sealed push could not be opened. The push's id is still good: fetch the notification as usual. */
public final class SealedPushException extends Exception {
    private static final long serialVersionUID = 1L;

    /** What went wrong. */
    public enum Reason {
        /** The message is not a sealed push. */
        NOT_SEALED,
        /** No sealing key is stored. */
        NO_SEALING_KEY,
        /** The record is not one {@code aes128gcm} record with the sender's key as key id. */
        MALFORMED_RECORD,
        /** The record was not sealed to this key, or was altered. */
        CANNOT_DECRYPT,
        /** The decrypted content is not padded JSON of the documented shape. */
        MALFORMED_CONTENT,
        /** The content names another notification than the push's id. */
        ID_MISMATCH
    }

    private final Reason reason;

    public SealedPushException(Reason reason) {
        super(reason.name().toLowerCase(java.util.Locale.ROOT));
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
