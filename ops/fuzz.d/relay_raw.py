#!/usr/bin/env python3
"""Raw requests against a live relay (`securepush serve --role relay`), signed as a test installation.

Every field of a push and of a token change gets the values a hostile or broken installation could send
(integers at and beyond 64 bits, negative numbers, fractions, exponents, strings, arrays, objects, null,
booleans, long and odd strings), in a correctly signed request, so the relay's decoding and range checks
are what is tested, not the signature; then tokens that are wrong in every way (unsigned, `alg: none`,
expired, for another path or body, another installation's kid), oversize bodies and framing tricks on the
relay's routes; then --random seeded mutations of a valid batch.

Pass criteria (ops/fuzz.d/raw_http.py's `judge`): never a 5xx, a 4xx carries the error shape, an answer
within --timeout, a request marked malformed is refused (4xx), and the relay's /healthz answers after each
closed connection and after the run: a crash fails the run.

  relay_raw.py --base-url http://127.0.0.1:8090 --installation ID --key-file F --token HEX [--seed N] [--random N]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
import urllib.parse
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from raw_http import ANY, REJECT, Case, Req, dumps, exchange, healthy, judge, print_failures, show  # noqa: E402
from relay_signer import Signer  # noqa: E402

# Values no push field may crash on: each replaces one field of a valid push or token change.
HOSTILE = [
    2**63 - 1, -(2**63), 2**63, 2**64, -(2**64), 10**40, -1, 0, 1, 2**31, 2**53 + 1,
    0.5, -0.0, 1e308, -1e308, "1e400", 1.7976931348623157e308,
    "", " ", "0", "-1", "9223372036854775807", "\u0000", "\u202e", "a" * 5000, "é" * 2049,
    [], [1], {}, {"a": "b"}, None, True, False,
]
RAW_NUMBERS = [b"1e400", b"-1e400", b"123456789012345678901234567890", b"0.000000000000000000001", b"-0", b"1E2", b"01"]


class Catalogue:
    def __init__(self, args, signer: Signer, host_header: bytes):
        self.signer = signer
        self.host_header = host_header
        self.token = args.token
        self.rng = random.Random(args.seed)
        self.cases: list[tuple[Case, object]] = []

    def push(self) -> dict:
        return {"platform": "apns", "token": self.token, "options": {}, "id": str(uuid.UUID(int=self.rng.getrandbits(128))),
                "expires": int(time.time()) + 3600, "priority": 0, "urgency": "active", "attempt": 1}

    def request(self, path: str, body: bytes, authorization: str | None = "sign", extra: list[bytes] | None = None) -> Req:
        headers = [b"Host: " + self.host_header, b"Content-Type: application/json", b"Connection: close"]
        if authorization == "sign":
            authorization = "Bearer " + self.signer.token("POST", path, body)
        if authorization is not None:
            headers.append(b"Authorization: " + authorization.encode())
        return Req(b"POST " + path.encode() + b" HTTP/1.1", headers + (extra or [])).with_body(body)

    def add(self, family: str, name: str, route: str, make, expect: str = ANY):
        """A case whose request `make()` builds (and signs) when it is sent: a token lives a minute."""
        self.cases.append((Case(name, family, route, b"", expect, index=len(self.cases)), make))

    # --- families ---

    def fields(self):
        """Each field of a push and of a token change, replaced by each hostile value (signed)."""
        for field in ["platform", "token", "options", "id", "clear", "expires", "priority", "badge", "urgency", "collapse", "attempt", "sealed"]:
            for value in HOSTILE + [{"project": "../../x"}, {"topic": 5}, [str(uuid.uuid4())] * 200]:
                push = self.push()
                push[field] = value
                self.add("fields", f"push.{field}={show(dumps(value), 30)}", "pushes", lambda push=push: self.request("/v1/relay/pushes", dumps({"pushes": [push]})))
        for field in ["expires", "priority", "badge", "attempt"]:
            for raw in RAW_NUMBERS:
                push = self.push()
                push[field] = "__RAW__"
                body = dumps({"pushes": [push]}).replace(b'"__RAW__"', raw)
                self.add("fields", f"push.{field} raw {raw.decode()}", "pushes", lambda body=body: self.request("/v1/relay/pushes", body))
        for field in ["platform", "token"]:
            for value in HOSTILE:
                change = {"bind": [{"platform": "apns", "token": self.token}], "release": []}
                change["bind"][0][field] = value
                self.add("fields", f"tokens.{field}={show(dumps(value), 30)}", "tokens", lambda change=change: self.request("/v1/relay/tokens", dumps(change)))
        for key in ["pushes", "bind", "release"]:
            for value in HOSTILE:
                route = "pushes" if key == "pushes" else "tokens"
                body = {key: value} if key == "pushes" else {"bind": [], "release": [], key: value}
                self.add("fields", f"{key}={show(dumps(value), 30)}", route, lambda route=route, body=body: self.request(f"/v1/relay/{route}", dumps(body)))
        many = [self.push() for _ in range(501)]
        self.add("fields", "501 pushes", "pushes", lambda: self.request("/v1/relay/pushes", dumps({"pushes": many})), REJECT)
        tokens = [{"platform": "apns", "token": f"{n:064x}"} for n in range(1001)]
        self.add("fields", "1001 tokens", "tokens", lambda: self.request("/v1/relay/tokens", dumps({"bind": tokens, "release": []})), REJECT)

    def tokens(self):
        """Request tokens wrong in every way: each must be a 401 (REJECT), never a crash."""
        body = dumps({"pushes": [self.push()]})
        path = "/v1/relay/pushes"
        sign = self.signer.token
        wrong = {
            "no token": lambda now: None, "empty bearer": lambda now: "Bearer ", "garbage": lambda now: "Bearer x.y.z",
            "basic": lambda now: "Basic YTpi", "alg none": lambda now: "Bearer eyJhbGciOiJub25lIiwia2lkIjoiMDAwIn0.e30.",
            "expired": lambda now: "Bearer " + sign("POST", path, body, now=now - 3600),
            "from the future": lambda now: "Bearer " + sign("POST", path, body, now=now + 3600),
            "another path": lambda now: "Bearer " + sign("POST", "/v1/relay/tokens", body),
            "another body": lambda now: "Bearer " + sign("POST", path, body + b" "),
            "another method": lambda now: "Bearer " + sign("GET", path, body),
            "lifetime of a day": lambda now: "Bearer " + sign("POST", path, body, exp=int(now) + 86_400),
            "exp beyond 64 bits": lambda now: "Bearer " + sign("POST", path, body, exp=2**70),
            "iat beyond 64 bits": lambda now: "Bearer " + sign("POST", path, body, iat=-(2**70)),
            "another issuer": lambda now: "Bearer " + sign("POST", path, body, iss=str(uuid.uuid4())),
            "huge": lambda now: "Bearer " + "a" * 8000,
        }
        for name, authorization in wrong.items():
            self.add("tokens", name, "pushes", lambda authorization=authorization: self.request(path, body, authorization(time.time())), REJECT)
        replay: dict[str, str] = {}

        def once() -> Req:
            replay.setdefault("token", "Bearer " + sign("POST", path, body))
            return self.request(path, body, replay["token"])

        self.add("tokens", "first use", "pushes", once)
        self.add("tokens", "replayed", "pushes", once, REJECT)

    def framing(self):
        """Bodies and framing on the relay's routes."""
        path = "/v1/relay/pushes"
        big = b'{"pushes":[],"pad":"' + b"a" * (1 << 20) + b'"}'
        self.add("framing", "body over 1 MiB", "pushes", lambda: self.request(path, big), REJECT)
        for name, body in [("empty", b""), ("not JSON", b"{"), ("array", b"[]"), ("null", b"null"), ("NUL", b"\x00"),
                           ("deep", b'{"pushes":' + b"[" * 5000 + b"]" * 5000 + b"}"), ("latin-1", b'{"pushes":[{"token":"\xe9"}]}')]:
            self.add("framing", f"body {name}", "pushes", lambda body=body: self.request(path, body), REJECT)
        body = dumps({"pushes": [self.push()]})
        self.add("framing", "Content-Length short", "pushes",
                 lambda: self.request(path, body).set(b"Content-Length", str(len(body) - 5).encode()))
        self.add("framing", "chunked", "pushes",
                 lambda: self.request(path, body).drop(b"Content-Length").chunked(b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)))
        for method in [b"GET", b"PUT", b"DELETE"]:
            def other(method=method) -> Req:
                req = self.request(path, body)
                req.line = method + b" " + path.encode() + b" HTTP/1.1"
                return req
            self.add("framing", f"{method.decode()} {path}", "pushes", other, REJECT)

    def random_mutations(self, count: int):
        """Seeded mutations of a valid batch: fields dropped, replaced, duplicated; every request signed."""
        for n in range(count):
            pushes = [self.push() for _ in range(self.rng.randint(1, 4))]
            for push in pushes:
                for _ in range(self.rng.randint(1, 3)):
                    field = self.rng.choice(list(push) + ["clear", "badge", "collapse", "sealed"])
                    action = self.rng.random()
                    if action < 0.2:
                        push.pop(field, None)
                    else:
                        push[field] = self.rng.choice(HOSTILE + [self.rng.randint(-(2**64), 2**64), self.rng.uniform(-1e20, 1e20)])
            self.add("random", f"random {n}", "pushes", lambda pushes=pushes: self.request("/v1/relay/pushes", dumps({"pushes": pushes})))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--installation", required=True)
    parser.add_argument("--key-file", required=True)
    parser.add_argument("--token", required=True, help="an APNs token the installation bound")
    parser.add_argument("--seed", type=int, default=20261128)
    parser.add_argument("--random", type=int, default=500)
    parser.add_argument("--timeout", type=float, default=12.0)
    args = parser.parse_args()
    url = urllib.parse.urlsplit(args.base_url)
    host, port = url.hostname or "", url.port or 80
    if url.scheme != "http" or host not in ("127.0.0.1", "::1"):
        print("relay-raw: --base-url must be http:// on the loopback interface", file=sys.stderr)
        return 2
    with open(args.key_file) as file:
        signer = Signer(args.installation, file.read())
    catalogue = Catalogue(args, signer, f"{host}:{port}".encode())
    catalogue.fields()
    catalogue.tokens()
    catalogue.framing()
    catalogue.random_mutations(args.random)
    if not healthy(host, port, args.timeout):
        print(f"relay-raw: {args.base_url}/healthz does not answer 200 before the run", file=sys.stderr)
        return 1
    started = time.monotonic()
    failures = []
    statuses: dict[str, int] = {}
    down = False
    for case, make in catalogue.cases:
        case.data = make().bytes()
        outcome = exchange(host, port, case, args.timeout)
        key = str(outcome.responses[0][0]) if outcome.responses else outcome.kind
        statuses[key] = statuses.get(key, 0) + 1
        problems = judge(case, outcome, allow_503=False)
        if outcome.kind in ("refused", "closed", "reset", "timeout") and not healthy(host, port, 5.0):
            problems.append("the relay stopped answering /healthz after this case (crashed?)")
            down = True
        if problems:
            failures.append((case, problems, outcome))
        if down:
            break
    alive = not down and healthy(host, port, args.timeout)
    print_failures(failures, 300)
    distribution = ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items()))
    print(f"relay-raw: outcomes {distribution} in {time.monotonic() - started:.1f} s")
    if not alive:
        print("relay-raw: the relay is down after the run")
    print(f"relay-raw: {len(catalogue.cases)} cases, {len(failures)} failures")
    return 0 if alive and not failures else 1


if __name__ == "__main__":
    sys.exit(main())
