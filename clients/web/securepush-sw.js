/*
 * SecurePush Web kit: the service worker. A push carries only a notification id (in a Declarative
 * Web Push message or a plain data message); this worker fetches the payload from the SecurePush
 * API with the device credential, under a deadline, and shows it. Every push ends in a shown
 * notification (browsers require it): when the fetch fails the generic text is shown instead.
 * A `clear` push closes the notifications it names (read on another device). Notifications that share
 * a collapse key replace each other (tag = the push's opaque collapse digest, else the id); `passive`
 * ones are shown silently. When the browser replaces the push subscription (`pushsubscriptionchange`)
 * the worker hands the new address to the API with the device credential (no user token needed).
 *
 * Sealed previews: when the producer let a short preview travel (and the server's
 * SECUREPUSH_SEALED_PREVIEWS is on), the push itself carries it (`notification.data.preview`, inside
 * the encrypted Web Push message). The worker then shows the preview's `title` and `body` at once,
 * without waiting for the API, and fetches the notification in the background only to mark it read;
 * a failed fetch changes nothing on screen (the real preview stays; it never turns into the generic text).
 *
 * Register it from the page with securepush.js; it imports securepush-store.js from its own folder.
 * The API may be on another origin (it must list this origin in SECUREPUSH_CORS_ORIGINS).
 * Plain JavaScript, no dependencies.
 */
'use strict';
importScripts('securepush-store.js');

const DEFAULTS = Object.freeze({
  title: 'New notification',
  body: 'Open the app to read it.',
  requestTimeoutMs: 8000,
  deadlineMs: 20000,
  maxAttempts: 3,
  requireInteraction: false,
});

const ID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const COLLAPSE_PATTERN = /^[0-9a-f]{32}$/;
const URGENCIES = new Set(['passive', 'active', 'time_sensitive', 'critical']);

/** The id list of a clear: an array or a comma-separated string of ids; invalid entries are dropped. */
function clearIDs(value) {
  const list = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : [];
  return list.map((id) => String(id).trim()).filter((id) => ID_PATTERN.test(id));
}

/** A preview as the push carries it: a plain JSON object (not an array, not null), else `null`. */
function previewOf(value) {
  return value && typeof value === 'object' && !Array.isArray(value) ? value : null;
}

/**
 * What a push asks for: `{kind: 'notify', id, collapse, urgency, fallback, preview}`, `{kind: 'clear', ids}`,
 * or `null` when it is not a SecurePush message. Reads the Declarative Web Push form
 * (`web_push: 8030`, the id in `notification.data.secureId`, with `urgency`, for a collapse key its
 * digest `collapse`, and for a sealed preview the `preview` object beside it) and a plain JSON data
 * message (`secureId`, `secureClear`). `preview` is `null` when the push carries none.
 */
function parsePush(event) {
  let message = null;
  try {
    message = event.data ? event.data.json() : null;
  } catch (error) {
    const text = event.data ? event.data.text().trim() : '';
    return ID_PATTERN.test(text) ? { kind: 'notify', id: text, collapse: null, urgency: 'active', fallback: {}, preview: null } : null;
  }
  if (!message || typeof message !== 'object') return null;
  const declared = message.web_push === 8030 && message.notification && typeof message.notification === 'object'
    ? message.notification
    : null;
  const data = (declared && declared.data && typeof declared.data === 'object' ? declared.data : null) || message.data || message;
  const clear = clearIDs(data.secureClear !== undefined ? data.secureClear : message.secureClear);
  if (clear.length > 0 || data.kind === 'clear') return { kind: 'clear', ids: clear };
  const id = typeof data.secureId === 'string' ? data.secureId : typeof message.secureId === 'string' ? message.secureId : null;
  if (!id || !ID_PATTERN.test(id)) return null;
  const collapse = typeof data.collapse === 'string' && COLLAPSE_PATTERN.test(data.collapse) ? data.collapse : null;
  const urgency = URGENCIES.has(data.urgency) ? data.urgency : 'active';
  const fallback = {};
  if (declared) {
    if (typeof declared.title === 'string') fallback.title = declared.title;
    if (typeof declared.body === 'string') fallback.body = declared.body;
    if (typeof declared.navigate === 'string') fallback.navigate = declared.navigate;
  }
  // Only the declarative form carries a preview (the server puts it inside the encrypted message).
  const preview = declared && declared.data && typeof declared.data === 'object' ? previewOf(declared.data.preview) : null;
  return { kind: 'notify', id, collapse, urgency, fallback, preview };
}

/** A URL to open on click, only if it is on this worker's own origin; otherwise the scope. */
function sameOriginURL(candidate) {
  const scope = self.registration.scope;
  if (typeof candidate !== 'string' || candidate.length === 0) return scope;
  try {
    const url = new URL(candidate, scope);
    return url.origin === self.location.origin ? url.href : scope;
  } catch (error) {
    return scope;
  }
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function bearer(device) {
  return 'Bearer ' + device.deviceId + '.' + device.secret;
}

/**
 * One API request under the settings' deadline. Retries network errors, timeouts, 408, 429 and 5xx
 * (with jitter) within the overall deadline and `maxAttempts`; returns the last response, or `null`
 * when the API never answered. Never sends cookies: the credential is the bearer header.
 */
async function request(url, init, settings) {
  const deadline = Date.now() + settings.deadlineMs;
  for (let attempt = 1; ; attempt += 1) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return null;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), Math.min(settings.requestTimeoutMs, remaining));
    let response = null;
    try {
      response = await fetch(url, Object.assign({
        mode: 'cors',
        cache: 'no-store',
        credentials: 'omit',
        redirect: 'error',
        signal: controller.signal,
      }, init));
      if (response.status < 500 && response.status !== 408 && response.status !== 429) return response;
    } catch (error) {
      // A network error, a CORS refusal or the request timeout: retried below while the deadline allows.
    } finally {
      clearTimeout(timer);
    }
    if (attempt >= settings.maxAttempts) return response;
    const backoff = Math.min(4000, 250 * 2 ** attempt) * (0.5 + Math.random() / 2);
    await sleep(Math.min(backoff, Math.max(0, deadline - Date.now())));
  }
}

/**
 * Fetches a notification with the device credential; retries as `request` does, never 401/403/404/410.
 * Resolves to `{status: 'found', notification}` or `{status: 'gone' | 'not_found' | 'unauthorized'
 * | 'unregistered' | 'unavailable'}`.
 */
async function fetchNotification(id, settings) {
  const device = await SecurePushStore.get('device');
  if (!device) return { status: 'unregistered' };
  const response = await request(new URL('v1/notifications/' + encodeURIComponent(id), device.apiBase), {
    headers: { Authorization: bearer(device), Accept: 'application/json' },
  }, settings);
  if (!response) return { status: 'unavailable' };
  if (response.ok) {
    try {
      return { status: 'found', notification: await response.json() };
    } catch (error) {
      return { status: 'unavailable' };
    }
  }
  if (response.status === 404) return { status: 'not_found' };
  if (response.status === 410) return { status: 'gone' };
  if (response.status === 401 || response.status === 403) return { status: 'unauthorized' };
  return { status: 'unavailable' };
}

async function tell(event) {
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  for (const client of windows) client.postMessage(Object.assign({ source: 'securepush' }, event));
}

async function settings() {
  const stored = (await SecurePushStore.get('settings')) || {};
  return Object.assign({}, DEFAULTS, stored);
}

function text(value, fallback) {
  return typeof value === 'string' && value.length > 0 ? value.slice(0, 1000) : fallback;
}

/**
 * Shows one notification for a push: `title`/`body` as given, under the push's tag (a collapse key's
 * digest replaces the shown one), silent when passive; then tells the pages what was shown.
 * `report`: what the pages are told besides (event, status, category, preview).
 */
async function present(push, options, { title, body, category, preview }, report) {
  // One shown notification per collapse key: a newer notification replaces the shown one (and alerts
  // again unless passive); a redelivery of the same id replaces it quietly.
  const tag = push.collapse || push.id;
  const silent = push.urgency === 'passive';
  const replaced = push.collapse ? await self.registration.getNotifications({ tag }) : [];
  const renotify = !silent && replaced.some((shown) => !shown.data || shown.data.secureId !== push.id);
  await self.registration.showNotification(title, {
    body,
    tag,
    renotify,
    silent,
    requireInteraction: options.requireInteraction === true,
    data: {
      secureId: push.id,
      collapse: push.collapse,
      urgency: push.urgency,
      category,
      // The whole preview (its other members are the app's), for the page a click opens.
      preview: preview || null,
      url: sameOriginURL(push.fallback.navigate || options.openURL),
    },
  });
  await tell(Object.assign({ id: push.id, title, body, tag, silent, renotify, urgency: push.urgency, category }, report));
}

/**
 * A push that carries a sealed preview: its `title` and `body` (the preview's own strings, else the
 * message's declared text, else the generic text) are shown at once. Then, still inside the push
 * event's waitUntil, the notification is fetched with the device credential so the server marks it
 * read. Whatever the fetch gives, the shown notification stays as it is: on failure the real preview
 * is better than the generic text, and on success showing it again would only flash it. The pages are
 * told the fetch's outcome (`event: 'fetched'`).
 */
async function showPreview(push, options) {
  const preview = push.preview;
  const title = text(preview.title, text(push.fallback.title, options.title));
  const body = text(preview.body, text(push.fallback.body, ''));
  await present(push, options, { title, body, category: null, preview }, { event: 'shown', status: 'preview', preview: true });
  let result;
  try {
    result = await fetchNotification(push.id, options);
  } catch (error) {
    result = { status: 'unavailable' };
  }
  const notification = result.status === 'found' && result.notification && typeof result.notification === 'object'
    ? result.notification
    : {};
  await tell({
    event: 'fetched', id: push.id, status: result.status, preview: true,
    category: typeof notification.category === 'string' ? notification.category : null,
  });
}

async function showNotification(push) {
  const options = await settings();
  if (push.preview) return showPreview(push, options);
  const result = await fetchNotification(push.id, options);
  const notification = result.status === 'found' && result.notification && typeof result.notification === 'object'
    ? result.notification
    : {};
  const payload = notification.payload && typeof notification.payload === 'object' ? notification.payload : {};
  const found = result.status === 'found';
  const title = found ? text(payload.title, text(push.fallback.title, options.title)) : text(push.fallback.title, options.title);
  const body = found ? text(payload.body, '') : text(push.fallback.body, options.body);
  const category = typeof notification.category === 'string' ? notification.category : null;
  return present(push, options, { title, body, category, preview: null },
    { event: found ? 'shown' : 'fallback', status: result.status, preview: false });
}

async function clearNotifications(ids) {
  const wanted = new Set(ids);
  const shown = await self.registration.getNotifications();
  let closed = 0;
  for (const notification of shown) {
    const id = (notification.data && notification.data.secureId) || notification.tag;
    if (wanted.has(id)) {
      notification.close();
      closed += 1;
    }
  }
  await tell({ event: 'cleared', ids, closed });
}

// MARK: a new push address

function base64URLToBytes(text) {
  const padded = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4);
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
}

/** A subscription as `{endpoint, keys: {p256dh, auth}}` (from a PushSubscription or its toJSON()), or null. */
function subscriptionJSON(subscription) {
  if (!subscription) return null;
  const json = typeof subscription.toJSON === 'function' ? subscription.toJSON() : subscription;
  const keys = json && json.keys;
  if (!json || typeof json.endpoint !== 'string' || !keys || typeof keys.p256dh !== 'string' || typeof keys.auth !== 'string') {
    return null;
  }
  return { endpoint: json.endpoint, keys: { p256dh: keys.p256dh, auth: keys.auth } };
}

/** Resolves to `promise`'s value, or to `null` once `ms` have passed (a subscribe that never answers). */
function within(promise, ms) {
  let timer;
  return Promise.race([promise, new Promise((resolve) => { timer = setTimeout(() => resolve(null), ms); })])
    .finally(() => clearTimeout(timer));
}

/**
 * A fresh subscription from the browser's push service: with the old subscription's VAPID key when
 * known, else the server's (`GET /v1/webpush/key`). Null when it cannot be had before the deadline.
 */
async function subscribeAgain(device, oldSubscription, settings) {
  const options = oldSubscription && oldSubscription.options;
  let applicationServerKey = options && options.applicationServerKey ? options.applicationServerKey : null;
  if (!applicationServerKey) {
    const response = await request(new URL('v1/webpush/key', device.apiBase), { headers: { Accept: 'application/json' } }, settings);
    if (!response || !response.ok) return null;
    const key = await response.json().catch(() => null);
    if (!key || typeof key.public_key !== 'string') return null;
    applicationServerKey = base64URLToBytes(key.public_key);
  }
  try {
    return await within(self.registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey }), settings.deadlineMs);
  } catch (error) {
    return null;
  }
}

/**
 * Hands a new push address to the API (`PUT /v1/devices/current/token` with the device credential;
 * the device keeps its id and secret, and its waiting pushes go to the new address), and remembers it.
 *
 * `subscription`: the new subscription (a PushSubscription or `{endpoint, keys}`); without it, the
 * browser's current one, or a fresh one (`resubscribe: true` drops the current one first).
 * `oldSubscription`: the one that was replaced, whose VAPID key a fresh subscription reuses.
 *
 * Resolves to `{status, endpoint?}`: 'updated', 'unregistered' (no device in this browser),
 * 'permission_denied', 'no_subscription' (the browser gave none), 'invalid' (the API refused the
 * address: 400), 'unauthorized' (the credential no longer works: 401/403) or 'unavailable'.
 */
async function renewSubscription({ subscription = null, oldSubscription = null, resubscribe = false } = {}) {
  const device = await SecurePushStore.get('device');
  if (!device) return { status: 'unregistered' };
  const options = await settings();
  const pushManager = self.registration.pushManager;
  let next = subscriptionJSON(subscription);
  if (!next) {
    if ((await pushManager.permissionState({ userVisibleOnly: true })) !== 'granted') return { status: 'permission_denied' };
    const current = await pushManager.getSubscription();
    if (current && resubscribe) {
      oldSubscription = current;
      await current.unsubscribe().catch(() => false);
    } else {
      next = subscriptionJSON(current);
    }
    if (!next) next = subscriptionJSON(await subscribeAgain(device, oldSubscription, options));
    if (!next) return { status: 'no_subscription' };
  }
  const response = await request(new URL('v1/devices/current/token', device.apiBase), {
    method: 'PUT',
    headers: { Authorization: bearer(device), Accept: 'application/json', 'Content-Type': 'application/json' },
    // The registration's form of a Web Push address: the subscription as PushSubscription.toJSON() gives it.
    body: JSON.stringify({ subscription: next }),
  }, options);
  let status = 'unavailable';
  if (response && response.ok) status = 'updated';
  else if (response && response.status === 400) status = 'invalid';
  else if (response && (response.status === 401 || response.status === 403)) status = 'unauthorized';
  if (status === 'updated') {
    // The same device, a new address: keep the record as it is except for the endpoint.
    const stored = await SecurePushStore.get('device');
    if (stored && stored.deviceId === device.deviceId) {
      await SecurePushStore.put('device', Object.assign({}, stored, { endpoint: next.endpoint }));
    }
  }
  const result = { status, endpoint: next.endpoint };
  await tell({ event: 'subscription', status });
  return result;
}

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('push', (event) => {
  const push = parsePush(event);
  if (!push) return;
  event.waitUntil(push.kind === 'clear' ? clearNotifications(push.ids) : showNotification(push));
});

// The browser replaced (or lost) the subscription: register the new one with the device credential.
self.addEventListener('pushsubscriptionchange', (event) => {
  event.waitUntil(renewSubscription({ subscription: event.newSubscription, oldSubscription: event.oldSubscription }));
});

// SecurePush.updateSubscription() on a page of this origin runs the same path and gets its result
// on the message's port.
self.addEventListener('message', (event) => {
  const message = event.data;
  if (!message || message.securepush !== 'renew-subscription' || !event.ports[0]) return;
  const reply = event.ports[0];
  event.waitUntil(
    renewSubscription({ subscription: message.subscription || null, resubscribe: message.resubscribe === true })
      .catch((error) => ({ status: 'failed', message: String(error && error.message) }))
      .then((result) => reply.postMessage(result)),
  );
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const target = sameOriginURL(event.notification.data && event.notification.data.url);
  event.waitUntil(
    (async () => {
      const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
      const open = windows.find((client) => client.url === target);
      if (open) return open.focus();
      return self.clients.openWindow(target);
    })(),
  );
});
