#!/usr/bin/env python3
"""Signs relay requests as a test installation, for fuzzing the relay's API (ops/fuzz, the relay steps).

As a library: `Signer(installation_id, key_text).token(method, path, body)` makes the request token of
`RelayRequestToken` (ES256; header `kid` and claim `iss` the installation id; `htm`, `htu`, `bh` = base64url
SHA-256 of the body; `jti` 128 random bits; a minute's lifetime), independently of the Swift signer.

As a program: a loopback proxy in front of the relay. A request that carries `Authorization: Bearer sign-me`
is forwarded with a fresh token for its exact method, path and body bytes, so schemathesis gets past the
signature and fuzzes what lies behind it; any other request (no Authorization, another value) is forwarded
untouched, so the checks that drop or spoil the credential still reach the relay's own refusal. With
--bound-token, the string "bound-token" in a body (the contract's example token) becomes that token first, so
generated pushes reach the envelope code behind the binding check.

  relay_signer.py --listen-port P --upstream http://127.0.0.1:R --installation ID --key-file F [--bound-token T]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import http.client
import http.server
import json
import os
import sys
import time
import urllib.parse

import jwt
from cryptography.hazmat.primitives.asymmetric import ec

PREFIX = "securepush-relay-key-1:"
SIGN_ME = "Bearer sign-me"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Signer:
    def __init__(self, installation: str, key_text: str):
        text = key_text.strip()
        if not text.startswith(PREFIX):
            raise ValueError("not a relay installation key")
        raw = base64.urlsafe_b64decode(text[len(PREFIX):] + "=" * (-len(text[len(PREFIX):]) % 4))
        self.key = ec.derive_private_key(int.from_bytes(raw, "big"), ec.SECP256R1())
        self.installation = installation.lower()

    def token(self, method: str, path: str, body: bytes, now: float | None = None, **changes) -> str:
        now = time.time() if now is None else now
        claims = {"iss": self.installation, "iat": int(now), "exp": int(now) + 60, "jti": b64url(os.urandom(16)),
                  "htm": method, "htu": path, "bh": b64url(hashlib.sha256(body).digest())}
        claims.update(changes)
        return jwt.encode(claims, self.key, algorithm="ES256", headers={"kid": self.installation})


def serve(port: int, upstream: str, signer: Signer, bound_token: str = "") -> None:
    target = urllib.parse.urlsplit(upstream)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet: schemathesis reports what matters
            pass

        def forward(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length > 0 else b""
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length", "connection")}
            if bound_token:
                body = body.replace(b'"bound-token"', json.dumps(bound_token).encode())
            if self.headers.get("Authorization") == SIGN_ME:
                path = urllib.parse.urlsplit(self.path).path
                headers["Authorization"] = "Bearer " + signer.token(self.command, path, body)
            connection = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
            try:
                connection.request(self.command, self.path, body=body if body or self.command == "POST" else None, headers=headers)
                response = connection.getresponse()
                data = response.read()
                self.send_response(response.status)
                for key, value in response.getheaders():
                    if key.lower() not in ("content-length", "connection", "transfer-encoding"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (OSError, http.client.HTTPException) as error:
                # The relay closed or reset the connection: a crash, which the run must see as a failure.
                message = f'{{"error":{{"code":"relay_unreachable","message":"{type(error).__name__}"}}}}'.encode()
                self.send_response(502)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(message)))
                self.end_headers()
                self.wfile.write(message)
            finally:
                connection.close()

        def __getattr__(self, name):  # every method (TRACE, PROPFIND, ...) goes to the relay, whose answer counts
            if name.startswith("do_"):
                return self.forward
            raise AttributeError(name)

    http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen-port", type=int, required=True)
    parser.add_argument("--upstream", required=True, help="the relay, e.g. http://127.0.0.1:8090 (loopback only)")
    parser.add_argument("--installation", required=True)
    parser.add_argument("--key-file", required=True)
    parser.add_argument("--bound-token", default="", help="replaces \"bound-token\" in request bodies")
    args = parser.parse_args()
    if urllib.parse.urlsplit(args.upstream).hostname not in ("127.0.0.1", "localhost", "::1"):
        print("relay_signer: --upstream must be on the loopback interface", file=sys.stderr)
        return 2
    with open(args.key_file) as file:
        signer = Signer(args.installation, file.read())
    serve(args.listen_port, args.upstream, signer, args.bound_token)
    return 0


if __name__ == "__main__":
    sys.exit(main())
