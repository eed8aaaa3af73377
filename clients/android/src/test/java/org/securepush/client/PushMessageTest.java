package org.securepush.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Parsing what the platforms hand the app, without the network. */
class PushMessageTest {
    private static final String ID = "5b0c5f4e-3f7e-4a47-9d8f-1a2b3c4d5e6f";
    private static final String OTHER = "0b7e2a9c-54d1-4f0e-8c1a-2f3e4d5c6b7a";

    @Test
    void fcmDataMessages() {
        Map<String, String> data = new HashMap<>();
        data.put("secureId", ID.toUpperCase());
        PushMessage message = PushMessage.fromFcmData(data);
        assertEquals(PushMessage.Kind.NOTIFICATION, message.kind());
        assertEquals(ID, message.notificationId());
        data.put("secureSealed", "not-a-record");
        assertEquals(PushMessage.Kind.NOTIFICATION, PushMessage.fromFcmData(data).kind(), "a damaged record still names a notification");
        Map<String, String> clear = new HashMap<>();
        clear.put("secureClear", ID + ", " + OTHER + ",junk");
        assertEquals(Arrays.asList(ID, OTHER), PushMessage.fromFcmData(clear).clearIds());
        assertNull(PushMessage.fromFcmData(new HashMap<String, String>()), "not SecurePush's");
    }

    @Test
    void webPushBodies() {
        String declarative = "{\"web_push\":8030,\"notification\":{\"title\":\"New message\",\"data\":{\"secureId\":\"" + ID + "\"}}}";
        assertEquals(ID, PushMessage.fromWebPushBody(declarative.getBytes(StandardCharsets.UTF_8)).notificationId());
        String clear = "{\"secureClear\":[\"" + ID + "\"]}";
        assertEquals(Arrays.asList(ID), PushMessage.fromWebPushBody(clear.getBytes(StandardCharsets.UTF_8)).clearIds());
        assertNull(PushMessage.fromWebPushBody("not json".getBytes(StandardCharsets.UTF_8)));
    }
}
