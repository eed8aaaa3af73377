package org.securepush.android;

import android.content.Context;
import android.content.SharedPreferences;
import android.security.keystore.KeyGenParameterSpec;
import android.security.keystore.KeyProperties;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.util.Arrays;
import java.util.Base64;
import javax.crypto.Cipher;
import javax.crypto.KeyGenerator;
import javax.crypto.SecretKey;
import javax.crypto.spec.GCMParameterSpec;
import org.securepush.client.CredentialStore;
import org.securepush.client.DeviceCredential;
import org.securepush.client.SealingKeyStore;

/**
 * The device credential (and its sealing key) encrypted with AES-GCM under a key that never leaves the Android
 * Keystore, kept in the app's private preferences. A backup restored on another phone holds only ciphertext that
 * phone cannot open: the app registers again there.
 */
public final class KeystoreCredentialStore implements CredentialStore {
    private static final String ALIAS = "securepush.credential";
    private static final String PREFERENCE = "credential";
    private final SharedPreferences preferences;
    private final SealingKeyStore sealingKeys;

    /** A store whose credentials' sealing keys come from {@code sealingKeys} (the client's, e.g. {@code KeystoreSealingKeys.forThisDevice()}). */
    public KeystoreCredentialStore(Context context, SealingKeyStore sealingKeys) {
        this.preferences = context.getApplicationContext().getSharedPreferences("securepush", Context.MODE_PRIVATE);
        this.sealingKeys = sealingKeys;
    }

    @Override
    public DeviceCredential load() throws Exception {
        String stored = preferences.getString(PREFERENCE, null);
        if (stored == null) return null;
        byte[] sealed = Base64.getDecoder().decode(stored);
        Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
        cipher.init(Cipher.DECRYPT_MODE, key(), new GCMParameterSpec(128, Arrays.copyOfRange(sealed, 0, 12)));
        byte[] plain = cipher.doFinal(sealed, 12, sealed.length - 12);
        return DeviceCredential.fromStorageJSON(new String(plain, StandardCharsets.UTF_8), sealingKeys);
    }

    @Override
    public void save(DeviceCredential credential) throws Exception {
        Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
        cipher.init(Cipher.ENCRYPT_MODE, key());  // the Keystore chooses the IV
        byte[] body = cipher.doFinal(credential.toStorageJSON().getBytes(StandardCharsets.UTF_8));
        byte[] iv = cipher.getIV();
        byte[] sealed = new byte[iv.length + body.length];
        System.arraycopy(iv, 0, sealed, 0, iv.length);
        System.arraycopy(body, 0, sealed, iv.length, body.length);
        if (!preferences.edit().putString(PREFERENCE, Base64.getEncoder().encodeToString(sealed)).commit()) {
            throw new IllegalStateException("the credential could not be written");
        }
    }

    @Override
    public void delete() {
        preferences.edit().remove(PREFERENCE).commit();
    }

    private static SecretKey key() throws Exception {
        KeyStore keyStore = KeyStore.getInstance("AndroidKeyStore");
        keyStore.load(null);
        if (keyStore.containsAlias(ALIAS)) return (SecretKey) keyStore.getKey(ALIAS, null);
        KeyGenerator generator = KeyGenerator.getInstance(KeyProperties.KEY_ALGORITHM_AES, "AndroidKeyStore");
        generator.init(new KeyGenParameterSpec.Builder(ALIAS, KeyProperties.PURPOSE_ENCRYPT | KeyProperties.PURPOSE_DECRYPT)
                .setBlockModes(KeyProperties.BLOCK_MODE_GCM).setEncryptionPaddings(KeyProperties.ENCRYPTION_PADDING_NONE).setKeySize(256).build());
        return generator.generateKey();
    }
}
