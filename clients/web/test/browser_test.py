#!/usr/bin/env python3
"""The Web kit, end to end, in a real browser (headless Chromium over the DevTools protocol).

    SQL insert -> the real `securepush serve` pushes an encrypted Web Push message to a local push
    service -> this test decrypts it (as a browser's push service client would) and hands the bytes
    to the page's service worker with ServiceWorker.deliverPushMessage -> the worker fetches the
    payload through the API with its device credential -> registration.getNotifications().

Headless Chromium cannot subscribe with a real push service, so the page registers a subscription
whose endpoint is the local push service (the kit's registerSubscription, as for a self-hosted push
server). The API is reached through a small proxy that can answer 503 or drop connections.

The server runs with sealed previews on (SECUREPUSH_SEALED_PREVIEWS=on): a notification with a preview
carries it inside the encrypted Web Push message, and the worker shows it even with the API unreachable;
every notify push is padded to the same size, and no preview byte appears in a capture or the server log.

A second part serves the kit from another origin (a small static server, the files as checked in),
as an app would: the API allows that origin (SECUREPUSH_CORS_ORIGINS) and the kit registers, fetches,
mutes categories, sets quiet hours, shows collapsed and passive notifications and hands the API a new
push address from there; a third origin, not allowed, is refused by the browser.

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
    'down' it drops those connections without an answer. Counts the reads of each notification id
    (not their CORS preflights)."""

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
                if match and self.command != "OPTIONS":  # a CORS preflight is no read
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

            do_GET = do_POST = do_PUT = do_DELETE = do_OPTIONS = forward

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def read_count(self, notification_id):
        with self.lock:
            return self.reads.get(notification_id, 0)


# MARK: the kit served from an app's own origin


class StaticOrigin:
    """Serves the Web kit as checked in (clients/web) at /demo/, as the API's /demo/ does, from its own
    origin: http://127.0.0.1:<port>."""

    WEB = os.path.join(ROOT, "clients", "web")
    TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}

    def __init__(self):
        web = self.WEB
        types = self.TYPES

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                path = urllib.parse.urlsplit(self.path).path
                name = "index.html" if path == "/demo/" else path[len("/demo/"):] if path.startswith("/demo/") else ""
                candidates = [os.path.join(web, "demo", name), os.path.join(web, name)]
                file = next((c for c in candidates if re.fullmatch(r"[A-Za-z0-9_-]+\.(html|js|css)", name) and os.path.isfile(c)), None)
                if file is None:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                with open(file, "rb") as f:
                    body = f.read()
                self.send_response(200)
                self.send_header("Content-Type", types[os.path.splitext(file)[1]])
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


class FakeSubscription:
    """A Web Push subscription at the local push service: its own path and keys. `next()` waits for the
    next push to it and decrypts it, as a browser's push service client would."""

    def __init__(self, push_service):
        self.push_service = push_service
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.auth = os.urandom(16)
        self.path = "/push/browser-" + uuid.uuid4().hex[:8]
        self.seen = 0
        self.json = {
            "endpoint": "https://127.0.0.1:%d%s" % (push_service.port, self.path),
            "expirationTime": None,
            "keys": {
                "p256dh": b64url(self.key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)),
                "auth": b64url(self.auth),
            },
        }

    def received(self):
        return len(self.push_service.requests(self.path))

    def decrypt(self, body):
        """The plaintext of a push body (RFC 8291; the RFC 8188 padding removed)."""
        return http_ece.decrypt(body, private_key=self.key, auth_secret=self.auth, version="aes128gcm").decode()

    def next(self):
        """Waits for the next push to this subscription; returns (headers with lower-case names, plaintext).
        The body as the push service received it (ciphertext) is kept in `last_body`."""
        requests = wait_for("a push to " + self.path, lambda: self.push_service.requests(self.path)[self.seen:] or None)
        self.seen += 1
        request = requests[0]
        self.last_body = request["body"]
        return {k.lower(): v for k, v in request["headers"].items()}, self.decrypt(request["body"])


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

    def evaluate_in_worker(self, origin, script_suffix, expression, timeout=60):
        """Evaluates `expression` (awaiting its promise) in the running service worker of `origin` whose script URL
        ends with `script_suffix`, in a session of its own."""
        def find():
            for info in self.send("Target.getTargets", session=False).get("targetInfos", []):
                url = info.get("url", "")
                if info.get("type") == "service_worker" and url.startswith(origin + "/") and url.endswith(script_suffix):
                    return info["targetId"]
            return None

        target = wait_for("the service worker target " + script_suffix, find)
        page_session = self.session
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True}, session=False)["sessionId"]
        try:
            return self.evaluate(expression, timeout=timeout)
        finally:
            self.send("Target.detachFromTarget", {"sessionId": self.session}, session=False)
            self.session = page_session

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


def fits(browser, width):
    """Checks that the page in `browser` fits a window `width` px wide: the document does not scroll sideways, and
    no section does either (a table wider than its section would scroll inside it). Returns the measures."""
    layout = browser.evaluate(
        "({viewport: window.innerWidth, document: document.documentElement.scrollWidth, body: document.body.scrollWidth,"
        " wide: [...document.querySelectorAll('section')].filter(s => s.scrollWidth > s.clientWidth)"
        ".map(s => s.querySelector('h2').textContent + ': ' + s.scrollWidth + ' px in ' + s.clientWidth + ' px')})")
    check(layout["viewport"] == width, "the window is %d px wide (%s)" % (width, layout))
    check(layout["document"] <= width and layout["body"] <= width,
          "the page scrolls sideways at %d px: the document is %d px wide" % (width, layout["document"]))
    check(not layout["wide"], "sections wider than the window at %d px: %s" % (width, "; ".join(layout["wide"])))
    return layout


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

    def start_server(self, database_url, push_ca, cors_origins):
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
            "SECUREPUSH_CORS_ORIGINS": cors_origins,
            "SECUREPUSH_READ_SYNC_WINDOW": "0s",
            "SECUREPUSH_SEALED_PREVIEWS": "on",
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

    def enqueue(self, payload, **columns):
        """A producer's INSERT (optional columns: urgency, collapse_key, category, ...); returns the id."""
        names = ["user_id", "payload"] + sorted(columns)
        values = [self.user, json.dumps(payload)] + [columns[name] for name in sorted(columns)]
        return self.psql(self.database_url, "INSERT INTO securepush.notifications (%s) VALUES (%s) RETURNING id"
                         % (", ".join(names), ", ".join("'%s'" % str(v).replace("'", "''") for v in values)))

    def enqueue_function(self, payload, preview=None):
        """A producer's securepush.enqueue(user, payload[, preview => ...]); returns the id."""
        def literal(value):
            return "'%s'::jsonb" % json.dumps(value, ensure_ascii=False).replace("'", "''")
        call = "securepush.enqueue('%s', %s%s)" % (self.user.replace("'", "''"), literal(payload),
                                                   "" if preview is None else ", preview => " + literal(preview))
        return self.psql(self.database_url, "SELECT " + call)

    def notifications(self):
        """The notifications the current page's service worker registration shows."""
        return self.browser.evaluate(
            "navigator.serviceWorker.ready.then(r => r.getNotifications())"
            ".then(list => list.map(n => ({tag: n.tag, title: n.title, body: n.body, requireInteraction: n.requireInteraction,"
            " silent: n.silent, renotify: n.renotify, data: n.data})))")

    def reported(self, tag, title=None):
        """Waits for the worker's report that it showed a notification tagged `tag` (with `title`, when given)
        and returns the last such report: title, body, tag, silent, renotify, urgency, category, id, status.
        The later scenarios use the worker's reports: headless Chromium without a notification daemon keeps
        only a few toasts of requireInteraction notifications, and getNotifications() stops listing new ones."""
        def find():
            reports = self.browser.evaluate("window.securePushShown")
            return next((r for r in reversed(reports) if r["tag"] == tag and (title is None or r["title"] == title)), None)
        return wait_for("the worker's report of a notification tagged %s%s" % (tag, "" if title is None else " titled " + title), find)

    def fetched(self, notification_id):
        """Waits for the worker's report of the background fetch it makes after showing a sealed preview
        and returns it: id, status ('found', 'unavailable', 'not_found', ...), preview, category."""
        def find():
            reports = self.browser.evaluate("window.securePushFetched")
            return next((r for r in reversed(reports) if r["id"] == notification_id), None)
        return wait_for("the worker's report of its background fetch of " + notification_id, find)

    def shown(self, tag, title=None):
        """Waits for a shown notification tagged `tag` (with `title`, when given) and returns it."""
        def find():
            return next((n for n in self.notifications() if n["tag"] == tag and (title is None or n["title"] == title)), None)
        try:
            return wait_for("a notification tagged %s%s" % (tag, "" if title is None else " titled " + title), find)
        except CheckFailed as failure:
            page_log = self.browser.evaluate("document.getElementById('log').textContent")
            permission = self.browser.evaluate("Notification.permission")
            raise CheckFailed("%s; shown: %s; permission: %s; the demo page's log:\n%s"
                              % (failure, self.notifications(), permission, page_log))

    def deliver(self, origin, registration, message):
        self.browser.send("ServiceWorker.deliverPushMessage", {"origin": origin, "registrationId": registration, "data": message})

    def open_demo(self, origin, query=""):
        """Opens `origin`/demo/ in a new tab and waits for its worker; returns the registration id."""
        self.browser.open_page(origin + "/demo/" + query)
        wait_for("the demo page at %s to load" % origin, lambda: self.browser.evaluate("typeof window.securePushDemoReady") == "object")
        self.browser.evaluate("window.securePushDemoReady")
        return self.browser.registration_id(origin + "/demo/")

    def run(self):
        args = self.args
        ca_file, cert_file, key_file = make_tls_files(self.work)
        push_service = PushService(cert_file, key_file)
        database_url = self.create_database()
        self.database_url = database_url
        app = StaticOrigin()        # the app's own origin, allowed by the API
        stranger = StaticOrigin()   # another origin, not allowed
        api_port = self.start_server(database_url, ca_file, app.origin)
        proxy = APIProxy(api_port)
        origin = "http://127.0.0.1:%d" % proxy.port
        demo = origin + "/demo/"

        # The key the page would subscribe with is served to anyone.
        connection = http.client.HTTPConnection("127.0.0.1", api_port, timeout=5)
        connection.request("GET", "/v1/webpush/key")
        key_response = connection.getresponse()
        check(key_response.status == 200, "GET /v1/webpush/key answered %d" % key_response.status)
        check(json.loads(key_response.read())["public_key"] == self.vapid_public, "/v1/webpush/key is not the VAPID public key")

        pushes = FakeSubscription(push_service)
        subscription = pushes.json
        user = "browser-" + uuid.uuid4().hex[:8]
        self.user = user
        user_token = jwt.encode({"sub": user, "exp": int(time.time()) + 3600}, JWT_SECRET, algorithm="HS256")

        browser = DevTools(args.chromium, os.path.join(self.work, "profile"), os.path.join(args.output, "chromium.log"))
        self.browser = browser
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

            notifications, shown, enqueue = self.notifications, self.shown, self.enqueue

            def deliver(message):
                self.deliver(origin, registration, message)

            results = []

            # 1. A normal push: the payload's title, fetched with the credential; read on the server.
            payload = {"title": "Payment received", "body": "EUR 42.00 from Bob"}
            first = enqueue(payload)
            headers, message = pushes.next()
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
                _, message = pushes.next()
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
            _, purged_message = pushes.next()
            self.psql(database_url, "UPDATE securepush.notifications SET payload = NULL, purged_at = now() WHERE id = '%s'" % purged)
            deliver(purged_message)
            notification = shown(purged)
            check(notification["title"] == generic_title, "generic text on 410: %s" % notification)
            # Another push after them: once it is shown, the worker is done with the earlier ones.
            last = enqueue({"title": "After the failures", "body": "still works"})
            _, last_message = pushes.next()
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
            clear_headers, clear_message = pushes.next()
            check(json.loads(clear_message) == {"secureClear": [read_elsewhere]}, "the clear names the read notification: " + clear_message)
            urgency = clear_headers.get("urgency")
            check(urgency == "low", "a clear is a low-urgency push (Urgency: %s)" % urgency)
            deliver(clear_message)
            wait_for("the cleared notification to close", lambda: all(n["tag"] != read_elsewhere for n in notifications()))
            check(any(n["tag"] == last for n in notifications()), "a clear closes only what it names")
            results.append(("read sync", "read on another device: clear pushed, notification closed"))

            self.sealed_previews(proxy, push_service, pushes, deliver, device_id, generic_title, results)

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

            self.other_origins(api_port, proxy, app, stranger, user_token, push_service, results)
            self.status_page_at_1280(api_port, origin, results)
        finally:
            browser.close()
        for name, outcome in results:
            print("  browser: %-12s %s" % (name, outcome))

    def sealed_previews(self, proxy, push_service, pushes, deliver, device_id, generic_title, results):
        """6b-6e: sealed previews (SECUREPUSH_SEALED_PREVIEWS=on). A notification with a preview is shown with
        the preview's text at once, with the API unreachable too; one without shows the generic text then;
        with the API reachable the background fetch marks it read. The three pushes have one size on the wire,
        and no preview byte is in any capture or in the server's log."""
        browser = self.browser
        database_url = self.database_url
        preview = {"title": "Card payment", "body": "€12.40 at Bakery"}
        secret_payload = {"secret": "payload"}
        captured = []

        def fetch_rows(notification_id):
            return self.psql(database_url, "SELECT count(*) FROM securepush.fetches WHERE notification_id = '%s'" % notification_id)

        def is_read(notification_id):
            return self.psql(database_url, "SELECT read_at IS NOT NULL FROM securepush.notifications WHERE id = '%s'" % notification_id)

        def shown_reports(notification_id):
            return [r for r in browser.evaluate("window.securePushShown") if r["id"] == notification_id]

        # The earlier scenarios' notifications are closed, so the browser's own list shows the new ones
        # (headless Chromium keeps only a few requireInteraction toasts).
        browser.evaluate("navigator.serviceWorker.ready.then(r => r.getNotifications()).then(list => list.forEach(n => n.close()))")
        wait_for("the earlier notifications to close", lambda: self.notifications() == [])

        # 6b. Sealed, API unreachable: the preview travels inside the encrypted message and is shown at once;
        # the background fetch fails (the proxy drops it), the preview stays, nothing is read on the server.
        proxy.mode = "down"
        sealed = self.enqueue_function(secret_payload, preview)
        _, message = pushes.next()
        captured.append(("sealed, API down", pushes.last_body))
        declared = json.loads(message)["notification"]
        check(declared["data"].get("secureId") == sealed and declared["data"].get("preview") == preview,
              "the decrypted push carries the id and the preview: %s" % message)
        check(declared["title"] == preview["title"] and declared["body"] == preview["body"],
              "the declared text is the preview's (for browsers that show it without the worker): %s" % message)
        check("secret" not in message, "the payload never travels, only the preview: %s" % message)
        deliver(message)
        notification = self.reported(sealed)
        check(notification["preview"] is True and notification["title"] == preview["title"] and notification["body"] == preview["body"],
              "the worker showed the real preview with the API unreachable: %s" % notification)
        displayed = self.shown(sealed)
        check(displayed["title"] == preview["title"] and displayed["body"] == preview["body"] and displayed["data"]["preview"] == preview,
              "the browser shows the preview (and keeps the preview object for the app): %s" % displayed)
        background = self.fetched(sealed)
        check(background["status"] == "unavailable", "the background fetch failed: %s" % background)
        check(proxy.read_count(sealed) >= 1, "the worker tried to fetch in the background")
        check(fetch_rows(sealed) == "0" and is_read(sealed) == "f",
              "the API was unreachable: no fetch of the sealed notification reached the server")
        check(len(shown_reports(sealed)) == 1 and self.shown(sealed)["title"] == preview["title"],
              "a failed background fetch leaves the preview shown (no generic text): %s" % shown_reports(sealed))
        results.append(("sealed, API down", "preview %r shown at once; background fetch %s after %d attempts, not read"
                        % (preview["title"], background["status"], proxy.read_count(sealed))))

        # 6c. Unsealed, API unreachable: no preview in the push, so the generic text.
        plain = self.enqueue_function(secret_payload)
        _, message = pushes.next()
        captured.append(("unsealed, API down", pushes.last_body))
        declared = json.loads(message)["notification"]
        check(declared["data"].get("secureId") == plain and "preview" not in declared["data"],
              "a notification without a preview is pushed without one: %s" % message)
        check("secret" not in message, "the payload never travels: %s" % message)
        deliver(message)
        notification = self.reported(plain)
        generic_body = declared.get("body") or "Open the app to read it."
        check(notification["preview"] is False and notification["event"] == "fallback" and notification["title"] == generic_title
              and notification["body"] == generic_body, "an unsealed push with the API unreachable shows the generic text: %s" % notification)
        check(self.shown(plain)["title"] == generic_title, "the browser shows the generic text")
        check(proxy.read_count(plain) >= 1 and fetch_rows(plain) == "0" and is_read(plain) == "f",
              "the worker tried to fetch, and nothing reached the server")
        results.append(("unsealed, API down", "generic text %r shown" % generic_title))

        # 6d. Sealed, API reachable: the preview at once, then the background fetch marks it read; the
        # shown notification is not replaced (no flash).
        proxy.mode = "pass"
        reachable = self.enqueue_function(secret_payload, preview)
        _, message = pushes.next()
        captured.append(("sealed, API up", pushes.last_body))
        check(json.loads(message)["notification"]["data"].get("preview") == preview, "the push carries the preview: %s" % message)
        deliver(message)
        notification = self.reported(reachable)
        check(notification["preview"] is True and notification["title"] == preview["title"] and notification["body"] == preview["body"],
              "the worker showed the preview: %s" % notification)
        background = self.fetched(reachable)
        check(background["status"] == "found", "the background fetch succeeded: %s" % background)
        wait_for("the sealed notification to be read on the server", lambda: is_read(reachable) == "t")
        fetched_by = self.psql(database_url, "SELECT device_id FROM securepush.fetches WHERE notification_id = '%s'" % reachable)
        check(fetched_by == device_id, "marked fetched by this browser's device (%s)" % fetched_by)
        check(len(shown_reports(reachable)) == 1 and self.shown(reachable)["title"] == preview["title"],
              "the preview stays after the fetch, shown once: %s" % shown_reports(reachable))
        # The read API's notification objects carry the preview (null without one), as the kit returns them.
        item = browser.evaluate("SecurePush.fetch(%s)" % json.dumps(reachable))
        check(item["preview"] == preview and item["payload"] == secret_payload, "SecurePush.fetch returns the preview: %s" % item)
        item = browser.evaluate("SecurePush.fetch(%s)" % json.dumps(plain))
        check("preview" in item and item["preview"] is None, "a notification without a preview has preview null: %s" % item)
        # The preview's own text wins over the declared text, and a background 404 leaves it shown too.
        stray = str(uuid.uuid4())
        crafted = json.loads(message)
        crafted["notification"].update({"title": generic_title, "tag": stray})
        crafted["notification"]["data"]["secureId"] = stray
        deliver(json.dumps(crafted))
        notification = self.reported(stray)
        check(notification["title"] == preview["title"] and notification["body"] == preview["body"],
              "the worker takes the text from data.preview: %s" % notification)
        check(self.fetched(stray)["status"] == "not_found" and len(shown_reports(stray)) == 1,
              "a background 404 leaves the preview shown")
        results.append(("sealed, API up", "preview shown once, read on the server by the background fetch"))

        # 6e. One size on the wire: the three pushes (and every other notify push to this subscription: with
        # sealed previews on, all are padded) are 3175 bytes of ciphertext; no preview byte in any capture
        # (bodies and headers) or in the server's log.
        sizes = {name: len(body) for name, body in captured}
        check(set(sizes.values()) == {3175}, "sealed and unsealed pushes are 3175 bytes each on the wire: %s" % sizes)
        notify_sizes = [len(r["body"]) for r in push_service.requests(pushes.path) if "secureClear" not in json.loads(pushes.decrypt(r["body"]))]
        check(set(notify_sizes) == {3175}, "every notify push to this subscription is 3175 bytes: %s" % notify_sizes)
        secrets = [preview["title"], preview["body"], "Card payment", "Bakery", "12.40"]
        with push_service.lock:
            captures = list(push_service.received)
        for request in captures:
            wire = request["body"] + json.dumps(request["headers"]).encode() + request["path"].encode()
            for secret in secrets:
                check(secret.encode() not in wire, "no preview byte (%r) in a push service capture" % secret)
        with open(os.path.join(self.args.output, "securepush.log"), "rb") as f:
            server_log = f.read()
        for secret in secrets:
            check(secret.encode() not in server_log, "no preview byte (%r) in the server's log" % secret)
        results.append(("sealed sizes", "%d notify pushes (sealed or not), all 3175 bytes; no preview byte in %d captures or the server log"
                        % (len(notify_sizes), len(captures))))

    def preflight(self, api_port, origin, method, path):
        """A CORS preflight as a browser sends it; returns (status, headers with lower-case names, repeats joined)."""
        connection = http.client.HTTPConnection("127.0.0.1", api_port, timeout=10)
        connection.request("OPTIONS", path, headers={
            "Origin": origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": "authorization,content-type"})
        response = connection.getresponse()
        response.read()
        headers = {}
        for key, value in response.getheaders():
            headers[key.lower()] = headers[key.lower()] + ", " + value if key.lower() in headers else value
        connection.close()
        return response.status, headers

    def other_origins(self, api_port, proxy, app, stranger, user_token, push_service, results):
        """9-15: the kit served from the app's own origin with the API on another (CORS, through the proxy,
        which counts reads), and the delivery controls through it; then an origin the API does not allow."""
        browser = self.browser
        database_url = self.database_url
        api = "http://127.0.0.1:%d/" % proxy.port
        query = "?api=" + urllib.parse.quote(api, safe="")

        def listed(values):
            return {v.strip().lower() for v in (values or "").split(",") if v.strip()}

        # 9. CORS: the API answers the app origin's preflight, never with credentials; the kit registers,
        # its worker fetches and the page catches up across origins.
        status, headers = self.preflight(api_port, app.origin, "PUT", "/v1/devices/current/token")
        check(status == 204, "a preflight from the allowed origin answered %d" % status)
        check(headers.get("access-control-allow-origin") == app.origin, "the preflight allows exactly the app origin: %s" % headers)
        check("access-control-allow-credentials" not in headers, "CORS never allows credentials (cookies): %s" % headers)
        check("origin" in listed(headers.get("vary")), "CORS answers vary by Origin: %s" % headers)
        check({"authorization", "content-type"} <= listed(headers.get("access-control-allow-headers")),
              "the preflight allows the Authorization and Content-Type headers: %s" % headers)
        check("put" in listed(headers.get("access-control-allow-methods")), "the preflight allows PUT: %s" % headers)
        _, refused = self.preflight(api_port, stranger.origin, "GET", "/v1/notifications")
        check("access-control-allow-origin" not in refused, "no CORS headers for an origin not allowed: %s" % refused)

        browser.send("Browser.grantPermissions", {"origin": app.origin, "permissions": ["notifications"]}, session=False)
        registration = self.open_demo(app.origin, query)
        pushes = FakeSubscription(push_service)
        device = browser.evaluate(
            "SecurePush.registerSubscription({apiBase: %s, userToken: %s, subscription: %s,"
            " settings: {requestTimeoutMs: 2000, deadlineMs: 6000, maxAttempts: 2, requireInteraction: true}})"
            % (json.dumps(api), json.dumps(user_token), json.dumps(pushes.json)))
        device_id = device["deviceId"]
        check(device["apiBase"] == api, "the device's API is the other origin: %s" % device)
        stored = browser.evaluate("SecurePushStore.get('device')")
        check(stored["endpoint"] == pushes.json["endpoint"], "the kit keeps the registered push address")

        def deliver(message):
            self.deliver(app.origin, registration, message)

        first = self.enqueue({"title": "Balance: EUR 10.00", "body": "seen from the app's origin"}, category="balance")
        _, message = pushes.next()
        declared = json.loads(message)["notification"]
        check(declared["tag"] == first and declared["data"].get("urgency") == "active" and "collapse" not in declared["data"],
              "a push without a collapse key is tagged with its id and says its urgency: %s" % message)
        check("balance" not in message, "the category does not travel in the push: %s" % message)
        deliver(message)
        notification = self.reported(first)
        check(notification["title"] == "Balance: EUR 10.00" and notification["body"] == "seen from the app's origin",
              "the worker fetched the payload across origins: %s" % notification)
        check(notification["silent"] is False, "an active notification is not silent: %s" % notification)
        check(notification["category"] == "balance", "the worker keeps the fetched category: %s" % notification)
        fetched_by = self.psql(database_url, "SELECT device_id FROM securepush.fetches WHERE notification_id = '%s'" % first)
        check(fetched_by == device_id, "fetched by the app origin's device (%s)" % fetched_by)
        # Error answers reach the kit across origins too: a 404 is one request and the generic text, not
        # a network error retried.
        unknown = str(uuid.uuid4())
        deliver(message.replace(first, unknown))
        notification = self.reported(unknown)
        check(notification["title"] == declared["title"], "generic text on 404 across origins: %s" % notification)
        check(proxy.read_count(unknown) == 1, "a 404 across origins is not retried (%d requests)" % proxy.read_count(unknown))
        missing = browser.evaluate("SecurePush.fetch(%s).then(() => null, e => ({status: e.status, code: e.code}))" % json.dumps(unknown))
        check(missing == {"status": 404, "code": "not_found"}, "the page sees the API's 404 across origins: %s" % missing)
        unread = self.enqueue({"title": "Caught up across origins"}, category="balance")
        pushes.next()  # its push; the page catches up instead of showing it
        caught_up = browser.evaluate("SecurePush.catchUp()")
        item = next((n for n in caught_up if n["id"] == unread), None)
        check(item is not None and item["category"] == "balance" and item["payload"]["title"] == "Caught up across origins",
              "catchUp from the app origin lists the notification with its category: %s" % item)
        results.append(("other origin", "CORS preflight; registered, pushed, fetched and caught up from another origin"))

        # 10. Categories: listed, muted (a muted category's notification gets no push), unmuted.
        categories = browser.evaluate("SecurePush.categories()")
        check(any(c["name"] == "balance" and c["muted"] is False for c in categories), "the user's categories: %s" % categories)
        muted = browser.evaluate("SecurePush.setCategoryMuted('balance', true)")
        check(muted["name"] == "balance" and muted["muted"] is True, "muting answers the category: %s" % muted)
        check(any(c["name"] == "balance" and c["muted"] is True for c in browser.evaluate("SecurePush.categories()")),
              "the category is listed as muted")
        silenced = self.enqueue({"title": "Muted, never pushed"}, category="balance")
        check(self.psql(database_url, "SELECT count(*) FROM securepush.deliveries WHERE notification_id = '%s'" % silenced) == "0",
              "a muted category's notification gets no delivery")
        after = self.enqueue({"title": "Another category"}, category="news")
        _, message = pushes.next()
        check(after in message and silenced not in message, "the next push is the unmuted category's: %s" % message)
        unmuted = browser.evaluate("SecurePush.setCategoryMuted('balance', false)")
        check(unmuted["name"] == "balance" and unmuted["muted"] is False, "unmuting answers the category: %s" % unmuted)
        check(self.psql(database_url, "SELECT count(*) FROM securepush.category_mutes WHERE user_id = '%s'" % self.user) == "0",
              "no mute left after unmuting")
        results.append(("categories", "listed, muted (no push), unmuted from the page"))

        # 11. Quiet hours around the present moment hold an active notification back; clearing them
        # from the page releases it.
        start, end = self.psql(database_url, "SELECT to_char(now() AT TIME ZONE 'Europe/Berlin' - interval '1 hour', 'HH24:MI')"
                               " || ' ' || to_char(now() AT TIME ZONE 'Europe/Berlin' + interval '1 hour', 'HH24:MI')").split()
        quiet = browser.evaluate("SecurePush.setQuietHours({timeZone: 'Europe/Berlin', start: %s, end: %s})"
                                 % (json.dumps(start), json.dumps(end)))
        check(quiet == {"time_zone": "Europe/Berlin", "start": start, "end": end}, "setQuietHours answers the window: %s" % quiet)
        check(browser.evaluate("SecurePush.quietHours()") == quiet, "quietHours() reads the window back")
        held = self.enqueue({"title": "Held until the quiet hours end"})
        state = self.psql(database_url, "SELECT state FROM securepush.deliveries WHERE notification_id = '%s' AND device_id = '%s'"
                          % (held, device_id))
        check(state == "scheduled", "during quiet hours an active notification waits (%s)" % state)
        check(browser.evaluate("SecurePush.clearQuietHours()") is None, "clearQuietHours() resolves to null")
        check(browser.evaluate("SecurePush.quietHours()") is None, "no quiet hours after clearing them")
        _, message = pushes.next()
        check(held in message, "clearing quiet hours releases the held notification: %s" % message)
        deliver(message)
        check(self.reported(held)["title"] == "Held until the quiet hours end", "the released notification is shown")
        results.append(("quiet hours", "set (a push waits), read back, cleared (it is pushed)"))

        # 12. Three notifications with one collapse key leave one shown notification, tagged with the
        # opaque digest (the Topic too), showing the newest.
        collapsed = []
        digest = None
        for number in (1, 2, 3):
            title = "Balance summary %d" % number
            collapsed.append(self.enqueue({"title": title, "body": "the newest replaces the others"}, collapse_key="balance-summary"))
            headers, message = pushes.next()
            declared = json.loads(message)["notification"]
            check(collapsed[-1] in message and "balance-summary" not in message, "the push names the id, not the key: %s" % message)
            check(re.fullmatch(r"[0-9a-f]{32}", declared["data"].get("collapse") or "") is not None, "a collapse digest: %s" % message)
            check(digest in (None, declared["data"]["collapse"]), "one collapse key, one digest")
            digest = declared["data"]["collapse"]
            check(declared["tag"] == digest and headers.get("topic") == digest,
                  "the declared tag and the Topic are the digest (tag %s, Topic %s)" % (declared["tag"], headers.get("topic")))
            deliver(message)
            self.reported(digest, title)
        reports = [r for r in browser.evaluate("window.securePushShown") if r["id"] in collapsed]
        check([r["id"] for r in reports] == collapsed and all(r["tag"] == digest for r in reports),
              "all three shown under the one digest tag, so each replaces the one before: %s" % reports)
        check(reports[-1]["title"] == "Balance summary 3", "the newest is shown last: %s" % reports[-1])
        results.append(("collapse", "three pushes, one notification (tag = digest), the newest"))

        # 13. A passive notification is shown silently.
        passive = self.enqueue({"title": "Passive news"}, urgency="passive")
        _, message = pushes.next()
        check(json.loads(message)["notification"]["data"].get("urgency") == "passive", "the push says passive: %s" % message)
        deliver(message)
        notification = self.reported(passive)
        check(notification["silent"] is True and notification["title"] == "Passive news", "passive is silent: %s" % notification)
        results.append(("passive", "shown with silent: true"))

        # 14. A new push address (pushsubscriptionchange): the page asks the worker, which runs the code of
        # its pushsubscriptionchange handler (renewSubscription) with the new subscription and PUTs it with
        # the device credential. Headless Chromium has no push service, so the browser itself cannot change
        # a subscription and fire the event.
        renewed = FakeSubscription(push_service)
        old_token = self.psql(database_url, "SELECT token FROM securepush.devices WHERE id = '%s'" % device_id)
        bad = dict(renewed.json, endpoint="http://127.0.0.1:%d/push/not-https" % push_service.port)
        refused = browser.evaluate("SecurePush.updateSubscription({subscription: %s}).then(() => null, e => ({status: e.status, code: e.code}))"
                                   % json.dumps(bad))
        check(refused == {"status": 400, "code": "invalid_device"}, "a bad endpoint is refused: %s" % refused)
        check(self.psql(database_url, "SELECT token FROM securepush.devices WHERE id = '%s'" % device_id) == old_token,
              "a refused endpoint leaves the device's address")
        secret = browser.evaluate("SecurePushStore.get('device')")["secret"]
        answer = browser.evaluate("SecurePush.updateSubscription({subscription: %s})" % json.dumps(renewed.json))
        check(answer == {"endpoint": renewed.json["endpoint"]}, "updateSubscription answers the new endpoint: %s" % answer)
        row = self.psql(database_url, "SELECT token, options ->> 'p256dh', active FROM securepush.devices WHERE id = '%s'" % device_id)
        check(row == "%s|%s|t" % (renewed.json["endpoint"], renewed.json["keys"]["p256dh"]),
              "the device row has the new endpoint and key: %s" % row)
        stored = browser.evaluate("SecurePushStore.get('device')")
        check(stored["deviceId"] == device_id and stored["secret"] == secret and stored["endpoint"] == renewed.json["endpoint"],
              "the same credential, the new address in IndexedDB")
        old_address_pushes = pushes.received()
        moved = self.enqueue({"title": "At the new address", "body": "same credential"})
        _, message = renewed.next()
        check(moved in message, "the next push goes to the new endpoint (decrypted with the new keys): %s" % message)
        deliver(message)
        notification = self.reported(moved)
        check(notification["title"] == "At the new address", "the credential still fetches: %s" % notification)
        check(pushes.received() == old_address_pushes, "nothing more went to the old endpoint")
        # 14b. The worker's own pushsubscriptionchange listener: an event dispatched inside the worker (Chromium's
        # push service would fire it; a script-made event cannot use the real waitUntil, so its promises are
        # collected and awaited here) carrying a new subscription.
        again = FakeSubscription(push_service)
        fired = browser.evaluate_in_worker(app.origin, "securepush-sw.js", """
            (async () => {
              const event = new ExtendableEvent('pushsubscriptionchange');
              const pending = [];
              Object.defineProperty(event, 'waitUntil', {value: (promise) => pending.push(promise)});
              Object.defineProperty(event, 'newSubscription', {value: %s});
              Object.defineProperty(event, 'oldSubscription', {value: null});
              self.dispatchEvent(event);
              const results = await Promise.all(pending);
              return {listeners: pending.length, results};
            })()""" % json.dumps(again.json))
        check(fired["listeners"] == 1 and fired["results"][0]["status"] == "updated",
              "the pushsubscriptionchange listener renewed the address: %s" % fired)
        check(self.psql(database_url, "SELECT token FROM securepush.devices WHERE id = '%s'" % device_id) == again.json["endpoint"],
              "the listener PUT the new endpoint with the device credential")
        moved_again = self.enqueue({"title": "After the event", "body": "same credential"})
        _, message = again.next()
        check(moved_again in message, "the next push goes to the address the event carried: %s" % message)
        deliver(message)
        wait_for("the worker's report that it fetched and showed the notification after the event",
                 lambda: ("push %s: shown (found)" % moved_again) in browser.evaluate("document.getElementById('log').textContent"))
        results.append(("new address", "worker's subscription-change path (via message and via the event): token PUT, next push at the new endpoint"))

        # 15. An origin the API does not allow: the browser refuses the answers, and a registration's
        # preflight fails, so nothing is registered.
        self.open_demo(stranger.origin, query)
        answer = browser.evaluate("fetch(%s + 'v1/webpush/key', {mode: 'cors', credentials: 'omit'}).then(r => 'answered ' + r.status, e => e.name)"
                                  % json.dumps(api))
        check(answer == "TypeError", "a fetch from an origin not allowed rejects: %s" % answer)
        intruder = FakeSubscription(push_service)
        refused = browser.evaluate(
            "SecurePush.registerSubscription({apiBase: %s, userToken: %s, subscription: %s}).then(() => null, e => ({status: e.status, code: e.code}))"
            % (json.dumps(api), json.dumps(user_token), json.dumps(intruder.json)))
        check(refused == {"status": 0, "code": "network_error"}, "registering from an origin not allowed fails: %s" % refused)
        check(self.psql(database_url, "SELECT count(*) FROM securepush.devices WHERE token = '%s'" % intruder.json["endpoint"]) == "0",
              "no device registered from the origin not allowed")
        results.append(("CORS refusal", "an origin not allowed: fetch rejects, nothing registered"))

    def status_page_at_1280(self, api_port, origin, results):
        """16. The status page of a busy fleet fits a 1,280 px wide window: dispatchers with long host names that
        push every platform, open circuit breakers, security events, outcomes of every platform, health reasons.
        Neither the page nor any of its sections scrolls sideways; a screenshot is saved as status-1280.png."""
        platforms = ["apns", "fcm", "webpush", "wns", "unifiedpush", "simulated"]
        circuits = json.dumps([
            {"platform": "webpush", "host": "updates.push.services.mozilla.com", "state": "open", "open_until": "2099-01-01T00:00:00Z"},
            {"platform": "wns", "host": "db5p.notify.windows.com", "state": "half_open", "open_until": None},
            {"platform": "unifiedpush", "host": "ntfy.unifiedpush-distributor.operations.example-corporation.net",
             "state": "open", "open_until": "2099-01-01T00:00:00Z"},
        ])
        hosts = ["securepush-dispatcher-7f9c2b6d4e-x8k2q.eu-west-1a.compute.internal.example-corporation.net",
                 "securepush-dispatcher-7f9c2b6d4e-p4m7z.eu-west-1b.compute.internal.example-corporation.net",
                 "dispatch-%s.securepush-production-cluster.k8s.svc.cluster.local" % ("a" * 40),
                 "worker-blue-3"]
        self.psql(self.database_url, " ".join(
            "INSERT INTO securepush.dispatchers (id, host, pid, role, version, platforms, circuits, listener_connected, listener_heard_at, sent, failed)"
            " VALUES (gen_random_uuid(), '%s', %d, 'dispatcher', '0.2.0+build.20261126.4f7f44f', ARRAY[%s], '%s'::jsonb, true, now(), %d, %d);"
            % (host, 1000 + index, ", ".join("'%s'" % p for p in platforms), circuits if index < 2 else "[]", 1234567 * (index + 1), 4321 * index)
            for index, host in enumerate(hosts)))
        self.psql(self.database_url, "INSERT INTO securepush.audit_log (event, reason) SELECT e, 'browser test'"
                  " FROM unnest(ARRAY['throttled', 'throttled', 'registration_limited', 'device_token_updated', 'device_rebound']) e")
        outcomes = ["sent"] * 6 + ["failed", "token_invalid", "expired", "cancelled", "superseded"]
        self.psql(self.database_url,
                  "INSERT INTO securepush.delivery_log (id, notification_id, device_id, platform, outcome, attempts, created_at, accepted_at, kind)"
                  " SELECT gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), p, o, 1 + (g %% 3 = 0)::int, now(),"
                  " CASE WHEN o = 'sent' THEN now() END, 'notify'"
                  " FROM unnest(ARRAY[%s]) p, unnest(ARRAY[%s]) o, generate_series(1, 5) g"
                  % (", ".join("'%s'" % p for p in platforms), ", ".join("'%s'" % o for o in outcomes)))

        browser = self.browser
        browser.send("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        try:
            browser.send("Page.navigate", {"url": origin + "/status.html"})
            wait_for("the status page to render at 1,280 px", lambda: browser.evaluate(
                "document.readyState === 'complete' && document.title === 'SecurePush status' && !!document.querySelector('section')"))
            text = browser.evaluate("document.body.innerText")
            check(hosts[0] in text and "apns, fcm, webpush, wns, unifiedpush, simulated" in text,
                  "the status page shows the long host names and the platform lists")
            check("LAST HOUR, PER PLATFORM" in text.upper() and "unifiedpush" in text, "the status page shows the outcomes per platform")
            connection = http.client.HTTPConnection("127.0.0.1", api_port, timeout=10)
            connection.request("GET", "/status")
            events = json.loads(connection.getresponse().read())["security_events_last_hour"]
            security = browser.evaluate(
                "[...document.querySelectorAll('section')].find(s => s.querySelector('h2').textContent.startsWith('Security')).innerText")
            shown = {event for event in events if re.search(r"\b%s\b" % event, security)}
            check(shown == {event for event, count in events.items() if count > 0} and "throttled" in shown,
                  "the security section lists the events that happened, without zero rows: %s (counts %s)" % (sorted(shown), events))
            layout = fits(browser, 1280)
            screenshot = browser.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})["data"]
            with open(os.path.join(self.args.output, "status-1280.png"), "wb") as f:
                f.write(base64.b64decode(screenshot))
        finally:
            browser.send("Emulation.clearDeviceMetricsOverride")
        results.append(("status 1280", "busy fleet's page fits 1,280 px (document %d px wide); screenshot status-1280.png" % layout["document"]))

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
    print("browser test passed; screenshots: %s, %s, %s" % (os.path.join(args.output, "demo-after-push.png"),
                                                          os.path.join(args.output, "status-page.png"),
                                                          os.path.join(args.output, "status-1280.png")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
