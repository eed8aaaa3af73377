package org.securepush.client;

import java.util.Base64;

/** Unpadded base64url, as the API and the push records use it. */
final class Base64Url {
    private Base64Url() {}

    static String encode(byte[] bytes) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** The bytes, or {@code null} when {@code text} is not base64url. */
    static byte[] decode(String text) {
        try {
            return Base64.getUrlDecoder().decode(text);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
