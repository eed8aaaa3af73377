package org.securepush.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.interfaces.ECPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import javax.crypto.KeyAgreement;
import org.json.JSONObject;
import org.junit.jupiter.api.Test;

/**
 * A sealing key whose private half stays in its store (as the Android Keystore keeps it, {@code KeystoreSealingKeys}):
 * here a store that holds JCA private keys by alias and only ever agrees with them.
 */
class HeldKeyTest {
    /** Private keys by alias, never exported. */
    private static final class HoldingStore implements SealingKeyStore {
        final Map<String, PrivateKey> held = new HashMap<>();

        @Override
        public SealingKey generate() throws GeneralSecurityException {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"));
            KeyPair pair = generator.generateKeyPair();
            String alias = "held." + UUID.randomUUID();
            held.put(alias, pair.getPrivate());
            byte[] auth = new byte[16];
            new SecureRandom().nextBytes(auth);
            return SealingKey.held(alias, SealingKey.uncompressed((ECPublicKey) pair.getPublic()), auth, agreement(alias));
        }

        @Override
        public SealingKey restore(String alias, byte[] publicKey, byte[] auth) throws GeneralSecurityException {
            if (!held.containsKey(alias)) throw new GeneralSecurityException("not held");
            return SealingKey.held(alias, publicKey, auth, agreement(alias));
        }

        private SealingKey.Agreement agreement(String alias) {
            return sender -> {
                KeyAgreement agreement = KeyAgreement.getInstance("ECDH");
                agreement.init(held.get(alias));
                agreement.doPhase(SealingKey.publicKey(sender), true);
                return agreement.generateSecret();
            };
        }
    }

    @Test
    void aHeldKeyOpensTheRealDispatchersSealedPushAndIsStoredByAliasOnly() throws Exception {
        HoldingStore keys = new HoldingStore();
        MemoryCredentialStore store = new MemoryCredentialStore();
        SecurePushClient client = new SecurePushClient(TestServer.URL, store, new SecurePushClient.Configuration(), keys);
        String user = TestServer.newUser();
        String token = "android-held-" + UUID.randomUUID();
        client.register(DeviceRegistration.of("simulated", token), TestServer.userToken(user));
        DeviceCredential credential = store.load();
        assertNull(credential.sealingKey().privateScalar(), "a held key never hands out its private half");

        JSONObject stored = new JSONObject(credential.toStorageJSON()).getJSONObject("sealing_key");
        assertTrue(stored.has("alias"));
        assertFalse(stored.has("private"), "stored by alias, without the private key");
        DeviceCredential restored = DeviceCredential.fromStorageJSON(credential.toStorageJSON(), keys);

        String id = TestServer.enqueue(user, "{\"title\":\"x\"}", "{\"title\":\"Held key\",\"body\":\"opened in its store\"}", null);
        PushMessage message = PushMessage.fromFcmData(TestServer.fcmData(TestServer.recordedPush(id, token)));
        assertEquals("Held key", message.sealed().open(restored.sealingKey()).title());
        assertNull(DeviceCredential.fromStorageJSON(credential.toStorageJSON(), new HoldingStore()).sealingKey(),
                "on another phone the held key is gone: the credential loads without it, and the app fetches by id");
    }
}
