package org.securepush.client;

import java.security.GeneralSecurityException;

/**
 * Where sealing keys are made: {@link #SOFTWARE} ({@code javax.crypto}; the credential store keeps the private
 * scalar, encrypted) or the Android Keystore ({@code KeystoreSealingKeys}, API 31+: the private key never leaves it).
 */
public interface SealingKeyStore {
    /** A new key for this device (registration, rotation, {@code setSealingKey}). */
    SealingKey generate() throws GeneralSecurityException;

    /** A key this store made and holds under {@code alias}, for a credential read back from storage. */
    SealingKey restore(String alias, byte[] publicKey, byte[] auth) throws GeneralSecurityException;

    /** Software keys: their private scalar is stored with the credential. */
    SealingKeyStore SOFTWARE = new SealingKeyStore() {
        @Override
        public SealingKey generate() {
            return SealingKey.generate();
        }

        @Override
        public SealingKey restore(String alias, byte[] publicKey, byte[] auth) throws GeneralSecurityException {
            throw new GeneralSecurityException("software sealing keys are stored whole, never by alias");
        }
    };
}
