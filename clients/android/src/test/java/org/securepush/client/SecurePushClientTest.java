package org.securepush.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.json.JSONObject;
import org.junit.jupiter.api.Test;

/** The Android kit against the real server that ops/android-test started (TestServer). */
class SecurePushClientTest {
    private static final class Device {
        final String user = TestServer.newUser();
        final String token = "android-" + UUID.randomUUID();
        final MemoryCredentialStore store = new MemoryCredentialStore();
        final SecurePushClient client = new SecurePushClient(TestServer.URL, store);

        Device register() throws Exception {
            client.register(DeviceRegistration.of("simulated", token), TestServer.userToken(user));
            return this;
        }
    }

    @Test
    void sealedFcmPushOpensOnTheDeviceAndTheFetchMarksItRead() throws Exception {
        Device device = new Device().register();
        assertNotNull(device.store.load().sealingKey(), "registration sends and keeps a sealing key");
        String id = TestServer.enqueue(device.user, "{\"title\":\"Card payment\",\"body\":\"12.40 at Bakery\"}",
                "{\"title\":\"Card payment\",\"body\":\"12.40 at Bakery\"}", null);

        JSONObject recorded = TestServer.recordedPush(id, device.token);
        assertTrue(recorded.getString("path").contains("/messages:send"), "the dispatcher built an FCM request: " + recorded.getString("path"));
        assertFalse(recorded.getString("body").contains("Bakery"), "the push carries no preview in the clear");
        Map<String, String> data = TestServer.fcmData(recorded);
        PushMessage message = PushMessage.fromFcmData(data);
        assertNotNull(message);
        assertEquals(PushMessage.Kind.SEALED, message.kind());
        assertEquals(id, message.notificationId());
        SealedPreview preview = device.client.openSealed(message);
        assertEquals("Card payment", preview.title());
        assertEquals("12.40 at Bakery", preview.body());

        FetchResult fetched = device.client.fetch(id);
        assertEquals(FetchResult.Status.FOUND, fetched.status());
        assertEquals("Card payment", fetched.notification().title());
        assertNotNull(fetched.notification().readAt(), "the fetch marked it read");
    }

    @Test
    void aSealedPushToAnFcmDeviceThroughTheRealFcmProviderOpensOnTheDevice() throws Exception {
        Device device = new Device();
        String fcmToken = "android-fcm:" + UUID.randomUUID();
        device.client.register(DeviceRegistration.fcm(fcmToken), TestServer.userToken(device.user));
        String id = TestServer.enqueue(device.user, "{\"title\":\"Transfer\",\"body\":\"500.00 to Ann\"}", "{\"title\":\"Transfer\",\"body\":\"500.00 to Ann\"}", null);
        JSONObject request = TestServer.fcmRequest(id, fcmToken);
        assertEquals("/v1/projects/android-test/messages:send", request.getString("path"));
        assertEquals("Bearer stand-in-token", request.getString("authorization"), "the provider exchanged its service-account JWT for a token");
        assertEquals("null", request.getString("traceparent"), "no trace header travels to Google");
        assertFalse(request.getString("body").contains("Ann"), "nothing in the clear");
        PushMessage message = PushMessage.fromFcmData(TestServer.fcmData(request));
        assertEquals(PushMessage.Kind.SEALED, message.kind());
        SealedPreview preview = device.client.openSealed(message);
        assertEquals("Transfer", preview.title());
        assertEquals("500.00 to Ann", preview.body());
        assertEquals(FetchResult.Status.FOUND, device.client.fetch(id).status());
    }

    @Test
    void anotherKeyOrAnAlteredRecordDoesNotOpen() throws Exception {
        Device device = new Device().register();
        String id = TestServer.enqueue(device.user, "{\"title\":\"x\"}", "{\"title\":\"secret\"}", null);
        PushMessage message = PushMessage.fromFcmData(TestServer.fcmData(TestServer.recordedPush(id, device.token)));
        SealedPushException wrongKey = assertThrows(SealedPushException.class, () -> message.sealed().open(SealingKey.generate()));
        assertEquals(SealedPushException.Reason.CANNOT_DECRYPT, wrongKey.reason());
        Map<String, String> data = TestServer.fcmData(TestServer.recordedPush(id, device.token));
        byte[] record = Base64Url.decode(data.get("secureSealed"));
        record[record.length - 1] ^= 1;
        data.put("secureSealed", Base64Url.encode(record));
        PushMessage altered = PushMessage.fromFcmData(data);
        assertThrows(SealedPushException.class, () -> device.client.openSealed(altered));
        data.put("secureId", UUID.randomUUID().toString());
        data.put("secureSealed", TestServer.fcmData(TestServer.recordedPush(id, device.token)).get("secureSealed"));
        SealedPushException mismatch = assertThrows(SealedPushException.class, () -> device.client.openSealed(PushMessage.fromFcmData(data)));
        assertEquals(SealedPushException.Reason.ID_MISMATCH, mismatch.reason());
    }

    @Test
    void batchFetchAndCatchUp() throws Exception {
        Device device = new Device().register();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 3; i++) ids.add(TestServer.enqueue(device.user, "{\"title\":\"n" + i + "\"}", null, null));
        String unknown = UUID.randomUUID().toString();
        Map<String, FetchedNotification> batch = device.client.fetch(Arrays.asList(ids.get(0), unknown));
        assertEquals("n0", batch.get(ids.get(0)).title());
        assertTrue(batch.containsKey(unknown));
        assertNull(batch.get(unknown), "an unknown id comes back without content, not as an error");

        List<FetchedNotification> unread = device.client.catchUp(50);
        assertEquals(Arrays.asList(ids.get(2), ids.get(1)), ids(unread), "catch-up returns the unread ones, newest first");
        assertTrue(device.client.catchUp(50).isEmpty(), "and marked them read");
    }

    @Test
    void anotherUsersNotificationIsNotFound() throws Exception {
        Device alice = new Device().register();
        Device mallory = new Device().register();
        String id = TestServer.enqueue(alice.user, "{\"title\":\"private\"}", null, null);
        assertEquals(FetchResult.Status.NOT_FOUND, mallory.client.fetch(id).status());
        assertEquals(FetchResult.Status.NOT_FOUND, mallory.client.fetch(UUID.randomUUID().toString()).status());
        assertEquals(FetchResult.Status.FOUND, alice.client.fetch(id).status());
    }

    @Test
    void rotationReplacesTheSecretAndTheSealingKey() throws Exception {
        Device device = new Device().register();
        DeviceCredential before = device.store.load();
        DeviceCredential after = device.client.rotate();
        assertEquals(before.deviceId(), after.deviceId());
        assertNotEquals(before.secret(), after.secret());
        assertNotNull(after.sealingKey());
        assertNotEquals(before.sealingKey().publicKeyBase64Url(), after.sealingKey().publicKeyBase64Url());
        String id = TestServer.enqueue(device.user, "{\"title\":\"after\"}", "{\"title\":\"sealed after rotation\"}", null);
        PushMessage message = PushMessage.fromFcmData(TestServer.fcmData(TestServer.recordedPush(id, device.token)));
        assertEquals("sealed after rotation", device.client.openSealed(message).title(), "sealed to the new key");
        MemoryCredentialStore old = new MemoryCredentialStore();
        old.save(before);
        assertEquals(FetchResult.Status.UNAUTHORIZED, new SecurePushClient(TestServer.URL, old).fetch(id).status(), "the old secret stopped working");
        assertEquals(FetchResult.Status.FOUND, device.client.fetch(id).status());
    }

    @Test
    void aNewPushTokenNeedsOnlyTheDeviceCredential() throws Exception {
        Device device = new Device().register();
        String newToken = "android-refreshed-" + UUID.randomUUID();
        device.client.updatePushToken(DeviceRegistration.of("simulated", newToken));
        String id = TestServer.enqueue(device.user, "{\"title\":\"to the new token\"}", null, null);
        JSONObject recorded = TestServer.recordedPush(id, newToken);
        assertEquals(id, PushMessage.fromFcmData(TestServer.fcmData(recorded)).notificationId());
    }

    @Test
    void quietHoursAndCategories() throws Exception {
        Device device = new Device().register();
        assertNull(device.client.quietHours());
        device.client.setQuietHours(new SecurePushClient.QuietHours("Europe/Zurich", "22:00", "07:00"));
        SecurePushClient.QuietHours hours = device.client.quietHours();
        assertEquals("Europe/Zurich", hours.timeZone);
        assertEquals("22:00", hours.start);
        device.client.clearQuietHours();
        assertNull(device.client.quietHours());

        TestServer.enqueue(device.user, "{\"title\":\"statement\"}", null, "statements");
        device.client.setCategory("statements", true);
        boolean muted = false;
        for (SecurePushClient.Category category : device.client.categories()) {
            if (category.name.equals("statements")) muted = category.muted;
        }
        assertTrue(muted, "the category is listed as muted");
    }

    @Test
    void throttledFetchesWaitForRetryAfterAndSucceed() throws Exception {
        // ops/android-test runs the API with SECUREPUSH_DEVICE_READ_RATE=2 and a burst of 3: the fourth fetch in
        // a row is answered 429 with Retry-After, which the client waits for within its deadline.
        Device device = new Device().register();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 6; i++) ids.add(TestServer.enqueue(device.user, "{\"title\":\"t" + i + "\"}", null, null));
        long start = System.nanoTime();
        for (String id : ids) assertEquals(FetchResult.Status.FOUND, device.client.fetch(id).status(), "fetch " + id);
        assertTrue(System.nanoTime() - start >= 900_000_000L, "the client waited out the throttle instead of failing");
    }

    @Test
    void unregisterForgetsTheCredential() throws Exception {
        Device device = new Device().register();
        DeviceCredential credential = device.store.load();
        device.client.unregister();
        assertNull(device.store.load());
        MemoryCredentialStore old = new MemoryCredentialStore();
        old.save(credential);
        SecurePushException refused = assertThrows(SecurePushException.class, () -> new SecurePushClient(TestServer.URL, old).catchUp(10));
        assertEquals(401, refused.status());
        assertFalse(credential.toString().contains(credential.secret()), "a credential's text never shows its secret");
    }

    private static List<String> ids(List<FetchedNotification> notifications) {
        List<String> out = new ArrayList<>();
        for (FetchedNotification notification : notifications) out.add(notification.id());
        return out;
    }
}
