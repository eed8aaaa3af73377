package org.securepush.android;

import android.os.Build;
import android.security.keystore.KeyGenParameterSpec;
import android.security.keystore.KeyProperties;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.interfaces.ECPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.util.Collections;
import java.util.UUID;
import javax.crypto.KeyAgreement;
import org.securepush.client.SealingKey;
import org.securepush.client.SealingKeyStore;

/**
 * Sealing keys whose private half never leaves the Android Keystore (API 31+, {@code PURPOSE_AGREE_KEY}): the ECDH
 * of each sealed push runs inside the Keystore. {@link #forThisDevice()} falls back to software keys on older
 * versions (the credential store keeps their scalar, encrypted under a Keystore key). A new key replaces the
 * previous ones: a push sealed to a key that was just replaced falls back to the fetch by id.
 */
public final class KeystoreSealingKeys implements SealingKeyStore {
    private static final String PREFIX = "securepush.sealing.";

    private KeystoreSealingKeys() {}

    /** The Keystore's agreement keys on Android 12 and later, software keys before. */
    public static SealingKeyStore forThisDevice() {
        return Build.VERSION.SDK_INT >= 31 ? new KeystoreSealingKeys() : SealingKeyStore.SOFTWARE;
    }

    @Override
    public SealingKey generate() throws GeneralSecurityException {
        String alias = PREFIX + UUID.randomUUID();
        KeyPairGenerator generator = KeyPairGenerator.getInstance(KeyProperties.KEY_ALGORITHM_EC, "AndroidKeyStore");
        generator.initialize(new KeyGenParameterSpec.Builder(alias, KeyProperties.PURPOSE_AGREE_KEY)
                .setAlgorithmParameterSpec(new ECGenParameterSpec("secp256r1")).build());
        KeyPair pair = generator.generateKeyPair();
        byte[] auth = new byte[16];
        new SecureRandom().nextBytes(auth);
        KeyStore store = keyStore();
        for (String other : Collections.list(store.aliases())) {
            if (other.startsWith(PREFIX) && !other.equals(alias)) store.deleteEntry(other);
        }
        return SealingKey.held(alias, SealingKey.uncompressed((ECPublicKey) pair.getPublic()), auth, agreement(alias));
    }

    @Override
    public SealingKey restore(String alias, byte[] publicKey, byte[] auth) throws GeneralSecurityException {
        if (!keyStore().containsAlias(alias)) throw new GeneralSecurityException("the Keystore no longer holds " + alias);
        return SealingKey.held(alias, publicKey, auth, agreement(alias));
    }

    private static SealingKey.Agreement agreement(String alias) {
        return senderPublicKey -> {
            PrivateKey key = (PrivateKey) keyStore().getKey(alias, null);
            KeyAgreement agreement = KeyAgreement.getInstance("ECDH", "AndroidKeyStore");
            agreement.init(key);
            agreement.doPhase(SealingKey.publicKey(senderPublicKey), true);
            return agreement.generateSecret();
        };
    }

    private static KeyStore keyStore() throws GeneralSecurityException {
        KeyStore store = KeyStore.getInstance("AndroidKeyStore");
        try {
            store.load(null);
        } catch (java.io.IOException e) {
            throw new GeneralSecurityException(e);
        }
        return store;
    }
}
