package org.securepush.client;

import java.io.UnsupportedEncodingException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLEncoder;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.json.JSONArray;
import org.json.JSONException;
import org.json.JSONObject;

/**
 * The device side of SecurePush on Android: turns an id-only push into content with the device's own
 * credential, as the Swift client does on Apple platforms. Depends on the Android platform alone
 * ({@code HttpURLConnection}, {@code org.json}, {@code javax.crypto}). Every call blocks (run it from a
 * WorkManager worker or another background thread), runs under an overall deadline (default 25 s) with a
 * timeout per request (8 s), and retries only what retrying can fix (network errors, 408, 429 and 5xx, after
 * the server's {@code Retry-After}).
 */
public final class SecurePushClient {
    /** Deadlines and retries. */
    public static final class Configuration {
        /** The most one call may take, retries included. */
        public long deadlineMillis = 25_000;
        /** The most one HTTP request may take. */
        public long requestTimeoutMillis = 8_000;
        /** Attempts per call. */
        public int maxAttempts = 4;
    }

    /** A user's category and whether it is muted. */
    public static final class Category {
        public final String name;
        public final boolean muted;

        Category(String name, boolean muted) {
            this.name = name;
            this.muted = muted;
        }
    }

    /** The user's quiet hours: {@code start} and {@code end} as {@code HH:MM} in an IANA time zone. */
    public static final class QuietHours {
        public final String timeZone;
        public final String start;
        public final String end;

        public QuietHours(String timeZone, String start, String end) {
            this.timeZone = timeZone;
            this.start = start;
            this.end = end;
        }
    }

    private final String baseURL;
    private final CredentialStore credentials;
    private final HttpRequester requester;
    private final SealingKeyStore sealingKeys;

    /** A client of the API at {@code baseURL} ({@code https://push.example.com/}). */
    public SecurePushClient(String baseURL, CredentialStore credentials) {
        this(baseURL, credentials, new Configuration());
    }

    public SecurePushClient(String baseURL, CredentialStore credentials, Configuration configuration) {
        this(baseURL, credentials, configuration, SealingKeyStore.SOFTWARE);
    }

    /** A client whose sealing keys come from {@code sealingKeys} (on Android 12+, {@code KeystoreSealingKeys}). */
    public SecurePushClient(String baseURL, CredentialStore credentials, Configuration configuration, SealingKeyStore sealingKeys) {
        this.baseURL = baseURL.endsWith("/") ? baseURL : baseURL + "/";
        this.credentials = credentials;
        this.requester = new HttpRequester(configuration);
        this.sealingKeys = sealingKeys;
    }

    // Reading

    /** Fetches one notification's content (the server marks it read). Never throws: the result says what happened. */
    public FetchResult fetch(String id) {
        DeviceCredential credential;
        try {
            credential = credentials.load();
        } catch (Exception e) {
            credential = null;
        }
        if (credential == null) return new FetchResult(FetchResult.Status.UNAUTHORIZED, null, null);
        String canonical = PushMessage.uuid(id);
        if (canonical == null) return new FetchResult(FetchResult.Status.NOT_FOUND, null, null);
        HttpRequester.Answer answer;
        try {
            answer = requester.send(url("v1/notifications/" + canonical), "GET", null, credential.bearer());
        } catch (SecurePushException e) {
            return new FetchResult(FetchResult.Status.UNAVAILABLE, null, e.getMessage());
        }
        switch (answer.status) {
            case 200:
                try {
                    return new FetchResult(FetchResult.Status.FOUND, new FetchedNotification(new JSONObject(answer.body)), null);
                } catch (JSONException e) {
                    return new FetchResult(FetchResult.Status.UNAVAILABLE, null, "the server's answer is not a notification");
                }
            case 404:
                return new FetchResult(FetchResult.Status.NOT_FOUND, null, null);
            case 410:
                return new FetchResult(FetchResult.Status.GONE, null, null);
            case 401:
            case 403:
                return new FetchResult(FetchResult.Status.UNAUTHORIZED, null, null);
            default:
                return new FetchResult(FetchResult.Status.UNAVAILABLE, null, "HTTP " + answer.status);
        }
    }

    /**
     * Fetches up to 50 notifications in one round trip ({@code POST /v1/notifications/fetch}). Returns every id
     * asked for, in order: the notification, or {@code null} for one that is gone or not found.
     */
    public Map<String, FetchedNotification> fetch(Collection<String> ids) throws SecurePushException {
        JSONArray list = new JSONArray();
        for (String id : ids) list.put(id.toLowerCase(java.util.Locale.ROOT));
        JSONObject answer = call("v1/notifications/fetch", "POST", object("ids", list), bearer());
        Map<String, FetchedNotification> result = new LinkedHashMap<>();
        for (String id : ids) result.put(id.toLowerCase(java.util.Locale.ROOT), null);
        JSONArray found = answer.optJSONArray("notifications");
        for (int i = 0; found != null && i < found.length(); i++) {
            JSONObject notification = found.optJSONObject(i);
            if (notification != null) result.put(notification.optString("id"), new FetchedNotification(notification));
        }
        return result;
    }

    /**
     * Unread notifications with their content (newest first), each marked read: what the app shows when it starts, and after
     * {@code onDeletedMessages} ({@code GET /v1/notifications?unread=true&include=payload}).
     */
    public List<FetchedNotification> catchUp(int limit) throws SecurePushException {
        JSONObject page = call("v1/notifications?unread=true&include=payload&limit=" + Math.max(1, Math.min(limit, 100)), "GET", null, bearer());
        JSONArray items = page.optJSONArray("notifications");
        List<FetchedNotification> out = new ArrayList<>();
        for (int i = 0; items != null && i < items.length(); i++) {
            JSONObject item = items.optJSONObject(i);
            if (item != null) out.add(new FetchedNotification(item));
        }
        return Collections.unmodifiableList(out);
    }

    // The device's lifecycle

    /**
     * Registers this device for the user of {@code userToken} and stores the new credential, with a new
     * {@link SealingKey} sent as {@code sealing_key} so the server can seal previews to it.
     */
    public DeviceCredential register(DeviceRegistration registration, String userToken) throws SecurePushException {
        return register(registration, userToken, null);
    }

    /**
     * Registers a UnifiedPush (or Web Push) device: its subscription key encrypts every message, so it is stored as
     * the credential's key (to open messages with {@link WebPushMessage#open}) and no separate sealing key is sent.
     */
    public DeviceCredential register(DeviceRegistration registration, String userToken, SealingKey subscriptionKey) throws SecurePushException {
        JSONObject body;
        SealingKey key;
        try {
            body = new JSONObject(registration.fields.toString());
            if (registration.sealsItsOwnMessage()) {
                key = subscriptionKey;
            } else {
                key = newSealingKey();
                body.put("sealing_key", sealingKeyJSON(key));
            }
        } catch (JSONException e) {
            throw new IllegalArgumentException(e);
        }
        JSONObject created = call("v1/devices", "POST", body, "Bearer " + userToken);
        boolean sealing = registration.sealsItsOwnMessage() || created.optBoolean("sealing", true);
        return store(new DeviceCredential(
                required(created, "device_id"), required(created, "device_secret"), sealing ? key : null, registration.sealsItsOwnMessage()));
    }

    /** Replaces the device's secret (the old one stops working at once) and its sealing key, and stores them. */
    public DeviceCredential rotate() throws SecurePushException {
        DeviceCredential current = credential();
        if (current.isSubscriptionKey()) {
            // The subscription's key belongs to the push address, not to the credential: it stays.
            JSONObject created = call("v1/devices/current/rotate", "POST", null, current.bearer());
            return store(new DeviceCredential(required(created, "device_id"), required(created, "device_secret"), current.sealingKey(), true));
        }
        SealingKey key = current.sealingKey() == null ? null : newSealingKey();
        JSONObject body = key == null ? null : object("sealing_key", sealingKeyJSON(key));
        JSONObject created = call("v1/devices/current/rotate", "POST", body, current.bearer());
        SealingKey kept = created.has("sealing") && !created.optBoolean("sealing") ? null : key;
        return store(new DeviceCredential(required(created, "device_id"), required(created, "device_secret"), kept));
    }

    /** Gives the device a new sealing key ({@code PUT /v1/devices/current/sealing-key}) and stores it. */
    public SealingKey setSealingKey() throws SecurePushException {
        DeviceCredential current = credential();
        SealingKey key = newSealingKey();
        call("v1/devices/current/sealing-key", "PUT", sealingKeyJSON(key), current.bearer());
        store(current.withSealingKey(key));
        return key;
    }

    /** Removes the device's sealing key: its pushes are id-only again. */
    public void clearSealingKey() throws SecurePushException {
        DeviceCredential current = credential();
        call("v1/devices/current/sealing-key", "DELETE", null, current.bearer());
        store(current.withSealingKey(null));
    }

    /** Opens a sealed push with the stored sealing key, without the network. */
    public SealedPreview openSealed(PushMessage message) throws SealedPushException {
        if (message == null || message.kind() != PushMessage.Kind.SEALED) throw new SealedPushException(SealedPushException.Reason.NOT_SEALED);
        DeviceCredential credential;
        try {
            credential = credentials.load();
        } catch (Exception e) {
            credential = null;
        }
        if (credential == null || credential.sealingKey() == null) throw new SealedPushException(SealedPushException.Reason.NO_SEALING_KEY);
        return message.sealed().open(credential.sealingKey());
    }

    /**
     * Replaces this device's push address with the credential alone, no user token: call it from
     * {@code FirebaseMessagingService.onNewToken}. The device keeps its id, secret and sealing key.
     */
    public void updatePushToken(DeviceRegistration address) throws SecurePushException {
        call("v1/devices/current/token", "PUT", address.fields, bearer());
    }

    /** Unregisters the device and deletes the stored credential. */
    public void unregister() throws SecurePushException {
        call("v1/devices/current", "DELETE", null, bearer());
        try {
            credentials.delete();
        } catch (Exception ignored) {
            // The server no longer knows the credential; a stale copy is harmless.
        }
    }

    // What the user chooses (shared by all their devices)

    /** The user's quiet hours, or {@code null}. */
    public QuietHours quietHours() throws SecurePushException {
        JSONObject hours = call("v1/quiet-hours", "GET", null, bearer()).optJSONObject("quiet_hours");
        return hours == null ? null : new QuietHours(hours.optString("time_zone"), hours.optString("start"), hours.optString("end"));
    }

    public void setQuietHours(QuietHours hours) throws SecurePushException {
        JSONObject body = new JSONObject();
        try {
            body.put("time_zone", hours.timeZone).put("start", hours.start).put("end", hours.end);
        } catch (JSONException e) {
            throw new IllegalArgumentException(e);
        }
        call("v1/quiet-hours", "PUT", body, bearer());
    }

    public void clearQuietHours() throws SecurePushException {
        call("v1/quiet-hours", "DELETE", null, bearer());
    }

    /** The user's categories and whether each is muted. */
    public List<Category> categories() throws SecurePushException {
        JSONArray list = call("v1/categories", "GET", null, bearer()).optJSONArray("categories");
        List<Category> out = new ArrayList<>();
        for (int i = 0; list != null && i < list.length(); i++) {
            JSONObject category = list.optJSONObject(i);
            if (category == null) continue;
            out.add(new Category(category.optString("name"), category.optBoolean("muted")));
        }
        return Collections.unmodifiableList(out);
    }

    /** Mutes or unmutes a category for the user: a muted one is stored and listed, never pushed. */
    public void setCategory(String name, boolean muted) throws SecurePushException {
        String escaped;
        try {
            escaped = URLEncoder.encode(name, "UTF-8").replace("+", "%20");
        } catch (UnsupportedEncodingException e) {
            throw new IllegalStateException(e);
        }
        JSONObject body = new JSONObject();
        try {
            body.put("muted", muted);
        } catch (JSONException e) {
            throw new IllegalArgumentException(e);
        }
        call("v1/categories/" + escaped, "PUT", body, bearer());
    }

    // Plumbing

    private SealingKey newSealingKey() throws SecurePushException {
        try {
            return sealingKeys.generate();
        } catch (java.security.GeneralSecurityException e) {
            throw new SecurePushException(0, "sealing_key", "no sealing key could be made: " + e.getClass().getSimpleName());
        }
    }

    private DeviceCredential credential() throws SecurePushException {
        DeviceCredential credential;
        try {
            credential = credentials.load();
        } catch (Exception e) {
            throw new SecurePushException(0, "not_registered", "the credential store cannot be read");
        }
        if (credential == null) throw new SecurePushException(0, "not_registered", "this device is not registered");
        return credential;
    }

    private String bearer() throws SecurePushException {
        return credential().bearer();
    }

    private DeviceCredential store(DeviceCredential credential) throws SecurePushException {
        try {
            credentials.save(credential);
        } catch (Exception e) {
            throw new SecurePushException(0, "credential_store", "the credential could not be stored");
        }
        return credential;
    }

    private URL url(String path) throws SecurePushException {
        try {
            return new URL(baseURL + path);
        } catch (MalformedURLException e) {
            throw new SecurePushException(0, "invalid_url", "the base URL is not a URL");
        }
    }

    /** One call: the answer's JSON object (empty for an empty body), or the server's refusal as an exception. */
    private JSONObject call(String path, String method, JSONObject body, String authorization) throws SecurePushException {
        HttpRequester.Answer answer = requester.send(url(path), method, body == null ? null : body.toString(), authorization);
        JSONObject json;
        try {
            json = answer.body.isEmpty() ? new JSONObject() : new JSONObject(answer.body);
        } catch (JSONException e) {
            json = new JSONObject();
        }
        if (answer.status >= 200 && answer.status < 300) return json;
        JSONObject error = json.optJSONObject("error");
        throw new SecurePushException(
                answer.status, error == null ? "http_" + answer.status : error.optString("code"), error == null ? "HTTP " + answer.status : error.optString("message"));
    }

    private static String required(JSONObject answer, String key) throws SecurePushException {
        String value = answer.optString(key, "");
        if (value.isEmpty()) throw new SecurePushException(0, "invalid_answer", "the server's answer has no " + key);
        return value;
    }

    private static JSONObject sealingKeyJSON(SealingKey key) {
        JSONObject json = new JSONObject();
        try {
            return json.put("p256dh", key.publicKeyBase64Url()).put("auth", key.authBase64Url());
        } catch (JSONException e) {
            throw new IllegalStateException(e);
        }
    }

    private static JSONObject object(String key, Object value) {
        try {
            return new JSONObject().put(key, value);
        } catch (JSONException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
