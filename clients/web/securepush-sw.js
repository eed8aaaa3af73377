/*
 * SecurePush Web kit: the service worker. A push carries only a notification id (in a Declarative
 * Web Push message or a plain data message); this worker fetches the payload from the SecurePush
 * API with the device credential, under a deadline, and shows it. Every push ends in a shown
 * notification (browsers require it): when the fetch fails the generic text is shown instead.
 * A `clear` push closes the notifications it names (read on another device).
 *
 * Register it from the page with securepush.js; it imports securepush-store.js from its own folder.
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

/** The id list of a clear: an array or a comma-separated string of ids; invalid entries are dropped. */
function clearIDs(value) {
  const list = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : [];
  return list.map((id) => String(id).trim()).filter((id) => ID_PATTERN.test(id));
}

/**
 * What a push asks for: `{kind: 'notify', id, fallback}`, `{kind: 'clear', ids}`, or `null` when it
 * is not a SecurePush message. Reads the Declarative Web Push form (`web_push: 8030`, the id in
 * `notification.data.secureId`) and a plain JSON data message (`secureId`, `secureClear`).
 */
function parsePush(event) {
  let message = null;
  try {
    message = event.data ? event.data.json() : null;
  } catch (error) {
    const text = event.data ? event.data.text().trim() : '';
    return ID_PATTERN.test(text) ? { kind: 'notify', id: text, fallback: {} } : null;
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
  const fallback = {};
  if (declared) {
    if (typeof declared.title === 'string') fallback.title = declared.title;
    if (typeof declared.body === 'string') fallback.body = declared.body;
    if (typeof declared.navigate === 'string') fallback.navigate = declared.navigate;
  }
  return { kind: 'notify', id, fallback };
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

/**
 * Fetches a notification with the device credential. Retries network errors, timeouts and 5xx
 * (with jitter) within the overall deadline; never retries 401/403/404/410.
 * Resolves to `{status: 'found', notification}` or `{status: 'gone' | 'not_found' | 'unauthorized'
 * | 'unregistered' | 'unavailable'}`.
 */
async function fetchNotification(id, settings) {
  const device = await SecurePushStore.get('device');
  if (!device) return { status: 'unregistered' };
  const deadline = Date.now() + settings.deadlineMs;
  const url = new URL('v1/notifications/' + encodeURIComponent(id), device.apiBase);
  for (let attempt = 1; ; attempt += 1) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return { status: 'unavailable' };
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), Math.min(settings.requestTimeoutMs, remaining));
    try {
      const response = await fetch(url, {
        headers: { Authorization: 'Bearer ' + device.deviceId + '.' + device.secret, Accept: 'application/json' },
        cache: 'no-store',
        credentials: 'omit',
        redirect: 'error',
        signal: controller.signal,
      });
      if (response.ok) return { status: 'found', notification: await response.json() };
      if (response.status === 404) return { status: 'not_found' };
      if (response.status === 410) return { status: 'gone' };
      if (response.status === 401 || response.status === 403) return { status: 'unauthorized' };
      if (response.status < 500 && response.status !== 408 && response.status !== 429) return { status: 'unavailable' };
    } catch (error) {
      // A network error or the request timeout: retried below while the deadline allows.
    } finally {
      clearTimeout(timer);
    }
    if (attempt >= settings.maxAttempts) return { status: 'unavailable' };
    const backoff = Math.min(4000, 250 * 2 ** attempt) * (0.5 + Math.random() / 2);
    await sleep(Math.min(backoff, Math.max(0, deadline - Date.now())));
  }
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

async function showNotification(push) {
  const options = await settings();
  const result = await fetchNotification(push.id, options);
  const payload = result.status === 'found' && result.notification && typeof result.notification.payload === 'object'
    ? result.notification.payload || {}
    : {};
  const found = result.status === 'found';
  const title = found ? text(payload.title, text(push.fallback.title, options.title)) : text(push.fallback.title, options.title);
  const body = found ? text(payload.body, '') : text(push.fallback.body, options.body);
  await self.registration.showNotification(title, {
    body,
    tag: push.id,
    requireInteraction: options.requireInteraction === true,
    data: { secureId: push.id, url: sameOriginURL(push.fallback.navigate || options.openURL) },
  });
  await tell({ event: found ? 'shown' : 'fallback', id: push.id, status: result.status, title });
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

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('push', (event) => {
  const push = parsePush(event);
  if (!push) return;
  event.waitUntil(push.kind === 'clear' ? clearNotifications(push.ids) : showNotification(push));
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
