/*
 * SecurePush Web kit: the page's half. Registers the service worker (securepush-sw.js), subscribes
 * with the Push API using the server's VAPID key, registers the subscription as a SecurePush device
 * with the user's token, keeps the device credential in IndexedDB (securepush-store.js), catches up
 * with the unread listing, hands the API a new push address, lists and mutes the user's categories,
 * sets the user's quiet hours, and unregisters.
 *
 *   <script src="securepush-store.js"></script>
 *   <script src="securepush.js"></script>
 *   await SecurePush.register({ apiBase: 'https://push.example.com/', userToken });
 *   const unread = await SecurePush.catchUp();
 *
 * The API may be on another origin than the page: it must then list the page's origin in
 * SECUREPUSH_CORS_ORIGINS. Requests never carry cookies; the credential is a bearer header.
 * Plain JavaScript, no dependencies; `SecurePush` is a global of the page.
 */
(function (global) {
  'use strict';

  /** An API call that did not succeed: `status` is the HTTP status (0 for a network error), `code` the API's error code. */
  class SecurePushError extends Error {
    constructor(status, code, message) {
      super(message || code || 'request failed');
      this.name = 'SecurePushError';
      this.status = status;
      this.code = code;
    }
  }

  function apiURL(apiBase, path) {
    const base = new URL(apiBase, global.location.href);
    if (!base.pathname.endsWith('/')) base.pathname += '/';
    return new URL(path, base);
  }

  async function call(apiBase, path, { method = 'GET', bearer, body } = {}) {
    const headers = { Accept: 'application/json' };
    if (bearer) headers.Authorization = 'Bearer ' + bearer;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response;
    try {
      response = await fetch(apiURL(apiBase, path), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        mode: 'cors',
        cache: 'no-store',
        credentials: 'omit',
        redirect: 'error',
      });
    } catch (error) {
      throw new SecurePushError(0, 'network_error', 'SecurePush is unreachable: ' + error.message);
    }
    if (response.status === 204) return null;
    const json = await response.json().catch(() => null);
    if (!response.ok) {
      const error = json && json.error ? json.error : {};
      throw new SecurePushError(response.status, error.code, error.message);
    }
    return json;
  }

  function base64URLToBytes(text) {
    const padded = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4);
    return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
  }

  async function credential() {
    const device = await SecurePushStore.get('device');
    if (!device) throw new SecurePushError(0, 'not_registered', 'this browser is not registered with SecurePush');
    return device;
  }

  /** A call to the API this browser registered with, as its device. */
  async function deviceCall(path, options = {}) {
    const device = await credential();
    return call(device.apiBase, path, Object.assign({}, options, { bearer: device.deviceId + '.' + device.secret }));
  }

  /** `{endpoint, keys: {p256dh, auth}}` of a PushSubscription or its toJSON(); throws on anything else. */
  function subscriptionJSON(subscription) {
    const json = subscription && typeof subscription.toJSON === 'function' ? subscription.toJSON() : subscription;
    const keys = json && json.keys;
    if (!json || typeof json.endpoint !== 'string' || !keys || typeof keys.p256dh !== 'string' || typeof keys.auth !== 'string') {
      throw new SecurePushError(0, 'invalid_subscription', 'a subscription needs an endpoint and the keys p256dh and auth');
    }
    return { endpoint: json.endpoint, keys: { p256dh: keys.p256dh, auth: keys.auth } };
  }

  /** The statuses of the worker's renewSubscription(), as the errors updateSubscription() throws. */
  const RENEW_ERRORS = {
    unregistered: [0, 'not_registered', 'this browser is not registered with SecurePush'],
    permission_denied: [0, 'permission_denied', 'notifications are not allowed for this site'],
    no_subscription: [0, 'no_subscription', 'the browser gave no push subscription'],
    invalid: [400, 'invalid_device', 'SecurePush refused the new push address'],
    unauthorized: [401, 'unauthorized', 'the device credential no longer works'],
    unavailable: [0, 'network_error', 'SecurePush is unreachable'],
    no_answer: [0, 'worker_unresponsive', 'the service worker did not answer'],
  };
  const WORKER_ANSWER_MS = 90000;

  /** `{"quiet_hours": ...}` or the object itself: the quiet hours an answer carries. */
  function quietHoursOf(answer) {
    return answer && Object.prototype.hasOwnProperty.call(answer, 'quiet_hours') ? answer.quiet_hours : answer;
  }

  const SecurePush = {
    Error: SecurePushError,

    /** Registers the service worker (default `securepush-sw.js` next to the page) and waits until it is active. */
    async installWorker({ serviceWorker = 'securepush-sw.js', scope } = {}) {
      await navigator.serviceWorker.register(serviceWorker, scope ? { scope } : undefined);
      return navigator.serviceWorker.ready;
    },

    /**
     * The whole sign-up: worker, notification permission, Push API subscription with the server's
     * VAPID key (`GET /v1/webpush/key`), and registration of the subscription as a device.
     * `settings` (optional) sets the worker's generic text, timeouts and whether a notification stays
     * until the user acts on it: `{title, body, openURL, requestTimeoutMs, deadlineMs, maxAttempts,
     * requireInteraction}`.
     */
    async register({ apiBase, userToken, serviceWorker, scope, settings } = {}) {
      const registration = await SecurePush.installWorker({ serviceWorker, scope });
      if ((await Notification.requestPermission()) !== 'granted') {
        throw new SecurePushError(0, 'permission_denied', 'notifications are not allowed for this site');
      }
      const key = await call(apiBase, 'v1/webpush/key');
      const subscription = await registration.pushManager.subscribe({
        userVisibleOnly: true,
        applicationServerKey: base64URLToBytes(key.public_key),
      });
      return SecurePush.registerSubscription({ apiBase, userToken, subscription: subscription.toJSON(), settings });
    },

    /**
     * Registers an existing subscription (a `PushSubscription.toJSON()` object, or one from another
     * push service such as a self-hosted one) as this browser's device, and stores the credential.
     */
    async registerSubscription({ apiBase, userToken, subscription, settings } = {}) {
      const created = await call(apiBase, 'v1/devices', {
        method: 'POST',
        bearer: userToken,
        body: { platform: 'webpush', subscription },
      });
      const device = {
        apiBase: apiURL(apiBase, '').href,
        deviceId: created.device_id,
        secret: created.device_secret,
        endpoint: subscription && subscription.endpoint,
      };
      await SecurePushStore.put('device', device);
      await SecurePushStore.put('settings', Object.assign({}, settings || {}));
      return { deviceId: device.deviceId, apiBase: device.apiBase };
    },

    /** This browser's device (`{deviceId, apiBase}`, never the secret), or `null`. */
    async device() {
      const device = await SecurePushStore.get('device');
      return device ? { deviceId: device.deviceId, apiBase: device.apiBase } : null;
    },

    /**
     * Unread notifications with their payloads, each marked read (`GET /v1/notifications?unread=true&include=payload`).
     * Each is the API's object as it is: `{id, payload, preview, category, ...}`, `preview` being the
     * producer's short preview object or `null`.
     */
    async catchUp({ limit = 50 } = {}) {
      const page = await deviceCall('v1/notifications?unread=true&include=payload&limit=' + encodeURIComponent(limit));
      return page.notifications;
    },

    /**
     * Fetches one notification (`{id, payload, preview, category, ...}`, `preview` the producer's short
     * preview object or `null`) and marks it read.
     */
    async fetch(id) {
      return deviceCall('v1/notifications/' + encodeURIComponent(id));
    },

    /**
     * Hands SecurePush this browser's push address again (`PUT /v1/devices/current/token`, with the
     * device credential; the device keeps its id and secret). The service worker does the work, the
     * same code that answers `pushsubscriptionchange`:
     * - `{subscription}`: that subscription (a PushSubscription or `{endpoint, keys: {p256dh, auth}}`,
     *   e.g. from a self-hosted push service);
     * - `{}`: the browser's current subscription, or a new one when it has none (call it on page load
     *   when the subscription may have changed while no worker could report it);
     * - `{resubscribe: true}`: drops the current subscription and subscribes anew.
     * Resolves to `{endpoint}`; throws a SecurePush.Error (`invalid_device` 400, `unauthorized` 401,
     * `network_error`, `permission_denied`, `no_subscription`, `not_registered`).
     */
    async updateSubscription({ subscription, resubscribe = false } = {}) {
      const registration = await navigator.serviceWorker.ready;
      const message = { securepush: 'renew-subscription', resubscribe: resubscribe === true };
      if (subscription !== undefined && subscription !== null) message.subscription = subscriptionJSON(subscription);
      // The worker answers within its own deadlines (a subscribe, a key fetch and the PUT, 20 s each by
      // default); a worker that never answers (an old version without this path) is an error.
      const result = await new Promise((resolve) => {
        const channel = new MessageChannel();
        const timer = setTimeout(() => resolve({ status: 'no_answer' }), WORKER_ANSWER_MS);
        channel.port1.onmessage = (event) => {
          clearTimeout(timer);
          resolve(event.data || {});
        };
        registration.active.postMessage(message, [channel.port2]);
      });
      if (result.status === 'updated') return { endpoint: result.endpoint };
      const [status, code, text] = RENEW_ERRORS[result.status] || [0, 'failed', result.message || 'the worker could not update the subscription'];
      throw new SecurePushError(status, code, text);
    },

    /**
     * The user's categories (those of their live notifications, and the muted ones):
     * `[{name, muted, latest_at}]` from `GET /v1/categories`.
     */
    async categories() {
      return (await deviceCall('v1/categories')).categories;
    },

    /**
     * Mutes (default) or unmutes a category for the user: its notifications are still stored and listed
     * (catchUp) but not pushed, and its pushes still waiting are cancelled. Resolves to `{name, muted}`.
     */
    async setCategoryMuted(name, muted = true) {
      return deviceCall('v1/categories/' + encodeURIComponent(name), { method: 'PUT', body: { muted: muted === true } });
    },

    /** The user's quiet hours, `{time_zone, start, end}`, or `null` (`GET /v1/quiet-hours`). */
    async quietHours() {
      return quietHoursOf(await deviceCall('v1/quiet-hours'));
    },

    /**
     * Sets the user's quiet hours: a daily window of local times (`"22:00"` to `"07:00"` spans midnight)
     * in an IANA time zone, by default this browser's. Pushes of passive and active notifications wait
     * for the window's end; time-sensitive and critical ones are not held. Resolves to
     * `{time_zone, start, end}`.
     */
    async setQuietHours({ start, end, timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone } = {}) {
      return quietHoursOf(await deviceCall('v1/quiet-hours', { method: 'PUT', body: { time_zone: timeZone, start, end } }));
    },

    /** Removes the user's quiet hours; what they held back is pushed at once. */
    async clearQuietHours() {
      await deviceCall('v1/quiet-hours', { method: 'DELETE' });
      return null;
    },

    /** Unregisters the device (its credential stops working), drops the subscription and the stored state. */
    async unregister() {
      const device = await SecurePushStore.get('device');
      if (device) {
        try {
          await call(device.apiBase, 'v1/devices/current', { method: 'DELETE', bearer: device.deviceId + '.' + device.secret });
        } catch (error) {
          if (error.status !== 401) throw error;
        }
      }
      const registration = await navigator.serviceWorker.getRegistration();
      const subscription = registration ? await registration.pushManager.getSubscription() : null;
      if (subscription) await subscription.unsubscribe();
      await SecurePushStore.remove('device');
    },
  };

  global.SecurePush = Object.freeze(SecurePush);
})(self);
