/*
 * SecurePush Web kit: the device's state in IndexedDB, shared by the page (securepush.js) and the
 * service worker (securepush-sw.js). The device credential lives here and only here: never in a
 * URL, a cookie or localStorage. Plain JavaScript, no dependencies.
 */
(function (global) {
  'use strict';

  const DATABASE = 'securepush';
  const STORE = 'state';

  function open() {
    return new Promise((resolve, reject) => {
      const request = indexedDB.open(DATABASE, 1);
      request.onupgradeneeded = () => request.result.createObjectStore(STORE);
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
  }

  async function run(mode, action) {
    const db = await open();
    try {
      return await new Promise((resolve, reject) => {
        const transaction = db.transaction(STORE, mode);
        const request = action(transaction.objectStore(STORE));
        transaction.oncomplete = () => resolve(request.result);
        transaction.onerror = () => reject(transaction.error);
        transaction.onabort = () => reject(transaction.error);
      });
    } finally {
      db.close();
    }
  }

  /**
   * Key-value access to the kit's state: `device` ({apiBase, deviceId, secret, endpoint}: the API, the
   * credential and the push address last handed to the API) and `settings`.
   */
  global.SecurePushStore = Object.freeze({
    get: (key) => run('readonly', (store) => store.get(key)),
    put: (key, value) => run('readwrite', (store) => store.put(value, key)),
    remove: (key) => run('readwrite', (store) => store.delete(key)),
  });
})(self);
