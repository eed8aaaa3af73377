package org.securepush.client;

/** A credential kept in memory only (tests, or an app that registers at every start). */
public final class MemoryCredentialStore implements CredentialStore {
    private DeviceCredential credential;

    @Override
    public synchronized DeviceCredential load() {
        return credential;
    }

    @Override
    public synchronized void save(DeviceCredential credential) {
        this.credential = credential;
    }

    @Override
    public synchronized void delete() {
        credential = null;
    }
}
