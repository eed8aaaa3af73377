#!/usr/bin/env python3
"""The Web kit, end to end, in a real browser (headless Chromium over the DevTools protocol).

    SQL insert -> the real `securepush serve` pushes an encrypted Web Push message to a local push
    service -> this test decrypts it (as a browser's push service client would) and hands the bytes
    to the page's service worker with ServiceWorker.deliverPushMessage -> the worker fetches the
    payload through the API with its device credential -> registration.getNotifications().

Headless Chromium cannot subscribe with a real push service, so the page registers a subscription
whose endpoint is the local push service (the kit's registerSubscription, as for a self-hosted push
server). The API is reached through a small proxy that can answer 503 or drop connections.

Usage: browser_test.py --securepush BIN --database-url URL --chromium PATH --output DIR
Exits non-zero with a message on any failed check.
"""
import argparse
import base64
import datetime
import http.client
import ipaddress
import http.server
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

import http_ece
import jwt
import websocket
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

JWT_SECRET = "browser-test-secret-0123456789abcdef-0123"
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


class CheckFailed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise CheckFailed(message)


def wait_for(what, condition, timeout=45.0, interval=0.05):
    """Polls `condition` until it returns a truthy value; fails with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise CheckFailed("timed out waiting for " + what)
        time.sleep(interval)


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# MARK: a local Web Push service (HTTPS, as the dispatcher requires)


def make_tls_files(folder):
    """A CA and a leaf certificate for 127.0.0.1 signed by it; returns (ca_file, cert_file, key_file)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "SecurePush browser test CA")])
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    leaf_key = ec.generate_private_key(ec.SECP256R1())


    leaf = (
        x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name).public_key(leaf_key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    paths = [os.path.join(folder, name) for name in ("push-ca.pem", "push-cert.pem", "push-key.pem")]
    with open(paths[0], "wb") as f:
        f.write(ca.public_bytes(serialization.Encoding.PEM))
    with open(paths[1], "wb") as f:
        f.write(leaf.public_bytes(serialization.Encoding.PEM))
    with open(paths[2], "wb") as f:
        f.write(leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return paths


class PushService:
    """Accepts Web Push requests (RFC 8030) over HTTPS and keeps their bodies and headers."""

    def __init__(self, cert_file, key_file):
        self.received = []
        self.lock = threading.Lock()
        service = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with service.lock:
                    service.received.append({"path": self.path, "headers": dict(self.headers), "body": body})
                self.send_response(201)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_file, key_file)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def requests(self, path):
        with self.lock:
            return [r for r in self.received if r["path"] == path]


# MARK: the API behind a proxy that can fail


class APIProxy:
    """Forwards to the SecurePush API. In mode '503' it answers notification reads with 503; in mode
    'down' it drops those connections without an answer. Counts the reads of each notification id."""

    def __init__(self, upstream_port):
        self.mode = "pass"
        self.reads = {}
        self.lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def forward(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length) if length else None
                match = re.match(r"^/v1/notifications/([0-9a-fA-F-]{36})", self.path)
                if match:
                    with proxy.lock:
                        proxy.reads[match.group(1)] = proxy.reads.get(match.group(1), 0) + 1
                    if proxy.mode == "down":
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    if proxy.mode == "503":
                        error = b'{"error":{"code":"unavailable","message":"The database is unavailable."}}'
                        self.send_response(503)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Retry-After", "1")
                        self.send_header("Content-Length", str(len(error)))
                        self.end_headers()
                        self.wfile.write(error)
                        return
                upstream = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                upstream.request(self.command, self.path, body=body, headers=headers)
                response = upstream.getresponse()
                data = response.read()
                self.send_response(response.status)
                for key, value in response.getheaders():
                    if key.lower() not in ("connection", "transfer-encoding", "content-length"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                upstream.close()

            do_GET = do_POST = do_DELETE = forward

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def read_count(self, notification_id):
        with self.lock:
            return self.reads.get(notification_id, 0)


# MARK: Chromium over the DevTools protocol


class DevTools:
    """A minimal DevTools protocol client: commands on one page session, events collected."""

    def __init__(self, chromium, profile, log_file):
        self.process = subprocess.Popen(
            [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
             "--remote-debugging-port=0", "--window-size=900,1200", "--user-data-dir=" + profile, "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        url = None
        deadline = time.monotonic() + 60
        while url is None and time.monotonic() < deadline:
            line = self.process.stderr.readline()
            if not line and self.process.poll() is not None:
                raise CheckFailed("Chromium exited at start-up (exit code %s)" % self.process.returncode)
            found = re.search(r"DevTools listening on (ws://\S+)", line)
            if found:
                url = found.group(1)
        check(url is not None, "Chromium did not print its DevTools address within 60 s")
        def keep_log():
            with open(log_file, "w") as log:
                for line in self.process.stderr:
                    log.write(line)
                    log.flush()

        threading.Thread(target=keep_log, daemon=True).start()
        self.socket = websocket.create_connection(url, timeout=60, suppress_origin=True)
        self.next_id = 0
        self.events = []
        self.session = None

    def send(self, method, params=None, session=True, timeout=60):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        self.socket.send(json.dumps(message))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            reply = json.loads(self.socket.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise CheckFailed("%s failed: %s" % (method, reply["error"]))
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)
        raise CheckFailed(method + " got no answer")

    def open_page(self, url):
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True}, session=False)["sessionId"]
        self.send("Page.enable")
        self.send("ServiceWorker.enable")
        self.send("Page.navigate", {"url": url})

    def evaluate(self, expression, timeout=60):
        result = self.send("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True}, timeout=timeout)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise CheckFailed("page script failed: %s" % (details.get("exception", {}).get("description") or details.get("text")))
        return result["result"].get("value")

    def registration_id(self, scope):
        def find():
            self.send("Runtime.evaluate", {"expression": "1"})  # drains pending events
            for event in self.events:
                if event.get("method") == "ServiceWorker.workerRegistrationUpdated":
                    for registration in event["params"]["registrations"]:
                        if registration["scopeURL"] == scope and not registration.get("isDeleted"):
                            return registration["registrationId"]
            return None

        return wait_for("the service worker registration for " + scope, find)

    def close(self):
        try:
            self.socket.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()


# MARK: the test


class BrowserTest:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.processes = []

    def psql(self, database_url, sql):
        result = subprocess.run(["psql", database_url, "-qAtX", "-v", "ON_ERROR_STOP=1", "-c", sql], capture_output=True, text=True)
        check(result.returncode == 0, "psql failed: " + result.stderr.strip())
        return result.stdout.strip()

    def create_database(self):
        name = "sp_browser_" + uuid.uuid4().hex[:12]
        self.psql(self.args.database_url, 'CREATE DATABASE "%s"' % name)
        parsed = urllib.parse.urlsplit(self.args.database_url)
        self.database_name = name
        return urllib.parse.urlunsplit(parsed._replace(path="/" + name))

    def start_server(self, database_url, push_ca):
        vapid_key = ec.generate_private_key(ec.SECP256R1())
        vapid_file = os.path.join(self.work, "vapid.pem")
        with open(vapid_file, "wb") as f:
            f.write(vapid_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        self.vapid_public = b64url(vapid_key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint))
        port = free_port()
        env = dict(os.environ)
        env.update({
            "DATABASE_URL": database_url,
            "SECUREPUSH_HOST": "127.0.0.1",
            "SECUREPUSH_PORT": str(port),
            "SECUREPUSH_PROVIDERS": "webpush",
            "SECUREPUSH_WEBPUSH_VAPID_KEY_FILE": vapid_file,
            "SECUREPUSH_WEBPUSH_SUBJECT": "mailto:browser-test@example.com",
            "SECUREPUSH_WEBPUSH_NAVIGATE_URL": "https://app.example.com/notifications/{id}",
            "SECUREPUSH_WEBPUSH_CA_FILE": push_ca,
            "SECUREPUSH_WEBPUSH_ALLOWED_HOSTS": "127.0.0.1",
            "SECUREPUSH_PUSH_ALLOWED_PRIVATE_NETWORKS": "127.0.0.1/32",
            "SECUREPUSH_USER_JWT_SECRET": JWT_SECRET,
            "SECUREPUSH_DEMO": "on",
            "SECUREPUSH_READ_SYNC_WINDOW": "0s",
            "SECUREPUSH_LOG_LEVEL": "notice",
        })
        migrate = subprocess.run([self.args.securepush, "migrate"], env=env, capture_output=True, text=True)
        check(migrate.returncode == 0, "securepush migrate failed: " + migrate.stderr[-2000:])
        log = open(os.path.join(self.args.output, "securepush.log"), "w")
        self.server = subprocess.Popen([self.args.securepush, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
        self.processes.append(self.server)

        def ready():
            check(self.server.poll() is None, "securepush serve exited; see securepush.log in " + self.args.output)
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                connection.request("GET", "/readyz")
                return connection.getresponse().status == 200
            except OSError:
                return False

        wait_for("securepush serve to be ready", ready, timeout=30, interval=0.2)
        return port

    def api_call(self, port, method, path, bearer, body=None):
        """A direct API call (not through the proxy); fails the test on a non-2xx answer."""
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        headers = {"Authorization": "Bearer " + bearer, "Content-Type": "application/json"}
        connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        response = connection.getresponse()
        data = response.read()
        check(200 <= response.status < 300, "%s %s answered %d: %s" % (method, path, response.status, data[:200]))
        return json.loads(data) if data else None

    def next_push(self, push_service, path, seen, private_key, auth):
        """Waits for the next push to `path`, decrypts it, returns (headers, plaintext)."""
        requests = wait_for("a push to " + path, lambda: push_service.requests(path)[seen:] or None)
        request = requests[0]
        plaintext = http_ece.decrypt(request["body"], private_key=private_key, auth_secret=auth, version="aes128gcm")
        return request["headers"], plaintext.decode()

    def run(self):
        args = self.args
        ca_file, cert_file, key_file = make_tls_files(self.work)
        push_service = PushService(cert_file, key_file)
        database_url = self.create_database()
        api_port = self.start_server(database_url, ca_file)
        proxy = APIProxy(api_port)
        origin = "http://127.0.0.1:%d" % proxy.port
        demo = origin + "/demo/"

        # The key the page would subscribe with is served to anyone.
        connection = http.client.HTTPConnection("127.0.0.1", api_port, timeout=5)
        connection.request("GET", "/v1/webpush/key")
        key_response = connection.getresponse()
        check(key_response.status == 200, "GET /v1/webpush/key answered %d" % key_response.status)
        check(json.loads(key_response.read())["public_key"] == self.vapid_public, "/v1/webpush/key is not the VAPID public key")

        subscriber = ec.generate_private_key(ec.SECP256R1())
        auth = os.urandom(16)
        push_path = "/push/browser-" + uuid.uuid4().hex[:8]
        subscription = {
            "endpoint": "https://127.0.0.1:%d%s" % (push_service.port, push_path),
            "expirationTime": None,
            "keys": {
                "p256dh": b64url(subscriber.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)),
                "auth": b64url(auth),
            },
        }
        user = "browser-" + uuid.uuid4().hex[:8]
        user_token = jwt.encode({"sub": user, "exp": int(time.time()) + 3600}, JWT_SECRET, algorithm="HS256")

        browser = DevTools(args.chromium, os.path.join(self.work, "profile"), os.path.join(args.output, "chromium.log"))
        try:
            browser.send("Browser.grantPermissions", {"origin": origin, "permissions": ["notifications"]}, session=False)
            browser.open_page(demo)
            wait_for("the demo page to load", lambda: browser.evaluate("typeof window.securePushDemoReady") == "object")
            browser.evaluate("window.securePushDemoReady")
            registration = browser.registration_id(demo)
            # requireInteraction: Chromium on Linux without a desktop notification daemon shows notifications
            # as toasts only and removes a notification when its toast times out, so on a fast machine a
            # notification could vanish before getNotifications() saw it. Toasts of requireInteraction
            # notifications do not time out.
            device = browser.evaluate(
                "SecurePush.registerSubscription({apiBase: location.origin + '/', userToken: %s, subscription: %s,"
                " settings: {requestTimeoutMs: 2000, deadlineMs: 6000, maxAttempts: 2, requireInteraction: true}})"
                % (json.dumps(user_token), json.dumps(subscription)))
            device_id = device["deviceId"]
            stored = browser.evaluate("SecurePushStore.get('device')")
            check(stored["secret"] and stored["deviceId"] == device_id, "the credential is in IndexedDB")
            check(browser.evaluate("document.cookie + JSON.stringify(localStorage)") in ("{}", ""), "no credential in cookies or localStorage")

            def notifications():
                return browser.evaluate(
                    "navigator.serviceWorker.ready.then(r => r.getNotifications())"
                    ".then(list => list.map(n => ({tag: n.tag, title: n.title, body: n.body, requireInteraction: n.requireInteraction})))")

            def shown(tag):
                try:
                    return wait_for("a notification tagged " + tag, lambda: next((n for n in notifications() if n["tag"] == tag), None))
                except CheckFailed as failure:
                    page_log = browser.evaluate("document.getElementById('log').textContent")
                    permission = browser.evaluate("Notification.permission")
                    raise CheckFailed("%s; shown: %s; permission: %s; the demo page's log:\n%s"
                                      % (failure, notifications(), permission, page_log))

            def enqueue(payload):
                return self.psql(database_url, "INSERT INTO securepush.notifications (user_id, payload) VALUES ('%s', '%s') RETURNING id"
                                 % (user, json.dumps(payload).replace("'", "''")))

            def deliver(message):
                browser.send("ServiceWorker.deliverPushMessage", {"origin": origin, "registrationId": registration, "data": message})

            seen = 0
            results = []

            # 1. A normal push: the payload's title, fetched with the credential; read on the server.
            payload = {"title": "Payment received", "body": "EUR 42.00 from Bob"}
            first = enqueue(payload)
            headers, message = self.next_push(push_service, push_path, seen, subscriber, auth)
            seen += 1
            check(first in message, "the push carries the id")
            check("Payment" not in message and "Bob" not in message, "the push carries no payload byte: " + message)
            deliver(message)
            notification = shown(first)
            check(notification["title"] == payload["title"] and notification["body"] == payload["body"],
                  "the payload is shown after a normal push: %s" % notification)
            check(notification["requireInteraction"] is True, "the worker passes the requireInteraction setting on")
            read_by = self.psql(database_url, "SELECT read_at IS NOT NULL FROM securepush.notifications WHERE id = '%s'" % first)
            check(read_by == "t", "the notification is marked read on the server")
            fetched_by = self.psql(database_url, "SELECT device_id FROM securepush.fetches WHERE notification_id = '%s'" % first)
            check(fetched_by == device_id, "the notification is marked fetched by this browser's device (%s)" % fetched_by)
            generic_title = json.loads(message).get("notification", {}).get("title") or "New notification"
            results.append(("normal push", "payload title shown, read on the server"))
            browser.send("Page.captureScreenshot", {"format": "png"})  # warms the compositor
            screenshot = browser.send("Page.captureScreenshot", {"format": "png"})["data"]
            with open(os.path.join(args.output, "demo-after-push.png"), "wb") as f:
                f.write(base64.b64decode(screenshot))

            # 2-3. The API answers 503, then is unreachable: the generic text is shown; nothing is read.
            unread_shown = []
            for mode in ("503", "down"):
                proxy.mode = mode
                second = enqueue({"title": "Not shown while the API is " + mode})
                _, message = self.next_push(push_service, push_path, seen, subscriber, auth)
                seen += 1
                deliver(message)
                notification = shown(second)
                check(notification["title"] == generic_title, "generic text when the API is %s: %s" % (mode, notification))
                check(proxy.read_count(second) >= 1, "the worker tried to fetch")
                check(self.psql(database_url, "SELECT read_at IS NULL FROM securepush.notifications WHERE id = '%s'" % second) == "t",
                      "not read on the server")
                unread_shown.append(second)
                results.append(("API " + mode, "generic text shown after %d fetch attempts" % proxy.read_count(second)))
            proxy.mode = "pass"

            # 4-5. Unknown (404) and purged (410): generic text, exactly one request, no retry.
            unknown = str(uuid.uuid4())
            deliver(message.replace(second, unknown))
            notification = shown(unknown)
            check(notification["title"] == generic_title, "generic text on 404: %s" % notification)
            purged = enqueue({"title": "Purged before it was read"})
            _, purged_message = self.next_push(push_service, push_path, seen, subscriber, auth)
            seen += 1
            self.psql(database_url, "UPDATE securepush.notifications SET payload = NULL, purged_at = now() WHERE id = '%s'" % purged)
            deliver(purged_message)
            notification = shown(purged)
            check(notification["title"] == generic_title, "generic text on 410: %s" % notification)
            # Another push after them: once it is shown, the worker is done with the earlier ones.
            last = enqueue({"title": "After the failures", "body": "still works"})
            _, last_message = self.next_push(push_service, push_path, seen, subscriber, auth)
            seen += 1
            deliver(last_message)
            check(shown(last)["title"] == "After the failures", "the worker recovers")
            check(proxy.read_count(unknown) == 1 and proxy.read_count(purged) == 1,
                  "404 and 410 are not retried (%d, %d requests)" % (proxy.read_count(unknown), proxy.read_count(purged)))
            results.append(("404 and 410", "generic text, one request each"))

            # 6. Read sync: another of the user's devices reads a notification this browser showed (with the
            # generic text); the server pushes this browser a clear, and the worker closes that notification.
            peer = self.api_call(api_port, "POST", "/v1/devices", user_token, {"platform": "simulated", "token": "browser-peer"})
            peer_credential = "%s.%s" % (peer["device_id"], peer["device_secret"])
            read_elsewhere = unread_shown[0]
            self.api_call(api_port, "GET", "/v1/notifications/" + read_elsewhere, peer_credential)
            clear_headers, clear_message = self.next_push(push_service, push_path, seen, subscriber, auth)
            seen += 1
            check(json.loads(clear_message) == {"secureClear": [read_elsewhere]}, "the clear names the read notification: " + clear_message)
            urgency = {k.lower(): v for k, v in clear_headers.items()}.get("urgency")
            check(urgency == "low", "a clear is a low-urgency push (Urgency: %s)" % urgency)
            deliver(clear_message)
            wait_for("the cleared notification to close", lambda: all(n["tag"] != read_elsewhere for n in notifications()))
            check(any(n["tag"] == last for n in notifications()), "a clear closes only what it names")
            results.append(("read sync", "read on another device: clear pushed, notification closed"))

            # 7. Unregister: the credential stops working.
            browser.evaluate("SecurePush.unregister()")
            check(browser.evaluate("SecurePush.device()") is None, "no device after unregistering")
            active = self.psql(database_url, "SELECT active FROM securepush.devices WHERE id = '%s'" % device_id)
            check(active == "f", "the device is inactive on the server")
            results.append(("unregister", "device inactive, credential dropped"))

            # 8. The operators' status page: what a browser gets at /status (Accept: text/html) renders,
            # shows the figures, and carries no user id, payload or credential.
            browser.send("Page.navigate", {"url": origin + "/status"})
            wait_for("the status page to render", lambda: browser.evaluate(
                "document.readyState === 'complete' && document.title === 'SecurePush status' && !!document.querySelector('section')"))
            text = browser.evaluate("document.body.innerText")
            check("Dispatchers" in text and "alive" in text, "the status page lists the alive dispatcher")
            check("webpush" in text, "the status page shows the Web Push fetch figures")
            check(browser.evaluate("document.scripts.length") == 0, "the status page runs no script")
            for secret in (user, payload["title"], device_id):
                check(secret not in text, "the status page shows no user id, payload or credential (%s)" % secret)
            screenshot = browser.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})["data"]
            with open(os.path.join(args.output, "status-page.png"), "wb") as f:
                f.write(base64.b64decode(screenshot))
            results.append(("status page", "rendered at /status, no user id or payload; screenshot saved"))
        finally:
            browser.close()
        for name, outcome in results:
            print("  browser: %-12s %s" % (name, outcome))

    def cleanup(self):
        for process in self.processes:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
        if getattr(self, "database_name", None):
            subprocess.run(["psql", self.args.database_url, "-qAtX", "-c", 'DROP DATABASE IF EXISTS "%s"' % self.database_name],
                           capture_output=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--securepush", required=True)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--chromium", required=True)
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    os.makedirs(args.output, exist_ok=True)
    work = tempfile.mkdtemp(prefix="securepush-browser-")
    test = BrowserTest(args, work)
    try:
        test.run()
    except CheckFailed as failure:
        print("browser test FAILED: %s (logs in %s)" % (failure, args.output), file=sys.stderr)
        return 1
    finally:
        test.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    print("browser test passed; screenshots: %s, %s" % (os.path.join(args.output, "demo-after-push.png"),
                                                      os.path.join(args.output, "status-page.png")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
