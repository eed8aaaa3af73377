#!/usr/bin/env python3
"""Runs the real processes the deployment artifacts describe and saves what their /metrics expose, for
metric_names.py. Against a migrated-from-empty database (DATABASE_URL of a private cluster):

- `securepush migrate`, two `serve --role api` instances (securepush-api@1 and @2) and two `serve --role
  dispatcher` instances (@1 and @2) with the exact command lines of deploy/systemd's units (their ExecStart
  shell with %d and %i filled in, their Environment= lines, the credentials in a temporary credentials
  directory, the shared securepush.env's SECUREPUSH_HOST/SECUREPUSH_PORT and
  SECUREPUSH_OPS_HOST/SECUREPUSH_OPS_PORT set to the API's, which the dispatchers must not use); the API
  unit's two port bases and the dispatchers' port base are moved to free ports as a drop-in would, so each
  API instance must listen on (public base + N) and 127.0.0.1:(operations base + N), not on a
  SECUREPUSH_PORT or SECUREPUSH_OPS_PORT left in the environment, and each dispatcher on
  127.0.0.1:(base + instance number) and nowhere else; an API or dispatcher instance named `x` must refuse
  to start;
- the dispatchers push `simulated` and Web Push, the latter to a local HTTPS push service that answers
  503, so a real circuit breaker opens in a dispatcher-only process;
- postgres_exporter with deploy/prometheus/postgres-exporter-queries.yaml.

The API's operations listener (the unit's SECUREPUSH_OPS_HOST, 127.0.0.1, alone) must answer 200 to
each of the operations routes (/healthz, /readyz, /status, /status.html, /metrics) and 404 to the API's
(/openapi.json, /v1/notifications); its public port must answer 404 with the JSON error `not_found` to
each operations route (also with a trailing slash or a query string, and to a browser's Accept) and
still serve /openapi.json. Each dispatcher's operations routes must answer 200 (/status.html a page),
and /openapi.json 404 (no API route); no dispatcher may listen on the API's ports.

Traffic: devices registered with securepush.register_device (simulated, apns with no dispatcher for it,
webpush to the failing service), notifications inserted with plain SQL, one fetched over the read API. It waits (with deadlines) until each series the checks need is there (the
dispatchers' own delivery counters, push durations and open breaker), then writes api.metrics,
dispatcher-1.metrics, dispatcher-2.metrics and exporter.metrics into --output. Exits non-zero with the
reason on any failure."""
import argparse
import base64
import datetime
import http.server
import json
import os
import re
import shlex
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

import polling
from polling import free_port


def wait_for(what, check, timeout=60.0, interval=0.2):
    return polling.wait_for(what, check, timeout, interval, prefix="live metrics: ")


def expect_refused_instance(name, command, env):
    """A template unit's command line with a non-numeric instance name must refuse to start, saying why."""
    try:
        refused = subprocess.run(["/bin/sh", "-c", command], env=env, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        raise SystemExit(f"live metrics: {name} did not refuse to start: it was still running after 30 s")
    if refused.returncode == 0 or "instance name must be a number" not in refused.stderr:
        raise SystemExit(f"live metrics: {name} did not refuse to start (status {refused.returncode}):\n{refused.stdout}{refused.stderr}")


def free_run(count):
    """A base port such that base + 1 ... base + count are free on 127.0.0.1 (a dispatcher port range)."""
    for _ in range(200):
        base = free_port(span=count)
        if base + count > 65535:
            continue
        sockets = []
        try:
            for offset in range(1, count + 1):
                s = socket.socket()
                sockets.append(s)
                s.bind(("127.0.0.1", base + offset))
            return base
        except OSError:
            continue
        finally:
            for s in sockets:
                s.close()
    raise SystemExit(f"live metrics: found no {count} free consecutive ports")


def listening_addresses(port):
    """The local addresses of the TCP sockets listening on `port` (from /proc/net/tcp and tcp6)."""
    addresses = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            lines = open(table, encoding="ascii").read().splitlines()[1:]
        except FileNotFoundError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state != "0A" or int(hex_port, 16) != port:
                continue
            raw = bytes.fromhex(address)
            # The kernel prints each 32-bit word in host (little-endian) order.
            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            addresses.add(socket.inet_ntop(socket.AF_INET if width == 8 else socket.AF_INET6, raw))
    return addresses


def get(url, headers=None, timeout=5):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


OPS_ROUTES = ("/healthz", "/readyz", "/status", "/status.html", "/metrics")


def check_ops_routes(name, port):
    """Every operations route answers 200 on 127.0.0.1:port (/status JSON, /status.html a page)."""
    for path in OPS_ROUTES:
        status, media, body = get_with_type(f"http://127.0.0.1:{port}{path}")
        if status != 200:
            raise SystemExit(f"live metrics: {name}'s operations listener answered {status} to {path} on port {port}")
        if path == "/status.html" and (not media.startswith("text/html") or "<html" not in body.lower()):
            raise SystemExit(f"live metrics: {name}'s /status.html answered {media}, not a page")
        if path == "/status" and not isinstance(json.loads(body), dict):
            raise SystemExit(f"live metrics: {name}'s /status answered no JSON object")


def check_not_served(name, port, paths):
    """Each path answers 404 on 127.0.0.1:port."""
    for path in paths:
        status, _ = get(f"http://127.0.0.1:{port}{path}")
        if status != 404:
            raise SystemExit(f"live metrics: {name} answered {status} to {path} on port {port}, not 404")


def check_public_port_refuses_ops(port):
    """The API's public port answers 404 with the JSON error `not_found` to every operations route, also
    with a trailing slash or a query string, and to a browser (Accept: text/html)."""
    for path in OPS_ROUTES + tuple(f"{route}/" for route in OPS_ROUTES) + tuple(f"{route}?x=1" for route in OPS_ROUTES):
        for headers in ({}, {"Accept": "text/html"}):
            status, body = get(f"http://127.0.0.1:{port}{path}", headers)
            try:
                code = json.loads(body)["error"]["code"]
            except (ValueError, KeyError, TypeError):
                code = None
            if status != 404 or code != "not_found":
                raise SystemExit(f"live metrics: the API's public port {port} answered {status} {body[:200]!r} to {path} "
                                 f"(Accept: {headers.get('Accept', '-')}), not 404 not_found: it must not serve the operations routes")


def get_with_type(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read().decode(errors="replace")


def unit_environment(unit_path):
    """The variables of a unit's Environment= lines (KEY=VALUE words, as systemd splits them)."""
    environment = {}
    for value in re.findall(r"^Environment=(.*)$", open(unit_path, encoding="utf-8").read(), re.M):
        for word in shlex.split(value):
            key, _, setting = word.partition("=")
            environment[key] = setting
    return environment


def unit_command(unit_path, binary, credentials, instance=None):
    """The shell script of a unit's ExecStart=/bin/sh -c '...', as systemd would run it (for a template,
    as its instance `instance`)."""
    text = open(unit_path, encoding="utf-8").read()
    match = re.search(r"^ExecStart=/bin/sh -c '(.*)'$", text, re.M)
    if not match:
        raise SystemExit(f"live metrics: {unit_path} has no ExecStart=/bin/sh -c '...' line")
    script = match.group(1).replace("$$", "$").replace("%d", credentials)
    if "%i" in script:
        if instance is None:
            raise SystemExit(f"live metrics: {unit_path} is a template: it needs an instance")
        script = script.replace("%i", instance)
    if "/usr/local/bin/securepush " not in script:
        raise SystemExit(f"live metrics: {unit_path} does not run /usr/local/bin/securepush")
    return script.replace("/usr/local/bin/securepush ", shlex.quote(binary) + " ")


def make_tls(folder):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    import ipaddress
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = os.path.join(folder, "push.crt"), os.path.join(folder, "push.key")
    open(cert_path, "wb").write(cert.public_bytes(serialization.Encoding.PEM))
    open(key_path, "wb").write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return cert_path, key_path


class Failing(http.server.BaseHTTPRequestHandler):
    """A Web Push service that is down: every push answers 503."""
    requests = 0

    def do_POST(self):  # noqa: N802 - the stdlib's name
        Failing.requests += 1
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--securepush", required=True)
    parser.add_argument("--exporter", required=True)
    parser.add_argument("--psql", required=True)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--root", required=True, help="the repository")
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    os.makedirs(args.output, exist_ok=True)
    work = tempfile.mkdtemp(prefix="securepush-deploy-check.")
    credentials = os.path.join(work, "credentials")
    os.makedirs(credentials)
    open(os.path.join(credentials, "database-url"), "w").write(args.database_url + "\n")
    open(os.path.join(credentials, "user-jwt-secret"), "w").write(base64.b64encode(os.urandom(32)).decode() + "\n")
    units = os.path.join(args.root, "deploy", "systemd")
    processes = []
    logs = {}

    def psql(sql):
        return subprocess.run([args.psql, args.database_url, "-qAtX", "-v", "ON_ERROR_STOP=1", "-c", sql],
                              check=True, capture_output=True, text=True).stdout.strip()

    def start(name, command, env, shell=False):
        log = open(os.path.join(args.output, f"{name}.log"), "w")
        logs[name] = log.name
        process = subprocess.Popen(command if not shell else ["/bin/sh", "-c", command], env=env, stdout=log, stderr=subprocess.STDOUT)
        processes.append((name, process))
        return process

    def alive(name, process):
        if process.poll() is not None:
            raise SystemExit(f"live metrics: {name} exited with status {process.returncode}; its log:\n"
                             + open(logs[name], encoding="utf-8", errors="replace").read()[-3000:])
        return True

    base_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": work, "SECUREPUSH_LOG_LEVEL": "info"}
    try:
        # migrate, exactly as securepush-migrate.service runs it.
        migrate = subprocess.run(["/bin/sh", "-c", unit_command(os.path.join(units, "securepush-migrate.service"), args.securepush, credentials)],
                                 env=base_env, capture_output=True, text=True, timeout=120)
        if migrate.returncode != 0:
            raise SystemExit(f"live metrics: the migrate unit's command failed:\n{migrate.stdout}{migrate.stderr}")
        print(f"live metrics: migrate unit command: {migrate.stdout.strip()}")

        # The API, as its template unit runs instances @1 and @2 (its Environment= lines: the operations
        # listener on 127.0.0.1, apart from the public port, both ports a base + the instance number), with
        # the settings securepush.env.example would give, the two port bases moved to free ranges as a
        # drop-in would (8081 and 9201 may be taken on a shared machine), and a SECUREPUSH_PORT and
        # SECUREPUSH_OPS_PORT left in the environment (an older securepush.env), which the unit overrides.
        api_unit = os.path.join(units, "securepush-api@.service")
        api_unit_env = unit_environment(api_unit)
        if (api_unit_env.get("SECUREPUSH_OPS_HOST") != "127.0.0.1" or not api_unit_env.get("SECUREPUSH_API_PORT_BASE")
                or not api_unit_env.get("SECUREPUSH_API_OPS_PORT_BASE")):
            raise SystemExit(f"live metrics: {api_unit} must set SECUREPUSH_OPS_HOST=127.0.0.1, SECUREPUSH_API_PORT_BASE and "
                             f"SECUREPUSH_API_OPS_PORT_BASE (the operations routes apart from the public port), not {api_unit_env}")
        expect_refused_instance("securepush-api@x", unit_command(api_unit, args.securepush, credentials, "x"),
                                dict(base_env, **api_unit_env))
        api_base = free_run(2)
        api_ops_base = free_run(2)
        while api_ops_base in range(api_base - 2, api_base + 3):
            api_ops_base = free_run(2)
        api_port, api_ops_port = api_base + 1, api_ops_base + 1
        decoy_port, decoy_ops_port = free_port(), free_port()
        api_env = dict(base_env, **api_unit_env)
        api_env.update(SECUREPUSH_HOST="127.0.0.1", SECUREPUSH_API_PORT_BASE=str(api_base), SECUREPUSH_API_OPS_PORT_BASE=str(api_ops_base),
                       SECUREPUSH_PORT=str(decoy_port), SECUREPUSH_OPS_PORT=str(decoy_ops_port),
                       SECUREPUSH_FETCH_STATS_INTERVAL="500ms",
                       SECUREPUSH_PROVIDERS="apns,fcm,webpush")  # the shared env file lists the dispatchers' platforms
        api = start("api", unit_command(api_unit, args.securepush, credentials, "1"), api_env, shell=True)
        api2 = start("api-2", unit_command(api_unit, args.securepush, credentials, "2"), api_env, shell=True)

        # A local Web Push service that is down.
        cert, key = make_tls(work)
        push_port = free_port()
        server = http.server.ThreadingHTTPServer(("127.0.0.1", push_port), Failing)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        vapid = ec.generate_private_key(ec.SECP256R1())
        open(os.path.join(credentials, "vapid-key.pem"), "wb").write(
            vapid.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))

        # Two dispatcher instances, as securepush-dispatcher@.service runs them: its Environment= lines,
        # then what securepush.env gives every unit (the API's SECUREPUSH_HOST/PORT and
        # SECUREPUSH_OPS_HOST/PORT: the API's ports are taken, so an instance that used one could not
        # start), the credentials drop-in's key file, and a drop-in moving the port base to a free range
        # (9100 may be taken on a shared machine).
        dispatcher_unit = os.path.join(units, "securepush-dispatcher@.service")
        expect_refused_instance("securepush-dispatcher@x", unit_command(dispatcher_unit, args.securepush, credentials, "x"),
                                dict(base_env, **unit_environment(dispatcher_unit)))
        port_base = free_run(2)
        dispatcher_env = dict(base_env, **unit_environment(dispatcher_unit))
        dispatcher_env.update(SECUREPUSH_HOST="0.0.0.0", SECUREPUSH_PORT=str(api_port), SECUREPUSH_DISPATCHER_PORT_BASE=str(port_base),
                              SECUREPUSH_OPS_HOST="0.0.0.0", SECUREPUSH_OPS_PORT=str(api_ops_port),
                              SECUREPUSH_PROVIDERS="simulated,webpush", SECUREPUSH_HEARTBEAT_INTERVAL="1s",
                              SECUREPUSH_WEBPUSH_VAPID_KEY_FILE=os.path.join(credentials, "vapid-key.pem"),
                              SECUREPUSH_WEBPUSH_SUBJECT="mailto:ops@example.com", SECUREPUSH_WEBPUSH_NAVIGATE_URL="https://example.com/n/{id}",
                              # This machine only: the push service is on loopback with its own certificate.
                              SECUREPUSH_WEBPUSH_CA_FILE=cert, SECUREPUSH_WEBPUSH_ALLOWED_HOSTS="localhost",
                              SECUREPUSH_PUSH_ALLOWED_PRIVATE_NETWORKS="127.0.0.0/8,::1/128",
                              SECUREPUSH_RETRY_BASE="100ms", SECUREPUSH_RETRY_MAX="1s", SECUREPUSH_WEBPUSH_TIMEOUT="2s")
        dispatchers = {}
        for instance in ("1", "2"):
            env = dict(dispatcher_env, SECUREPUSH_SIMULATED_OUTBOX=os.path.join(work, f"outbox-{instance}.jsonl"))
            name = f"dispatcher-{instance}"
            dispatchers[name] = (port_base + int(instance),
                                 start(name, unit_command(dispatcher_unit, args.securepush, credentials, instance), env, shell=True))

        exporter_port = free_port()
        dsn = args.database_url.replace("postgres://", "postgresql://", 1)
        exporter = start("exporter", [args.exporter, f"--web.listen-address=127.0.0.1:{exporter_port}",
                                      "--extend.query-path=" + os.path.join(args.root, "deploy", "prometheus", "postgres-exporter-queries.yaml")],
                         dict(base_env, DATA_SOURCE_NAME=dsn))

        wait_for(f"api's /readyz on its operations listener 127.0.0.1:{api_ops_port}",
                 lambda: alive("api", api) and get(f"http://127.0.0.1:{api_ops_port}/readyz")[0] == 200)
        wait_for(f"api's /openapi.json on its public port 127.0.0.1:{api_port}",
                 lambda: alive("api", api) and get(f"http://127.0.0.1:{api_port}/openapi.json")[0] == 200)
        # The operations listener: the five operations routes, no API route, on 127.0.0.1 alone.
        check_ops_routes("api", api_ops_port)
        check_not_served("api's operations listener", api_ops_port, ["/openapi.json", "/v1/notifications"])
        bound = listening_addresses(api_ops_port)
        if bound != {"127.0.0.1"}:
            raise SystemExit(f"live metrics: the API's operations listener is on {sorted(bound)} port {api_ops_port}, not on 127.0.0.1 alone")
        # The public port: 404 with the usual JSON error for every operations route.
        check_public_port_refuses_ops(api_port)
        # Instance @2 beside it, on the next ports of both ranges; neither used the environment's leftovers.
        wait_for(f"api@2's /readyz on its operations listener 127.0.0.1:{api_ops_base + 2}",
                 lambda: alive("api-2", api2) and get(f"http://127.0.0.1:{api_ops_base + 2}/readyz")[0] == 200)
        wait_for(f"api@2's /openapi.json on its public port 127.0.0.1:{api_base + 2}",
                 lambda: alive("api-2", api2) and get(f"http://127.0.0.1:{api_base + 2}/openapi.json")[0] == 200)
        for port in (decoy_port, decoy_ops_port):
            if listening_addresses(port):
                raise SystemExit(f"live metrics: an API instance listens on port {port}, the environment's SECUREPUSH_PORT or "
                                 f"SECUREPUSH_OPS_PORT, which its unit must override with the port bases")
        for name, (port, process) in dispatchers.items():
            wait_for(f"{name}'s /healthz on 127.0.0.1:{port}", lambda: alive(name, process) and get(f"http://127.0.0.1:{port}/healthz")[0] == 200)
            status, body = get(f"http://127.0.0.1:{port}/readyz")
            if status != 200:
                raise SystemExit(f"live metrics: {name}'s /readyz answered {status}: {body}")
            bound = listening_addresses(port)
            if bound != {"127.0.0.1"}:
                raise SystemExit(f"live metrics: {name} listens on {sorted(bound)} port {port}, not on 127.0.0.1 alone")
            status, _ = get(f"http://127.0.0.1:{port}/openapi.json")
            if status != 404:
                raise SystemExit(f"live metrics: {name} answered {status} to /openapi.json: a dispatcher serves no API route")
            check_ops_routes(name, port)
        # No dispatcher took the API's ports (the shared env file's SECUREPUSH_PORT and SECUREPUSH_OPS_PORT).
        for port in (api_port, api_ops_port):
            bound = listening_addresses(port)
            if bound != {"127.0.0.1"}:
                raise SystemExit(f"live metrics: port {port} (the API's) is listened on at {sorted(bound)}: a dispatcher used the API's settings")
        wait_for("two alive dispatchers", lambda: all(alive(name, process) for name, (_, process) in dispatchers.items())
                 and psql("SELECT count(*) FROM securepush.dispatchers WHERE stopped_at IS NULL AND last_seen_at > now() - interval '30 seconds'") == "2")

        # Devices: one simulated (fetches), one apns (no dispatcher pushes apns: it waits), and Web Push devices of
        # three users on a failing service (a push service's breaker opens only on failures of 3 distinct users).
        simulated = psql("SELECT device_id || '.' || device_secret FROM securepush.register_device('user-sim', 'simulated', 'sim-token')")
        psql("SELECT securepush.register_device('user-apns', 'apns', repeat('ab', 32), '{\"environment\":\"sandbox\"}')")
        subscriber = ec.generate_private_key(ec.SECP256R1()).public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        b64 = lambda raw: base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
        options = json.dumps({"p256dh": b64(subscriber), "auth": b64(os.urandom(16))})
        for user in range(1, 4):
            psql(f"SELECT securepush.register_device('user-web-{user}', 'webpush', 'https://localhost:{push_port}/push/{user}', '{options}')")
        ids = psql("INSERT INTO securepush.notifications (user_id, payload) SELECT 'user-sim', '{\"n\":1}' RETURNING id").splitlines()
        psql("INSERT INTO securepush.notifications (user_id, payload) SELECT 'user-apns', '{\"n\":1}' FROM generate_series(1, 3)")
        psql("INSERT INTO securepush.notifications (user_id, payload) SELECT 'user-web-' || (g % 3 + 1), '{\"n\":1}' FROM generate_series(1, 9) g")

        wait_for("the simulated push to be sent", lambda: psql(
            f"SELECT count(*) FROM securepush.delivery_log WHERE notification_id = '{ids[0]}' AND outcome = 'sent'") == "1")
        status, body = get(f"http://127.0.0.1:{api_port}/v1/notifications/{ids[0]}", {"Authorization": f"Bearer {simulated}"})
        if status != 200 or json.loads(body)["id"] != ids[0]:
            raise SystemExit(f"live metrics: the device's fetch answered {status}")
        get(f"http://127.0.0.1:{api_ops_port}/status")

        def scrape(port, path="/metrics"):
            status, text = get(f"http://127.0.0.1:{port}{path}")
            if status != 200:
                raise RuntimeError(f"{path} on port {port} answered {status}")
            return text

        def dispatchers_metrics():
            return {name: scrape(port) for name, (port, process) in dispatchers.items() if alive(name, process)}

        def sent(texts):
            return sum(float(value) for text in texts.values()
                       for value in re.findall(r'^securepush_deliveries_total\{outcome="sent"\} (\S+)$', text, re.M))
        wait_for("the API's fetch-lifecycle gauges (securepush_fetch_ratio)", lambda: alive("api", api)
                 and re.search(r'^securepush_fetch_ratio\{platform="simulated"\} 1', scrape(api_ops_port), re.M), timeout=30)
        wait_for("a dispatcher's own counter of the push it sent (securepush_deliveries_total{outcome=\"sent\"})",
                 lambda: sent(dispatchers_metrics()) >= 1, timeout=30)
        wait_for("a dispatcher's Web Push circuit breaker to open (securepush_circuit_open 1)", lambda: any(
            re.search(r'^securepush_circuit_open\{[^}]*platform="webpush"[^}]*\} 1(\.0)?$', text, re.M) for text in dispatchers_metrics().values()),
                 timeout=60)
        wait_for("a dispatcher's push durations (securepush_push_duration_bucket)", lambda: any(
            re.search(r"^securepush_push_duration_bucket\{", text, re.M) for text in dispatchers_metrics().values()), timeout=30)
        exporter_needs = ["securepush_queue_pending", "securepush_queue_lag_seconds", "securepush_dispatchers_alive",
                          "securepush_deliveries_finished_last_5m", "securepush_circuits_not_closed", "pg_up"]
        wait_for("postgres_exporter's SecurePush series (" + ", ".join(exporter_needs) + ")", lambda: alive("exporter", exporter)
                 and all(re.search(rf"^{name}[{{ ]", scrape(exporter_port), re.M) for name in exporter_needs), timeout=60)
        exporter_text = scrape(exporter_port)
        errors = re.findall(r"^pg_exporter_user_queries_load_error\{.*\} 1", exporter_text, re.M)
        if errors:
            raise SystemExit(f"live metrics: postgres_exporter could not load the queries file: {errors}")
        texts = dict(dispatchers_metrics(), api=scrape(api_ops_port), exporter=exporter_text)
        if len(texts) != 4:
            raise SystemExit(f"live metrics: scraped only {sorted(texts)}")
        for name, text in texts.items():
            open(os.path.join(args.output, f"{name}.metrics"), "w").write(text)
        lag = re.search(r"^securepush_queue_lag_seconds(\{[^}]*\})? (\S+)", exporter_text, re.M).group(2)
        ports = ", ".join(f"{name} on 127.0.0.1:{port}" for name, (port, _) in dispatchers.items())
        print(f"live metrics: api@1 (operations routes 200 on 127.0.0.1:{api_ops_port}, 404 not_found on its public port {api_port}), "
              f"api@2 beside it on {api_base + 2}/{api_ops_base + 2} (@x refused) "
              f"and dispatchers @1 and @2 (unit command lines; {ports}: the operations routes 200, "
              f"/openapi.json 404; @x refused), a dispatcher's Web Push breaker opened after {Failing.requests} pushes to the "
              f"failing service, postgres_exporter (queue lag {lag} s): scraped into {args.output}")
    finally:
        for name, process in reversed(processes):
            if process.poll() is None:
                process.terminate()
        for name, process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
