package org.securepush.client;

/**
 * Where the device credential is kept. On Android keep it encrypted with a key of the Android Keystore (the
 * {@code KeystoreCredentialStore} adapter does); {@link MemoryCredentialStore} is for tests.
 */
public interface CredentialStore {
    /** The stored credential, or {@code null}. */
    DeviceCredential load() throws Exception;

    void save(DeviceCredential credential) throws Exception;

    void delete() throws Exception;
}
