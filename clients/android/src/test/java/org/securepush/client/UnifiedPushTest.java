package org.securepush.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * UnifiedPush end to end: the real dispatcher sends Web Push (RFC 8291 + VAPID) to a local distributor's endpoint
 * (allowed by SECUREPUSH_UNIFIEDPUSH_ALLOWED_HOSTS), and this kit, an implementation independent of the server's,
 * decrypts the body with the subscription key the app registered.
 */
class UnifiedPushTest {
    @Test
    void theDistributorGetsAnEncryptedIdOnlyMessageThatTheAppOpens() throws Exception {
        try (UnifiedPushStandIn distributor = new UnifiedPushStandIn(System.getenv("SECUREPUSH_TEST_TLS_KEYSTORE"))) {
            String user = TestServer.newUser();
            MemoryCredentialStore store = new MemoryCredentialStore();
            SecurePushClient client = new SecurePushClient(TestServer.URL, store);
            SealingKey subscription = SealingKey.generate();
            String endpoint = distributor.endpoint(UUID.randomUUID().toString());
            client.register(DeviceRegistration.unifiedPush(endpoint, subscription), TestServer.userToken(user), subscription);
            assertTrue(store.load().isSubscriptionKey());

            String id = TestServer.enqueue(user, "{\"title\":\"Card payment\",\"body\":\"12.40 at Bakery\"}",
                    "{\"title\":\"Card payment\",\"body\":\"12.40 at Bakery\"}", null);
            UnifiedPushStandIn.Received message = distributor.next(30);
            assertNotNull(message, "the dispatcher pushed to the distributor's endpoint");
            assertEquals("aes128gcm", message.headers.get("Content-Encoding"));
            String authorization = message.headers.get("Authorization");
            assertTrue(authorization != null && authorization.startsWith("vapid t=") && authorization.contains(", k="), "VAPID: " + authorization);
            assertNotNull(message.headers.get("TTL"));
            assertFalse(new String(message.body, StandardCharsets.ISO_8859_1).contains("Bakery"), "nothing in the clear");

            PushMessage opened = WebPushMessage.open(message.body, store.load().sealingKey());
            assertEquals(PushMessage.Kind.NOTIFICATION, opened.kind());
            assertEquals(id, opened.notificationId());
            String content = new String(SealedPush.decrypt(message.body, subscription), StandardCharsets.UTF_8);
            assertTrue(content.contains("Card payment"), "the preview travels inside the encrypted message: " + content.length() + " bytes");
            assertThrows(SealedPushException.class, () -> WebPushMessage.open(message.body, SealingKey.generate()), "another key cannot open it");

            assertEquals(FetchResult.Status.FOUND, client.fetch(id).status());
            DeviceCredential rotated = client.rotate();
            assertEquals(subscription.publicKeyBase64Url(), rotated.sealingKey().publicKeyBase64Url(), "the subscription's key stays");
        }
    }

    @Test
    void anEndpointOutsideTheAllowlistIsRefused() throws Exception {
        SecurePushClient client = new SecurePushClient(TestServer.URL, new MemoryCredentialStore());
        SealingKey subscription = SealingKey.generate();
        SecurePushException refused = assertThrows(SecurePushException.class, () -> client.register(
                DeviceRegistration.unifiedPush("https://ntfy.sh/up" + UUID.randomUUID(), subscription), TestServer.userToken(TestServer.newUser()),
                subscription));
        assertEquals(400, refused.status());
    }
}
