package org.securepush.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** What a credential store keeps, without the network. */
class DeviceCredentialTest {
    @Test
    void storageJsonRoundTripsTheSealingKey() {
        SealingKey key = SealingKey.generate();
        DeviceCredential credential = new DeviceCredential("7d1c8a3e-0000-4000-8000-000000000001", "s3cret", key);
        DeviceCredential back = DeviceCredential.fromStorageJSON(credential.toStorageJSON());
        assertEquals(credential.deviceId(), back.deviceId());
        assertEquals("s3cret", back.secret());
        assertArrayEquals(key.privateScalar(), back.sealingKey().privateScalar());
        assertEquals(key.publicKeyBase64Url(), back.sealingKey().publicKeyBase64Url());
        assertNull(DeviceCredential.fromStorageJSON("{\"device_id\":\"x\"}"), "no secret: not a credential");
        assertNull(DeviceCredential.fromStorageJSON("not json"));
    }
}
