// Compile-time stub of android.security.keystore.KeyProperties: the constants the adapters use. Never shipped.
// https://developer.android.com/reference/android/security/keystore/KeyProperties
// (PURPOSE_ENCRYPT = 1, PURPOSE_DECRYPT = 2, PURPOSE_AGREE_KEY = 64 since API 31, KEY_ALGORITHM_AES = "AES",
// KEY_ALGORITHM_EC = "EC", BLOCK_MODE_GCM = "GCM", ENCRYPTION_PADDING_NONE = "NoPadding")
package android.security.keystore;

public abstract class KeyProperties {
    public static final int PURPOSE_ENCRYPT = 1;
    public static final int PURPOSE_DECRYPT = 2;
    public static final int PURPOSE_AGREE_KEY = 64;
    public static final String KEY_ALGORITHM_EC = "EC";
    public static final String KEY_ALGORITHM_AES = "AES";
    public static final String BLOCK_MODE_GCM = "GCM";
    public static final String ENCRYPTION_PADDING_NONE = "NoPadding";
}
