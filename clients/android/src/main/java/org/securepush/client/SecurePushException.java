package org.securepush.client;

/**
 * A call that did not succeed: the server refused it ({@link #status()} and its error {@link #code()}), or no
 * usable answer came within the deadline ({@link #status()} is 0).
 */
public final class SecurePushException extends Exception {
    private static final long serialVersionUID = 1L;
    private final int status;
    private final String code;

    public SecurePushException(int status, String code, String message) {
        super(message);
        this.status = status;
        this.code = code;
    }

    /** The HTTP status, or 0 when the server could not be reached in time. */
    public int status() {
        return status;
    }

    /** The API's error code ({@code unauthorized}, {@code invalid_parameter}, ...), or {@code unavailable}. */
    public String code() {
        return code;
    }

    /** Whether retrying later may help (no answer, 408, 429 or 5xx). */
    public boolean isTransient() {
        return status == 0 || status == 408 || status == 429 || status >= 500;
    }
}
