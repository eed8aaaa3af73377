/* The SecurePush demo page: drives securepush.js and shows what the service worker did. */
(function () {
  'use strict';
  const apiBase = new URL('/', location.href).href;
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
      for (const item of unread) addNotification((item.payload && item.payload.title) || item.id);
    }));
  $('unregister').addEventListener('click', () =>
    attempt('unregistration', async () => {
      await SecurePush.unregister();
      log('unregistered');
      await showDevice();
    }));

  navigator.serviceWorker.addEventListener('message', (event) => {
    const message = event.data || {};
    if (message.source !== 'securepush') return;
    showDevice();
    if (message.event === 'cleared') {
      log('clear push: closed ' + message.closed + ' of ' + message.ids.length);
      return;
    }
    log('push ' + message.id + ': ' + message.event + ' (' + message.status + ')');
    addNotification(message.title + ' (' + message.id.slice(0, 8) + (message.event === 'shown' ? ')' : ', generic text: ' + message.status + ')'));
  });

  /** Resolves once the worker is active and the page knows its device: the browser test waits on it. */
  window.securePushDemoReady = SecurePush.installWorker().then(showDevice);
})();
