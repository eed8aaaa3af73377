/* The SecurePush demo page: drives securepush.js and shows what the service worker did. */
(function () {
  'use strict';
  // The API is this page's origin; `?api=https://push.example.com/` points the demo at another origin
  // (which must list this one in SECUREPUSH_CORS_ORIGINS; the demo served by `securepush serve` may
  // only talk to its own origin).
  const apiBase = (() => {
    const requested = new URLSearchParams(location.search).get('api');
    const url = new URL(requested || '/', location.href);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : new URL('/', location.href).href;
  })();
  const $ = (id) => document.getElementById(id);

  function log(line) {
    const stamp = new Date().toISOString().slice(11, 23);
    $('log').textContent = stamp + '  ' + line + '\n' + $('log').textContent;
  }

  function addNotification(label) {
    const list = $('notifications');
    if (list.firstElementChild && list.firstElementChild.classList.contains('muted')) list.textContent = '';
    const item = document.createElement('li');
    item.textContent = label;
    list.prepend(item);
  }

  async function showDevice() {
    const device = await SecurePush.device();
    $('device').textContent = device ? 'Registered as device ' + device.deviceId + '.' : 'Not registered.';
    return device;
  }

  async function attempt(label, action) {
    try {
      await action();
    } catch (error) {
      log(label + ' failed: ' + (error.code ? error.code + ': ' : '') + error.message);
    }
  }

  $('register').addEventListener('click', () =>
    attempt('registration', async () => {
      await SecurePush.register({ apiBase, userToken: $('token').value.trim() });
      log('registered');
      await showDevice();
    }));
  $('catchup').addEventListener('click', () =>
    attempt('catch-up', async () => {
      const unread = await SecurePush.catchUp();
      log('catch-up: ' + unread.length + ' unread');
      for (const item of unread) addNotification((item.payload && item.payload.title) || (item.preview && item.preview.title) || item.id);
    }));
  $('renew').addEventListener('click', () =>
    attempt('subscription renewal', async () => {
      const { endpoint } = await SecurePush.updateSubscription({ resubscribe: true });
      log('new push address registered: ' + new URL(endpoint).host);
    }));

  function formatQuietHours(quiet) {
    return quiet ? 'Quiet hours: ' + quiet.start + ' to ' + quiet.end + ' (' + quiet.time_zone + ').' : 'Quiet hours: none.';
  }

  async function showCategories() {
    const list = $('categories');
    list.textContent = '';
    const categories = await SecurePush.categories();
    if (categories.length === 0) {
      const item = document.createElement('li');
      item.className = 'muted';
      item.textContent = 'No categories yet.';
      list.append(item);
    }
    for (const category of categories) {
      const item = document.createElement('li');
      item.textContent = category.name + (category.muted ? ' (muted) ' : ' ');
      const toggle = document.createElement('button');
      toggle.textContent = category.muted ? 'Unmute' : 'Mute';
      toggle.addEventListener('click', () =>
        attempt('muting', async () => {
          const result = await SecurePush.setCategoryMuted(category.name, !category.muted);
          log('category ' + result.name + (result.muted ? ' muted' : ' unmuted'));
          await showCategories();
        }));
      item.append(toggle);
      list.append(item);
    }
  }

  $('load-categories').addEventListener('click', () =>
    attempt('categories', async () => {
      await showCategories();
      $('quiet').textContent = formatQuietHours(await SecurePush.quietHours());
    }));
  $('set-quiet').addEventListener('click', () =>
    attempt('quiet hours', async () => {
      const quiet = await SecurePush.setQuietHours({ start: $('quiet-start').value.trim(), end: $('quiet-end').value.trim() });
      $('quiet').textContent = formatQuietHours(quiet);
      log('quiet hours set');
    }));
  $('clear-quiet').addEventListener('click', () =>
    attempt('quiet hours', async () => {
      await SecurePush.clearQuietHours();
      $('quiet').textContent = formatQuietHours(null);
      log('quiet hours cleared');
    }));

  $('unregister').addEventListener('click', () =>
    attempt('unregistration', async () => {
      await SecurePush.unregister();
      log('unregistered');
      await showDevice();
    }));

  window.securePushShown = [];
  // The worker's background fetches after showing a sealed preview, in order (the browser test reads them).
  window.securePushFetched = [];
  navigator.serviceWorker.addEventListener('message', (event) => {
    const message = event.data || {};
    if (message.source !== 'securepush') return;
    showDevice();
    if (message.event === 'cleared') {
      log('clear push: closed ' + message.closed + ' of ' + message.ids.length);
      return;
    }
    if (message.event === 'subscription') {
      log('push subscription changed: ' + message.status);
      return;
    }
    if (message.event === 'fetched') {
      // The preview is already shown; this fetch only marks the notification read.
      log('push ' + message.id + ': preview fetched in the background (' + message.status + ')');
      window.securePushFetched.push(message);
      return;
    }
    log('push ' + message.id + ': ' + message.event + ' (' + message.status + ')');
    // What the worker asked the browser to show, in order (the browser test reads it).
    window.securePushShown.push(message);
    const how = message.preview ? ', sealed preview)' : message.event === 'shown' ? ')' : ', generic text: ' + message.status + ')';
    addNotification(message.title + ' (' + message.id.slice(0, 8) + how);
  });

  $('api').textContent = apiBase;

  /** Resolves once the worker is active and the page knows its device: the browser test waits on it. */
  window.securePushDemoReady = SecurePush.installWorker().then(showDevice);
})();
