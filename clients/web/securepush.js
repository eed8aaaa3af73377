/*
 * SecurePush Web kit: the page's half. Registers the service worker (securepush-sw.js), subscribes
 * with the Push API using the server's VAPID key, registers the subscription as a SecurePush device
 * with the user's token, keeps the device credential in IndexedDB (securepush-store.js), catches up
 * with the unread listing, and unregisters.
 *
 *   <script src="securepush-store.js"></script>
 *   <script src="securepush.js"></script>
 *   await SecurePush.register({ apiBase: 'https://push.example.com/', userToken });
 *   const unread = await SecurePush.catchUp();
 *
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
      const device = { apiBase: apiURL(apiBase, '').href, deviceId: created.device_id, secret: created.device_secret };
      await SecurePushStore.put('device', device);
      await SecurePushStore.put('settings', Object.assign({}, settings || {}));
      return { deviceId: device.deviceId, apiBase: device.apiBase };
    },

    /** This browser's device (`{deviceId, apiBase}`, never the secret), or `null`. */
    async device() {
      const device = await SecurePushStore.get('device');
      return device ? { deviceId: device.deviceId, apiBase: device.apiBase } : null;
    },

    /** Unread notifications with their payloads, each marked read (`GET /v1/notifications?unread=true&include=payload`). */
    async catchUp({ limit = 50 } = {}) {
      const device = await credential();
      const page = await call(device.apiBase, 'v1/notifications?unread=true&include=payload&limit=' + encodeURIComponent(limit), {
        bearer: device.deviceId + '.' + device.secret,
      });
      return page.notifications;
    },

    /** Fetches one notification's payload (marks it read). */
    async fetch(id) {
      const device = await credential();
      return call(device.apiBase, 'v1/notifications/' + encodeURIComponent(id), { bearer: device.deviceId + '.' + device.secret });
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
