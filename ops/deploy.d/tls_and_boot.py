#!/usr/bin/env python3
"""TLS where operators need it, and boot with a late database, with the real binary (ops/deploy-check).

Everything runs here, unprivileged, without Docker or systemd: a local CA made with `openssl` (and a second,
unrelated CA that must not be trusted), two private PostgreSQL clusters (initdb/pg_ctl; as root they run as
`postgres`, or a `securepush` system user, like ops/lib.sh's), Debian's nginx with the real
deploy/tls/nginx-securepush.conf, and `securepush migrate` / `serve --role api`.

(b) database TLS: a cluster with ssl=on, a server certificate of the local CA for localhost/127.0.0.1 and a
    pg_hba.conf that admits TCP only as `hostssl ... cert` (a client certificate of the CA for the database
    user). `migrate` must succeed with sslmode=verify-full and sslrootcert/sslcert/sslkey in DATABASE_URL, and
    with them in PGSSLROOTCERT/PGSSLCERT/PGSSLKEY (and PGSSLMODE) instead; must fail, without crashing: naming
    the certificate with the other CA as sslrootcert (also when the environment names the right one: the URL
    wins), and with PostgreSQL's refusal (sqlstate 28000, its log saying why) without a client certificate and
    without TLS.
(a) the API behind nginx: `serve --role api` (connected as in (b) through the PGSSL* variables,
    SECUREPUSH_TRUSTED_PROXIES=127.0.0.1) behind nginx running the example file with its ports and paths
    replaced. An https request verified against the local CA reaches the API; a client that does not trust
    the CA fails; TLS 1.2, 1.3 and ALPN h2/http/1.1 are offered; the operations routes are not proxied (the
    API's request counter does not move); a body over the API's limit is refused by nginx; and the client
    address the API uses is nginx's $remote_addr: failed authentications from 127.0.0.2 through nginx, each
    with a different forged X-Forwarded-For, are throttled together (rows of securepush.auth_failures name the
    buckets of 127.0.0.2, none of a forged address), while 127.0.0.3 through the same nginx is not throttled;
    sent straight to the API (peer 127.0.0.1, trusted) the same header is believed, so nginx is what stops it;
    and from 127.0.0.1 itself (a trusted address) through nginx the forged header is not believed either: nginx
    replaces the client's header ($proxy_add_x_forwarded_for, which appends, fails here).
(c) late database: `serve --role api` with SECUREPUSH_STARTUP_WAIT=60s started before PostgreSQL logs that
    it is waiting, then becomes ready (/readyz 200 on its operations port) once PostgreSQL starts and
    `migrate` runs; `migrate --check` exits 1 naming the pending migrations, waits (with the setting) for a
    migration run by another process and exits 0, and exits 0 afterwards; `serve` without the wait fails
    within seconds with a clear message.

Each proof can fail: the script exits 1 and names every failed proof. Logs go to --output."""
import argparse
import hashlib
import http.client
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import warnings

import polling
from polling import free_port


class ProofFailed(Exception):
    """A proof that did not hold; its message says which and why."""



def wait_for(what, check, timeout=60.0, interval=0.2):
    """Polls `check` until it returns a true value; raises ProofFailed at the deadline."""
    return polling.wait_for(what, check, timeout, interval, failure=ProofFailed)


def answer(output):
    """The command's own answer line (`securepush: ...`), not its log lines."""
    return next((line.strip() for line in output.splitlines() if line.startswith("securepush: ")), "no answer line")


def tail(path, size=3000):
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read()[-size:]
    except FileNotFoundError:
        return "(no log)"


class Harness:
    def __init__(self, args):
        self.args = args
        self.binary = args.securepush
        self.bindir = args.pg_bindir
        self.root = args.root
        self.output = args.output
        os.makedirs(self.output, exist_ok=True)
        self.work = tempfile.mkdtemp(prefix="securepush-tls-boot.")
        os.chmod(self.work, 0o755)  # PostgreSQL's user and nginx's workers must enter it
        self.pg_user = self.find_pg_user()
        self.processes = []  # (name, Popen)
        self.clusters = []
        self.results = []  # (section, proof, ok, detail)

    # --- Bookkeeping -----------------------------------------------------------------------------------------

    def passed(self, section, proof, detail):
        self.results.append((section, proof, True, detail))
        print(f"tls-and-boot: ({section}) ok: {proof}: {detail}", flush=True)

    def check(self, section, proof, condition, detail_ok, detail_failed):
        if not condition:
            raise ProofFailed(f"{proof}: {detail_failed}")
        self.passed(section, proof, detail_ok)

    # --- Processes ------------------------------------------------------------------------------------------------

    @staticmethod
    def find_pg_user():
        """None when we are not root (PostgreSQL runs as us); else postgres, or a securepush system user."""
        if os.geteuid() != 0:
            return None
        for name in ("postgres", "securepush"):
            try:
                pwd.getpwnam(name)
                return name
            except KeyError:
                pass
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "securepush"], check=True)
        return "securepush"

    def as_pg_user(self, command, **kwargs):
        if self.pg_user:
            command = ["runuser", "-u", self.pg_user, "--"] + command
            kwargs.setdefault("cwd", "/")
        return subprocess.run(command, capture_output=True, text=True, **kwargs)

    def give_to_pg_user(self, *paths):
        if self.pg_user:
            entry = pwd.getpwnam(self.pg_user)
            for path in paths:
                os.chown(path, entry.pw_uid, entry.pw_gid)

    def base_env(self, **settings):
        """A clean environment: nothing of the caller's DATABASE_URL or PGSSL* leaks in."""
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.work, "LANG": "C.UTF-8"}
        env.update({key: str(value) for key, value in settings.items()})
        return env

    def run(self, name, arguments, env, timeout=120):
        """Runs the binary to completion; saves its output as NAME.log; returns (exit status, output)."""
        started = time.monotonic()
        try:
            completed = subprocess.run([self.binary] + arguments, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as expired:
            raise ProofFailed(f"`securepush {' '.join(arguments)}` ({name}) did not end within {timeout} s") from expired
        output = completed.stdout + completed.stderr
        with open(os.path.join(self.output, f"{name}.log"), "w", encoding="utf-8") as log:
            log.write(f"$ securepush {' '.join(arguments)}\n# exit status {completed.returncode} after {time.monotonic() - started:.1f} s\n{output}")
        return completed.returncode, output

    def start(self, name, command, env):
        log_path = os.path.join(self.output, f"{name}.log")
        log = open(log_path, "w", encoding="utf-8")
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        process.log_path = log_path
        self.processes.append((name, process))
        return process

    def alive(self, name, process):
        if process.poll() is not None:
            raise ProofFailed(f"{name} exited with status {process.returncode}; its log ends:\n{tail(process.log_path)}")
        return True

    def stop(self, process, timeout=20):
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def cleanup(self):
        for _, process in reversed(self.processes):
            self.stop(process)
        for cluster in self.clusters:
            cluster.stop()
            if os.path.exists(cluster.log):
                shutil.copyfile(cluster.log, os.path.join(self.output, f"postgres-{cluster.name}.log"))
        shutil.rmtree(self.work, ignore_errors=True)

    # --- Certificates ------------------------------------------------------------------------------------------

    def openssl(self, *arguments):
        completed = subprocess.run(["openssl", *arguments], capture_output=True, text=True)
        if completed.returncode != 0:
            raise ProofFailed(f"openssl {' '.join(arguments[:2])} failed: {completed.stderr.strip()}")

    def make_ca(self, name, common_name):
        folder = os.path.join(self.work, "pki")
        os.makedirs(folder, exist_ok=True)
        key, cert = os.path.join(folder, f"{name}.key"), os.path.join(folder, f"{name}.crt")
        self.openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert,
                     "-days", "2", "-subj", f"/CN={common_name}", "-addext", "basicConstraints=critical,CA:TRUE",
                     "-addext", "keyUsage=critical,keyCertSign,cRLSign")
        os.chmod(key, 0o600)
        return cert, key

    def make_leaf(self, name, ca, common_name, usage, san=None):
        """A certificate signed by `ca` (cert, key) for `usage` (serverAuth or clientAuth); the key mode 0600."""
        folder = os.path.join(self.work, "pki")
        key, csr, cert, extensions = (os.path.join(folder, f"{name}.{suffix}") for suffix in ("key", "csr", "crt", "ext"))
        self.openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", csr,
                     "-subj", f"/CN={common_name}")
        with open(extensions, "w", encoding="ascii") as file:
            file.write("basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n"
                       f"extendedKeyUsage={usage}\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n")
            if san:
                file.write(f"subjectAltName={san}\n")
        self.openssl("x509", "-req", "-in", csr, "-CA", ca[0], "-CAkey", ca[1], "-set_serial", "0x" + secrets.token_hex(16),
                     "-days", "2", "-sha256", "-extfile", extensions, "-out", cert)
        os.chmod(key, 0o600)
        return cert, key


class Cluster:
    """A private PostgreSQL cluster: initdb now, pg_ctl start/stop when asked, psql over its unix socket."""

    def __init__(self, harness, name, port, settings, hba):
        self.harness, self.name, self.port = harness, name, port
        self.folder = os.path.join(harness.work, f"pg-{name}")
        self.data, self.socket, self.log = (os.path.join(self.folder, part) for part in ("db", "socket", "postgres.log"))
        os.makedirs(self.data)
        os.makedirs(self.socket)
        harness.give_to_pg_user(self.folder, self.data, self.socket)
        os.chmod(self.data, 0o700)
        self.bin = harness.bindir
        done = harness.as_pg_user([f"{self.bin}/initdb", "-D", self.data, "-U", "securepush", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"])
        if done.returncode != 0:
            raise ProofFailed(f"initdb of the {name} cluster failed: {done.stderr.strip()}")
        with open(os.path.join(self.data, "postgresql.conf"), "a", encoding="utf-8") as conf:
            conf.write(f"\n# tls_and_boot.py\nport = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{self.socket}'\n"
                       "fsync = off\nsynchronous_commit = off\nlog_connections = on\n")
            for key, value in settings.items():
                conf.write(f"{key} = '{value}'\n")
        with open(os.path.join(self.data, "pg_hba.conf"), "w", encoding="utf-8") as file:
            file.write(hba)
        harness.clusters.append(self)
        self.started = False

    def start(self):
        done = self.harness.as_pg_user([f"{self.bin}/pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", "60", "start"])
        if done.returncode != 0:
            raise ProofFailed(f"the {self.name} cluster did not start: {done.stderr.strip()}\n{tail(self.log)}")
        self.started = True
        if self.psql("SELECT count(*) FROM pg_database WHERE datname = 'securepush'", database="postgres") == "0":
            self.psql("CREATE DATABASE securepush", database="postgres")

    def stop(self):
        if self.started:
            self.harness.as_pg_user([f"{self.bin}/pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop"])
            self.started = False

    def psql(self, sql, database="securepush"):
        done = subprocess.run([f"{self.bin}/psql", "-h", self.socket, "-p", str(self.port), "-U", "securepush", "-d", database,
                               "-qAtX", "-v", "ON_ERROR_STOP=1", "-c", sql], capture_output=True, text=True)
        if done.returncode != 0:
            raise ProofFailed(f"psql on the {self.name} cluster failed: {done.stderr.strip()}")
        return done.stdout.strip()

    def log_text(self):
        return tail(self.log, 10**7)


# --- (b) The database over TLS with a private CA and client certificates ------------------------------------------

def database_tls(h, pki):
    section = "b"
    ca, rogue, client = pki["ca"], pki["rogue"], pki["client"]
    base = f"postgres://securepush@localhost:{h.tls_db.port}/securepush"
    full = f"{base}?sslmode=verify-full&sslrootcert={ca[0]}&sslcert={client[0]}&sslkey={client[1]}"
    env = h.base_env(SECUREPUSH_LOG_LEVEL="info")

    mode = os.stat(client[1]).st_mode & 0o777
    h.check(section, "the client key is private", mode == 0o600, "mode 0600", f"mode {mode:o}, not 0600")

    def certified_logins():
        return len(re.findall(r'connection authenticated: identity="CN=securepush" method=cert', h.tls_db.log_text()))

    before = certified_logins()
    status, output = h.run("b-migrate-url", ["migrate"], dict(env, DATABASE_URL=full))
    h.check(section, "migrate with sslmode=verify-full, sslrootcert, sslcert and sslkey in DATABASE_URL", status == 0,
            f"exit 0 ({answer(output)})", f"exit {status}: {output.strip()[-800:]}")
    logins = certified_logins() - before
    h.check(section, "PostgreSQL authenticated it by its client certificate", logins >= 1,
            f"{logins} connection(s) logged as identity=\"CN=securepush\" method=cert, over TLS",
            "no connection was authenticated by certificate (log_connections shows none)")

    status, output = h.run("b-migrate-env", ["migrate"], dict(env, DATABASE_URL=f"{base}?sslmode=verify-full", PGSSLROOTCERT=ca[0],
                                                               PGSSLCERT=client[0], PGSSLKEY=client[1]))
    h.check(section, "migrate with the files in PGSSLROOTCERT/PGSSLCERT/PGSSLKEY (DATABASE_URL ?sslmode=verify-full alone)", status == 0,
            f"exit 0 ({answer(output)})", f"exit {status}: {output.strip()[-800:]}")
    status, output = h.run("b-migrate-env-mode", ["migrate"], dict(env, DATABASE_URL=base, PGSSLMODE="verify-full", PGSSLROOTCERT=ca[0],
                                                                    PGSSLCERT=client[0], PGSSLKEY=client[1]))
    h.check(section, "migrate with PGSSLMODE=verify-full too (DATABASE_URL without parameters)", status == 0,
            f"exit 0 ({answer(output)})", f"exit {status}: {output.strip()[-800:]}")

    def refused(name, what, url, extra, needle, server_says=None):
        before_log = len(h.tls_db.log_text())
        status, output = h.run(name, ["migrate"], dict(env, DATABASE_URL=url, **extra))
        if status == 0:
            raise ProofFailed(f"{what}: migrate succeeded (exit 0); it must be refused")
        if status >= 128 or status < 0 or re.search(r"Fatal error|Crash|backtrace", output):
            raise ProofFailed(f"{what}: migrate crashed (exit {status}) instead of refusing with a message: {output.strip()[-800:]}")
        if not re.search(needle, output, re.I):
            raise ProofFailed(f"{what}: exit {status}, but the message does not name the problem ({needle}): {output.strip()[-800:]}")
        if server_says and server_says not in h.tls_db.log_text()[before_log:]:
            raise ProofFailed(f"{what}: PostgreSQL's log does not say {server_says!r}")
        lines = [line.strip() for line in output.splitlines() if re.search(needle, line, re.I)]
        line = next((line for line in lines if line.startswith("Error:")), lines[0])
        h.passed(section, what, f"exit {status}: {re.sub(r' at /[^ ]+:[0-9]+', '', line)[:360]}")

    refused("b-refused-other-ca", "migrate with another CA as sslrootcert is refused",
            f"{base}?sslmode=verify-full&sslrootcert={rogue[0]}&sslcert={client[0]}&sslkey={client[1]}", {}, r"certificate")
    refused("b-refused-url-wins", "the URL's sslrootcert wins over PGSSLROOTCERT (the other CA in the URL: refused)",
            f"{base}?sslmode=verify-full&sslrootcert={rogue[0]}", {"PGSSLROOTCERT": ca[0], "PGSSLCERT": client[0], "PGSSLKEY": client[1]},
            r"certificate")
    refused("b-refused-no-client-cert", "migrate without a client certificate is refused by PostgreSQL",
            f"{base}?sslmode=verify-full&sslrootcert={ca[0]}", {}, r"certificate|28000|invalid_authorization_specification",
            server_says="connection requires a valid client certificate")
    refused("b-refused-no-tls", "migrate without TLS (sslmode=disable) is refused by pg_hba.conf",
            f"{base}?sslmode=disable", {}, r"pg_hba|no encryption|28000|invalid_authorization_specification",
            server_says="no pg_hba.conf entry")

    # Whether the binary insists on a private key file (libpq refuses a group- or world-readable one).
    loose = os.path.join(h.work, "pki", "client-loose.key")
    shutil.copyfile(client[1], loose)
    os.chmod(loose, 0o644)
    status, output = h.run("b-key-mode-0644", ["migrate"], dict(env, DATABASE_URL=f"{base}?sslmode=verify-full&sslrootcert={ca[0]}"
                                                                 f"&sslcert={client[0]}&sslkey={loose}"))
    h.key_mode_note = ("the binary also accepts a key file of mode 0644 (libpq would refuse it): keep it 0600 all the same"
                       if status == 0 else f"the binary refuses a key file of mode 0644 (exit {status})")
    print(f"tls-and-boot: ({section}) note: {h.key_mode_note}", flush=True)


# --- (a) The API behind nginx ---------------------------------------------------------------------------------------

def find_nginx():
    for candidate in (shutil.which("nginx"), "/usr/sbin/nginx"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise ProofFailed("nginx is not installed (ops/deploy-check installs Debian's nginx package)")


def substitute(text, pattern, replacement, what):
    """Replaces the one match of `pattern` in the example file; the example must have exactly one."""
    new, count = re.subn(pattern, replacement, text, flags=re.M)
    if count != 1:
        raise ProofFailed(f"deploy/tls/nginx-securepush.conf must have exactly one {what} (matching /{pattern}/), found {count}")
    return new


def api_body_limit(root):
    """APILimits.maxRequestBodyBytes's default, from the source."""
    source = open(os.path.join(root, "Sources", "SecurePushAPI", "APILimits.swift"), encoding="utf-8").read()
    match = re.search(r"var maxRequestBodyBytes = ([0-9_ *]+)\n", source)
    if not match:
        raise ProofFailed("cannot find maxRequestBodyBytes's default in Sources/SecurePushAPI/APILimits.swift")
    value = 1
    for factor in match.group(1).replace("_", "").split("*"):
        value *= int(factor.strip())
    return value


def nginx_size(text):
    match = re.fullmatch(r"([0-9]+)([kKmM]?)", text)
    if not match:
        raise ProofFailed(f"client_max_body_size {text!r} is not a size")
    return int(match.group(1)) * {"": 1, "k": 1024, "m": 1024 * 1024}[match.group(2).lower()]


def throttle_bucket(address):
    """AuthThrottle.keys: `addr:` + the first two bytes of the SHA-256 of the (IPv4) address, in hex."""
    return "addr:" + hashlib.sha256(address.encode()).hexdigest()[:4]


class _HTTPS(http.client.HTTPSConnection):
    """An HTTPS connection to 127.0.0.1 that verifies the certificate for the name `sni` (localhost may
    resolve to ::1 first, where nginx does not listen), optionally from a given loopback source address."""

    def __init__(self, port, context, sni, source=None):
        super().__init__("127.0.0.1", port, context=context, timeout=15, source_address=(source, 0) if source else None)
        self.sni = sni

    def connect(self):
        http.client.HTTPConnection.connect(self)
        self.sock = self._context.wrap_socket(self.sock, server_hostname=self.sni)


def https(port, path, context, method="GET", headers=None, body=None, source=None, host="localhost"):
    """One HTTPS request to nginx on 127.0.0.1:port (from `source`, a loopback address) for the name `host`;
    returns (status, headers, body)."""
    connection = _HTTPS(port, context, host, source)
    try:
        connection.request(method, path, body=body, headers=dict({"Host": f"{host}:{port}"}, **(headers or {})))
        response = connection.getresponse()
        return response.status, response.headers, response.read().decode(errors="replace")
    finally:
        connection.close()


def handshake(port, context, host="localhost"):
    """A bare TLS handshake with nginx; returns the SSLSocket's (version, ALPN protocol)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=host) as tls:
            return tls.version(), tls.selected_alpn_protocol()


def requests_seen(h):
    """How many requests the API process has answered, from Hummingbird's counter (hb_requests) on its operations
    listener, leaving out the operations routes this script calls there (/metrics, /readyz)."""
    connection = http.client.HTTPConnection("127.0.0.1", h.api_ops_port, timeout=10)
    try:
        connection.request("GET", "/metrics")
        text = connection.getresponse().read().decode()
    finally:
        connection.close()
    open(os.path.join(h.output, "api.metrics"), "w", encoding="utf-8").write(text)
    total, found = 0.0, False
    for line in text.splitlines():
        if not line.startswith("hb_requests{"):
            continue
        found = True
        labels, value = line.rsplit(" ", 1)
        if not re.search(r'http_route="/(metrics|readyz)"', labels):
            total += float(value)
    if not found:
        raise ProofFailed(f"the API's /metrics has no hb_requests counter to watch: {text[:400]!r}")
    return total


def api_behind_nginx(h, pki):
    section = "a"
    ca, rogue, server = pki["ca"], pki["rogue"], pki["nginx"]
    example_path = os.path.join(h.root, "deploy", "tls", "nginx-securepush.conf")
    example = open(example_path, encoding="utf-8").read()
    code = "\n".join(line.split("#", 1)[0] for line in example.splitlines())

    # The settings SecurePush needs, read from the file itself.
    forwarded = re.findall(r"^\s*proxy_set_header\s+X-Forwarded-For\s+(\S+);", code, re.M | re.I)
    h.check(section, "the example sets X-Forwarded-For to $remote_addr, overwriting the client's",
            forwarded == ["$remote_addr"] and "$proxy_add_x_forwarded_for" not in code,
            "proxy_set_header X-Forwarded-For $remote_addr (no $proxy_add_x_forwarded_for)", f"X-Forwarded-For set to {forwarded}")
    h.check(section, "the example sets X-Forwarded-Proto", re.search(r"^\s*proxy_set_header\s+X-Forwarded-Proto\s+\$scheme;", code, re.M | re.I) is not None,
            "proxy_set_header X-Forwarded-Proto $scheme", "no proxy_set_header X-Forwarded-Proto $scheme")
    protocols = re.findall(r"^\s*ssl_protocols\s+([^;]+);", code, re.M)
    h.check(section, "the example allows TLS 1.2 and 1.3 only", [p.split() for p in protocols] == [["TLSv1.2", "TLSv1.3"]],
            "ssl_protocols TLSv1.2 TLSv1.3", f"ssl_protocols {protocols}")
    limit = api_body_limit(h.root)
    sizes = re.findall(r"^\s*client_max_body_size\s+(\S+);", code, re.M)
    h.check(section, "client_max_body_size is the API's body limit", len(sizes) == 1 and nginx_size(sizes[0]) == limit,
            f"{sizes[0] if sizes else None} = {limit} bytes (APILimits.maxRequestBodyBytes)",
            f"client_max_body_size {sizes} against the API's {limit} bytes")
    for directive in ("client_header_timeout", "client_body_timeout", "proxy_connect_timeout", "proxy_read_timeout", "proxy_send_timeout"):
        if not re.search(rf"^\s*{directive}\s+\S+;", code, re.M):
            raise ProofFailed(f"the example sets no {directive}")
    proxied = re.findall(r"^\s*location\s+([^{]+?)\s*\{[^}]*proxy_pass", code, re.M)
    h.check(section, "the example proxies only /v1/ and /openapi.json", sorted(proxied) == ["/v1/", "= /openapi.json"],
            f"proxied locations {proxied}", f"proxied locations {proxied}")

    # The API, connected to the TLS cluster as the deployment artifacts do: the files in PGSSL* variables.
    h.api_port, h.api_ops_port, nginx_port = free_port(), free_port(), free_port()
    api_env = h.base_env(
        DATABASE_URL=f"postgres://securepush@localhost:{h.tls_db.port}/securepush?sslmode=verify-full",
        PGSSLROOTCERT=ca[0], PGSSLCERT=pki["client"][0], PGSSLKEY=pki["client"][1],
        SECUREPUSH_USER_JWT_SECRET=secrets.token_hex(32), SECUREPUSH_HOST="127.0.0.1", SECUREPUSH_PORT=h.api_port,
        SECUREPUSH_OPS_PORT=h.api_ops_port, SECUREPUSH_TRUSTED_PROXIES="127.0.0.1", SECUREPUSH_PROVIDERS="",
        SECUREPUSH_AUTH_FREE_FAILURES=3, SECUREPUSH_AUTH_BLOCK="60s", SECUREPUSH_LOG_LEVEL="info")
    status, output = h.run("a-migrate", ["migrate"], api_env)
    if status != 0:
        raise ProofFailed(f"migrate before the API: exit {status}: {output[-800:]}")
    api = h.start("a-api", [h.binary, "serve", "--role", "api"], api_env)
    wait_for("the API's /readyz on its operations port", lambda: h.alive("api", api) and _get(h.api_ops_port, "/readyz")[0] == 200)

    # nginx with the example file, its listen lines, certificate paths and upstream port replaced.
    folder = os.path.join(h.work, "nginx")
    os.makedirs(os.path.join(folder, "tmp"))
    site = example
    site = substitute(site, r"^(\s*)listen 443 ssl http2;$", rf"\1listen 127.0.0.1:{nginx_port} ssl http2;", "IPv4 listen line `listen 443 ssl http2;`")
    site = substitute(site, r"^(\s*)listen \[::\]:443 ssl http2;$", r"\1# (IPv6 listen line left out by the check)", "IPv6 listen line `listen [::]:443 ssl http2;`")
    site = substitute(site, r"^(\s*)ssl_certificate \S+;$", rf"\1ssl_certificate {server[0]};", "ssl_certificate line")
    site = substitute(site, r"^(\s*)ssl_certificate_key \S+;$", rf"\1ssl_certificate_key {server[1]};", "ssl_certificate_key line")
    site = substitute(site, r"^(\s*)server 127\.0\.0\.1:8080;$", rf"\1server 127.0.0.1:{h.api_port};", "upstream `server 127.0.0.1:8080;`")
    site_path = os.path.join(folder, "nginx-securepush.conf")
    open(site_path, "w", encoding="utf-8").write(site)
    shutil.copyfile(site_path, os.path.join(h.output, "nginx-securepush.conf"))
    temp = os.path.join(folder, "tmp")
    main_conf = os.path.join(folder, "nginx.conf")
    open(main_conf, "w", encoding="utf-8").write(f"""# The check's nginx.conf: Debian's http-level defaults, then the example file (ports and paths replaced).
worker_processes 1;
events {{ worker_connections 256; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log {folder}/access.log;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    include {site_path};
}}
""")
    shutil.copyfile(main_conf, os.path.join(h.output, "nginx.conf"))
    nginx = find_nginx()
    error_log = os.path.join(h.output, "nginx-error.log")
    command = [nginx, "-p", folder + "/", "-c", main_conf, "-e", error_log,
               "-g", f"daemon off; pid {folder}/nginx.pid; error_log {error_log} info;"]
    tested = subprocess.run(command + ["-t"], capture_output=True, text=True)
    version = subprocess.run([nginx, "-v"], capture_output=True, text=True).stderr.strip()
    h.check(section, "nginx -t accepts the example file", tested.returncode == 0, f"{version}: syntax ok",
            f"nginx -t failed: {tested.stderr.strip()[-800:]}")
    proxy = h.start("a-nginx", command, h.base_env())

    verified = ssl.create_default_context(cafile=ca[0])
    wait_for(f"nginx on 127.0.0.1:{nginx_port}", lambda: h.alive("nginx", proxy) and handshake(nginx_port, verified))

    # TLS: verified against the local CA, refused by a client that does not trust it.
    for host in ("localhost", "127.0.0.1"):
        status, headers, body = https(nginx_port, "/openapi.json", verified, host=host)
        document = json.loads(body) if status == 200 else {}
        h.check(section, f"https://{host}/openapi.json through nginx, verified against the local CA",
                status == 200 and "openapi" in document and "paths" in document,
                f"200, OpenAPI {document.get('openapi')} with {len(document.get('paths', {}))} paths", f"{status} {body[:200]!r}")
    for name, context in (("the system's roots", ssl.create_default_context()), ("another CA", ssl.create_default_context(cafile=rogue[0]))):
        try:
            https(nginx_port, "/openapi.json", context)
        except ssl.SSLCertVerificationError as error:
            h.passed(section, f"a client trusting {name} only is refused", f"{error.verify_message or error}")
        else:
            raise ProofFailed(f"a client trusting {name} only completed a request: the local CA's certificate was not checked")
    for version_name, version in (("TLS 1.2", ssl.TLSVersion.TLSv1_2), ("TLS 1.3", ssl.TLSVersion.TLSv1_3)):
        context = ssl.create_default_context(cafile=ca[0])
        context.minimum_version = context.maximum_version = version
        negotiated, _ = handshake(nginx_port, context)
        h.check(section, f"{version_name} accepted", negotiated == {"TLS 1.2": "TLSv1.2", "TLS 1.3": "TLSv1.3"}[version_name],
                negotiated, f"negotiated {negotiated}")
    old = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    old.load_verify_locations(ca[0])
    try:
        old.set_ciphers("DEFAULT:@SECLEVEL=0")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # deprecated, which is the point
            old.minimum_version = old.maximum_version = ssl.TLSVersion.TLSv1_1
    except (ssl.SSLError, ValueError) as error:
        old = None
        h.passed(section, "TLS 1.1 refused", f"this client cannot offer TLS 1.1 ({error}): the ssl_protocols line above is the proof")
    if old is not None:
        try:
            handshake(nginx_port, old)
        except ssl.SSLError as error:
            if "NO_PROTOCOLS_AVAILABLE" in str(error):
                h.passed(section, "TLS 1.1 refused", "this client's OpenSSL cannot offer TLS 1.1: the ssl_protocols line above is the proof")
            else:
                h.passed(section, "TLS 1.1 refused", f"nginx refused the handshake: {error.reason or error}")
        else:
            raise ProofFailed("TLS 1.1 refused: a TLS 1.1 handshake succeeded")
    for offered, expected in ((["h2", "http/1.1"], "h2"), (["http/1.1"], "http/1.1")):
        context = ssl.create_default_context(cafile=ca[0])
        context.set_alpn_protocols(offered)
        _, chosen = handshake(nginx_port, context)
        h.check(section, f"ALPN {expected} when the client offers {','.join(offered)}", chosen == expected, f"nginx chose {chosen}",
                f"nginx chose {chosen}")

    # The operations routes are not proxied: the API's request counter does not move for them. Then one unknown
    # /v1/ route, which nginx forwards: the counter must move by exactly that one (so it would have seen them).
    before = requests_seen(h)
    answers = []
    for path in ("/status", "/status.html", "/metrics", "/healthz", "/readyz", "/v1/../status", "/demo"):
        status, _, body = https(nginx_port, path, verified)
        answers.append(path)
        if status != 404:
            raise ProofFailed(f"the operations routes are not proxied: {path} through nginx answered {status} {body[:200]!r}")
    status, _, _ = https(nginx_port, "/v1/no-such-route", verified)
    wait_for("the API to count the unknown /v1/ route nginx forwarded", lambda: requests_seen(h) > before, timeout=10)
    time.sleep(0.5)
    after = requests_seen(h)
    h.check(section, "the operations routes are not proxied", after == before + 1,
            f"404 from nginx for {', '.join(answers)}: the API's request counter moved by 1 ({before:g} to {after:g}), for the "
            f"control /v1/no-such-route ({status}) alone",
            f"the API's request counter moved from {before:g} to {after:g} for {len(answers)} operations routes and one control: "
            "nginx forwarded an operations route")

    # The body limit: nginx refuses one byte more than the API accepts, and forwards the API's limit.
    status, _, body = https(nginx_port, "/v1/notifications/fetch", verified, method="POST", body=b"x" * limit,
                            headers={"Content-Type": "application/json"}, source="127.0.0.5")
    h.check(section, f"a body of {limit} bytes reaches the API", status != 413 and '"error"' in body,
            f"{status} from the API", f"{status} {body[:200]!r}")
    try:
        status, _, body = https(nginx_port, "/v1/notifications/fetch", verified, method="POST", body=b"x" * (limit + 1),
                                headers={"Content-Type": "application/json"}, source="127.0.0.5")
    except (ConnectionError, http.client.HTTPException) as error:
        raise ProofFailed(f"a body of {limit + 1} bytes: the connection failed ({error}) instead of a 413")
    h.check(section, f"a body of {limit + 1} bytes is refused by nginx", status == 413 and '"error"' not in body,
            "413 from nginx (not the API's JSON)", f"{status} {body[:200]!r}")

    # The client address. Failed user-token attempts are throttled per client address (AuthThrottle, its rows in
    # securepush.auth_failures keyed by a bucket of the address): after 3 free failures the 4th blocks the
    # address (429). Each attempt below forges a different X-Forwarded-For.
    client, neighbour, proxy_host = "127.0.0.2", "127.0.0.3", "127.0.0.1"
    forged = [f"203.0.113.{n}" for n in range(10, 16)]
    forged_inside = [f"203.0.113.{n}" for n in range(20, 26)]
    control = "198.51.100.77"
    addresses = forged + forged_inside + [client, neighbour, proxy_host, "127.0.0.5", control]
    if len({throttle_bucket(address) for address in addresses}) != len(addresses):
        raise ProofFailed("two of the check's addresses share a throttle bucket: pick others")

    def attempt(source, forged_for, direct=False):
        headers = {"Authorization": "Bearer not-a-valid-token", "Content-Type": "application/json", "X-Forwarded-For": forged_for}
        if direct:
            connection = http.client.HTTPConnection("127.0.0.1", h.api_port, timeout=15)
            try:
                connection.request("POST", "/v1/devices", body=b"{}", headers=headers)
                return connection.getresponse().status
            finally:
                connection.close()
        return https(nginx_port, "/v1/devices", verified, method="POST", body=b"{}", headers=headers, source=source)[0]

    def throttle_rows():
        return dict(line.split("|") for line in h.tls_db.psql("SELECT key, failures FROM securepush.auth_failures").splitlines() if line)

    def throttled_together(source, forged_addresses, what):
        """Six failures from `source` through nginx, each with another forged header: the 4th on are 429, the
        failures are counted for `source`, and no row names a forged address."""
        statuses = [attempt(source, address) for address in forged_addresses]
        rows = throttle_rows()
        believed = [address for address in forged_addresses if throttle_bucket(address) in rows]
        h.check(section, what, statuses[:3] == [401] * 3 and statuses[3:] == [429] * 3 and not believed and throttle_bucket(source) in rows,
                f"6 failures from {source}, each forging another X-Forwarded-For: {statuses}; securepush.auth_failures counts "
                f"{rows.get(throttle_bucket(source))} for {source}'s bucket and none for a forged address",
                f"statuses {statuses}; failures counted for the forged addresses {believed}, "
                f"{rows.get(throttle_bucket(source), 'none')} for {source}: "
                + ("the API believed the client's X-Forwarded-For" if believed else
                   f"the API did not count them for {source} (SECUREPUSH_TRUSTED_PROXIES=127.0.0.1 missing?)"))
        return rows

    rows = throttled_together(client, forged, "a forged X-Forwarded-For is not believed through nginx")
    status = attempt(neighbour, forged[0])
    h.check(section, "the API uses the address nginx forwards, not its peer's", status == 401 and throttle_bucket(proxy_host) not in rows,
            f"{neighbour} through the same nginx: {status} while {client} is blocked; no failure was counted for nginx's own {proxy_host}",
            f"{neighbour} through the same nginx answered {status}: the API counted every client as nginx's {proxy_host} "
            "(is SECUREPUSH_TRUSTED_PROXIES=127.0.0.1 set?)")
    status = attempt(None, control, direct=True)
    h.check(section, "control: straight to the API (peer 127.0.0.1, trusted) a client's X-Forwarded-For is believed",
            status == 401 and throttle_bucket(control) in throttle_rows(),
            f"{status}, and the failure was counted for {control}: what nginx must keep clients from doing",
            f"{status}; no failure counted for {control}: the control cannot show the header would be believed")
    # A client whose own address is trusted (on the proxy's host here; inside a trusted block such as 10.0.0.0/8
    # in general): had nginx appended to the client's header ($proxy_add_x_forwarded_for) instead of replacing
    # it, the API would skip the trusted hop and believe the forged one.
    throttled_together(proxy_host, forged_inside, "X-Forwarded-For is replaced, not appended to (a client on a trusted address cannot forge it)")


def _get(port, path):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read().decode(errors="replace")
    finally:
        connection.close()


# --- (c) Boot with a late database ------------------------------------------------------------------------------------

def late_database(h):
    section = "c"
    port = free_port()
    late = Cluster(h, "late", port, {}, "local all all trust\nhost all all 127.0.0.1/32 trust\n")
    url = f"postgres://securepush@127.0.0.1:{port}/securepush?sslmode=disable"
    secret = secrets.token_hex(32)

    # Without the wait: a clear failure within seconds.
    ops_port = free_port()
    started = time.monotonic()
    status, output = h.run("c-serve-no-wait", ["serve", "--role", "api"], h.base_env(
        DATABASE_URL=url, SECUREPUSH_USER_JWT_SECRET=secret, SECUREPUSH_PORT=free_port(), SECUREPUSH_OPS_PORT=ops_port, SECUREPUSH_PROVIDERS=""),
        timeout=30)
    took = time.monotonic() - started
    h.check(section, "serve without SECUREPUSH_STARTUP_WAIT fails at once with a clear message",
            0 < status < 128 and took < 15 and "DATABASE_URL" in output,
            f"exit {status} after {took:.1f} s: {next((l for l in output.splitlines() if 'DATABASE_URL' in l), '').strip()[:240]}",
            f"exit {status} after {took:.1f} s: {output.strip()[-600:]}")

    # With the wait, before PostgreSQL runs.
    api_port, ops_port = free_port(), free_port()
    env = h.base_env(DATABASE_URL=url, SECUREPUSH_USER_JWT_SECRET=secret, SECUREPUSH_PORT=api_port, SECUREPUSH_OPS_PORT=ops_port,
                     SECUREPUSH_PROVIDERS="", SECUREPUSH_STARTUP_WAIT="60s", SECUREPUSH_LOG_LEVEL="info")
    serve = h.start("c-serve-late", [h.binary, "serve", "--role", "api"], env)
    wait_for("the API to log that it waits for the database",
             lambda: h.alive("serve", serve) and "waiting for the database" in tail(serve.log_path, 10**6), timeout=30)
    waiting_line = next(line for line in tail(serve.log_path, 10**6).splitlines() if "waiting for the database" in line)
    h.passed(section, "serve with SECUREPUSH_STARTUP_WAIT=60s waits for a database that is not there", waiting_line.strip()[:300])
    time.sleep(3)  # a retry or two while nothing listens: it must still be waiting, not gone
    h.alive("serve (still waiting)", serve)

    pg_started = time.monotonic()
    late.start()
    status, output = h.run("c-check-unmigrated", ["migrate", "--check"], h.base_env(DATABASE_URL=url))
    h.check(section, "migrate --check on the unmigrated database exits 1 naming the pending migrations",
            status == 1 and re.search(r"\b001_\w+", output) is not None,
            f"exit 1: {next((l for l in output.splitlines() if '001_' in l), '').strip()[:200]}…", f"exit {status}: {output.strip()[-600:]}")

    waiter = h.start("c-check-waiting", [h.binary, "migrate", "--check"],
                     h.base_env(DATABASE_URL=url, SECUREPUSH_STARTUP_WAIT="60s", SECUREPUSH_LOG_LEVEL="notice"))
    wait_for("migrate --check to log that it waits", lambda: "waiting for the database" in tail(waiter.log_path, 10**6)
             or waiter.poll() is not None, timeout=30)
    if waiter.poll() is not None:
        raise ProofFailed(f"migrate --check with SECUREPUSH_STARTUP_WAIT ended ({waiter.returncode}) before any migration: {tail(waiter.log_path)}")

    status, output = h.run("c-migrate", ["migrate"], h.base_env(DATABASE_URL=url))
    if status != 0:
        raise ProofFailed(f"migrate on the late database: exit {status}: {output[-600:]}")
    migrated = time.monotonic()
    try:
        waiter.wait(timeout=20)
    except subprocess.TimeoutExpired as expired:
        raise ProofFailed("migrate --check with SECUREPUSH_STARTUP_WAIT did not end within 20 s of the migration") from expired
    h.check(section, "migrate --check with SECUREPUSH_STARTUP_WAIT waits for another process's migration, then exits 0",
            waiter.returncode == 0, f"exit 0, {time.monotonic() - migrated:.1f} s after the migration ended",
            f"exit {waiter.returncode}: {tail(waiter.log_path)}")

    wait_for("the late API's /readyz on its operations port", lambda: h.alive("serve", serve) and _get(ops_port, "/readyz")[0] == 200, timeout=60)
    ready = time.monotonic()
    h.passed(section, "serve becomes ready once PostgreSQL is up and migrated",
             f"/readyz 200 {ready - pg_started:.1f} s after PostgreSQL was started ({ready - migrated:.1f} s after migrate ended); "
             f"{'it logged that the database is ready' if 'the database is ready' in tail(serve.log_path, 10**6) else 'no ready line in its log'}")
    status, output = h.run("c-check-migrated", ["migrate", "--check"], h.base_env(DATABASE_URL=url))
    h.check(section, "migrate --check on the migrated database exits 0", status == 0, f"exit 0 ({answer(output)})", f"exit {status}: {output.strip()[-600:]}")
    h.stop(serve)


def interrupted(*_):
    raise KeyboardInterrupt


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--securepush", required=True, help="the securepush binary")
    parser.add_argument("--pg-bindir", required=True, help="PostgreSQL's server binaries (initdb, pg_ctl, psql)")
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), help="the repository")
    parser.add_argument("--output", required=True, help="a folder for the logs")
    parser.add_argument("--sections", default="abc", help="which of (a), (b), (c) to run (default: all)")
    args = parser.parse_args()
    args.output = os.path.abspath(args.output)
    args.securepush = os.path.abspath(args.securepush)
    shutil.rmtree(args.output, ignore_errors=True)
    # ops/deploy-check (or a CI runner) may stop us with SIGTERM: clean up as for an interrupt.
    signal.signal(signal.SIGTERM, interrupted)
    h = Harness(args)
    failed = []
    try:
        try:
            pki = {"ca": h.make_ca("ca", "SecurePush deploy-check CA"), "rogue": h.make_ca("rogue", "Some other CA")}
            pki["nginx"] = h.make_leaf("nginx", pki["ca"], "localhost", "serverAuth", "DNS:localhost,IP:127.0.0.1")
            pki["postgres"] = h.make_leaf("postgres", pki["ca"], "localhost", "serverAuth", "DNS:localhost,IP:127.0.0.1")
            pki["client"] = h.make_leaf("client", pki["ca"], "securepush", "clientAuth")
            # PostgreSQL's copies of its files, owned by its user (it refuses a key others can read).
            certs = os.path.join(h.work, "pg-certs")
            os.makedirs(certs)
            for source, target in ((pki["postgres"][0], "server.crt"), (pki["postgres"][1], "server.key"), (pki["ca"][0], "ca.crt")):
                shutil.copyfile(source, os.path.join(certs, target))
                h.give_to_pg_user(os.path.join(certs, target))
            os.chmod(os.path.join(certs, "server.key"), 0o600)
            h.give_to_pg_user(certs)
            h.tls_db = Cluster(h, "tls", free_port(), {
                "ssl": "on", "ssl_cert_file": f"{certs}/server.crt", "ssl_key_file": f"{certs}/server.key", "ssl_ca_file": f"{certs}/ca.crt",
                "ssl_min_protocol_version": "TLSv1.2"},
                "# TCP only over TLS, authenticated by a client certificate of the CA whose CN is the user.\n"
                "local all all trust\nhostssl all all 127.0.0.1/32 cert\n")
            h.tls_db.start()
        except ProofFailed as error:
            failed.append(f"setup: {error}")
            raise
        for section, run in (("b", lambda: database_tls(h, pki)), ("a", lambda: api_behind_nginx(h, pki)), ("c", lambda: late_database(h))):
            if section not in args.sections:
                continue
            try:
                run()
            except ProofFailed as error:
                failed.append(f"({section}) {error}")
                print(f"tls-and-boot: ({section}) FAILED: {error}", file=sys.stderr, flush=True)
            except Exception as error:  # noqa: BLE001 - a harness error fails the section, with its reason
                failed.append(f"({section}) {type(error).__name__}: {error}")
                print(f"tls-and-boot: ({section}) FAILED: {type(error).__name__}: {error}", file=sys.stderr, flush=True)
    except ProofFailed:
        pass
    finally:
        h.cleanup()
    with open(os.path.join(args.output, "summary.txt"), "w", encoding="utf-8") as summary:
        for section, proof, ok, detail in h.results:
            summary.write(f"({section}) ok: {proof}: {detail}\n")
        for failure in failed:
            summary.write(f"FAILED {failure}\n")
        if getattr(h, "key_mode_note", None):
            summary.write(f"note: {h.key_mode_note}\n")
    if failed:
        print(f"tls-and-boot: {len(failed)} proof(s) failed (logs in {args.output}):", file=sys.stderr)
        for failure in failed:
            print(f"  - {failure}", file=sys.stderr)
        sys.exit(1)
    print(f"tls-and-boot: {len(h.results)} proofs passed (logs in {args.output})")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        print("tls-and-boot: interrupted (its processes and clusters stopped)", file=sys.stderr)
        sys.exit(130)
