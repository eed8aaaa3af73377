#!/usr/bin/env python3
"""Malformed HTTP/1.1 requests over raw sockets against a live `securepush serve` (standard library only).

What schemathesis cannot send: request-line garbage, header names and values with NUL and other control
bytes, obs-fold, very long or odd headers, conflicting Content-Length / Transfer-Encoding, overflowing,
negative and garbage chunk sizes, chunk extensions, truncated chunks, bad trailers, odd Authorization
values, HS256 user JWTs (signed with the server's secret) whose claims hold NUL, control characters, huge
numbers or the wrong types, and odd X-Forwarded-For values. Each case goes to a few representative routes
(POST /v1/devices with a user JWT, GET /v1/notifications, GET /v1/notifications/{id} and
POST /v1/notifications/fetch with a device credential, GET /healthz).

Pass criteria, per case:
  * never a 5xx (a 503 counts too unless --allow-503: it means database trouble, which should not happen);
  * a case marked "reject" (the input is malformed) gets a 4xx or a closed connection, never a 2xx/3xx;
  * a 4xx with a JSON body has the API's error shape {"error": {"code": "...", "message": "..."}};
  * the server answers (or closes) within --timeout seconds and is still up afterwards;
and, after the run, GET /healthz answers 200.

The cases are a fixed catalogue plus --random seeded mutations of valid requests: the same --seed sends
the same bytes every time. Prints `raw-http: N cases, F failures` and each failure (case name, route,
status, the request's bytes); exits 1 on any failure, 2 on a usage error.

  raw_http.py --base-url http://127.0.0.1:8080 --jwt-secret S --device-credential ID.SECRET
              [--issuer I] [--audience A] [--families xff,jwt] [--seed N] [--random N] [--only REGEX]
              [--list] [--show-bytes]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import random
import re
import socket
import sys
import time
import urllib.parse
import uuid
from dataclasses import dataclass, field

CRLF = b"\r\n"
REJECT = "reject"  # malformed: a 4xx or a closed connection
ANY = "any"  # odd but possibly valid: anything but a 5xx
FAMILIES = ("request-line", "headers", "framing", "authorization", "jwt", "xff", "random")
FAR_FUTURE = 4102444800  # 2100-01-01: a fixed `exp` keeps the bytes of every run identical
MAX_RESPONSE_BYTES = 1 << 20


# --- requests ---------------------------------------------------------------------------------------


class Req:
    """A request as raw parts: the request line, header lines (raw bytes) and the body."""

    def __init__(self, line: bytes, headers: list[bytes], body: bytes = b""):
        self.line = line
        self.headers = list(headers)
        self.body = body

    def copy(self) -> "Req":
        return Req(self.line, self.headers, self.body)

    @staticmethod
    def _name(line: bytes) -> bytes:
        return line.split(b":", 1)[0].strip().lower()

    def drop(self, name: bytes) -> "Req":
        self.headers = [h for h in self.headers if self._name(h) != name.lower()]
        return self

    def set(self, name: bytes, value: bytes) -> "Req":
        """Replaces every header of that name with one (kept in place of the first)."""
        lowered = name.lower()
        out, placed = [], False
        for h in self.headers:
            if self._name(h) == lowered:
                if not placed:
                    out.append(name + b": " + value)
                    placed = True
            else:
                out.append(h)
        if not placed:
            out.append(name + b": " + value)
        self.headers = out
        return self

    def add(self, *lines: bytes) -> "Req":
        self.headers.extend(lines)
        return self

    def with_body(self, body: bytes, length: bool = True) -> "Req":
        self.body = body
        self.drop(b"Transfer-Encoding")
        if length:
            self.set(b"Content-Length", str(len(body)).encode())
        else:
            self.drop(b"Content-Length")
        return self

    def chunked(self, chunked_body: bytes, te: bytes = b"chunked") -> "Req":
        self.body = chunked_body
        self.drop(b"Content-Length")
        self.set(b"Transfer-Encoding", te)
        return self

    def bytes(self, eol: bytes = CRLF) -> bytes:
        return self.line + eol + b"".join(h + eol for h in self.headers) + eol + self.body


def chunk(data: bytes, size: bytes | None = None, ext: bytes = b"") -> bytes:
    return (size if size is not None else b"%x" % len(data)) + ext + CRLF + data + CRLF


def chunked_of(data: bytes, pieces: int = 2) -> bytes:
    step = max(1, len(data) // pieces)
    return b"".join(chunk(data[i:i + step]) for i in range(0, len(data), step)) + b"0" + CRLF + CRLF


@dataclass
class Route:
    key: str
    method: bytes
    path: bytes
    auth: str  # "user", "device" or ""
    body: bytes | None = None


@dataclass
class Case:
    name: str
    family: str
    route: str
    data: bytes
    expect: str = ANY
    # Send EOF after the bytes: for requests that are incomplete on purpose (the server would wait).
    half_close: bool = False
    # Read on after the first response, for a second (smuggled) one.
    drain: bool = False
    index: int = 0


# --- JWT ----------------------------------------------------------------------------------------------


def b64url(data: bytes) -> bytes:
    return base64.urlsafe_b64encode(data).rstrip(b"=")


def jwt_raw(secret: bytes, header: bytes, payload: bytes, alg_sign: bool = True) -> bytes:
    signing_input = b64url(header) + b"." + b64url(payload)
    signature = hmac.new(secret, signing_input, hashlib.sha256).digest() if alg_sign else b""
    return signing_input + b"." + b64url(signature)


def dumps(value) -> bytes:
    # Non-ASCII as UTF-8; NUL and control characters as JSON escapes (\u0000), which is valid JSON.
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=True).encode("utf-8", "surrogatepass")


# --- the catalogue ------------------------------------------------------------------------------------


class Catalogue:
    def __init__(self, args, host_header: bytes, notification_id: str):
        self.args = args
        self.secret = args.jwt_secret.encode()
        self.host_header = host_header
        self.device = args.device_credential.encode()
        self.notification_id = notification_id
        self.label = args.label
        self.rng = random.Random(args.seed)
        self.cases: list[Case] = []
        self.routes = {
            "devices": Route("devices", b"POST", b"/v1/devices", "user", b""),
            "notifications": Route("notifications", b"GET", b"/v1/notifications", "device"),
            "read": Route("read", b"GET", b"/v1/notifications/" + notification_id.encode(), "device"),
            "fetch": Route("fetch", b"POST", b"/v1/notifications/fetch", "device", b""),
            "healthz": Route("healthz", b"GET", b"/healthz", ""),
        }

    # Valid baselines. Each case gets its own user (sub) and push token, so registrations stay far below
    # the per-user hourly registration limit and never retire anyone's device.
    def claims(self, n: int) -> dict:
        claims = {"sub": f"raw-{self.label}-{n}", "exp": FAR_FUTURE}
        if self.args.issuer:
            claims["iss"] = self.args.issuer
        if self.args.audience:
            claims["aud"] = self.args.audience
        return claims

    def user_token(self, n: int, **changes) -> bytes:
        claims = self.claims(n)
        for key, value in changes.items():
            if value is DROP:
                claims.pop(key, None)
            else:
                claims[key] = value
        return jwt_raw(self.secret, b'{"alg":"HS256","typ":"JWT"}', dumps(claims))

    def body_for(self, route: Route, n: int) -> bytes:
        if route.key == "devices":
            return dumps({"platform": "simulated", "token": f"raw-{self.label}-{n}"})
        if route.key == "fetch":
            return dumps({"ids": [self.notification_id]})
        return b""

    def base(self, route_key: str, auth: bytes | None = None, n: int | None = None) -> Req:
        route = self.routes[route_key]
        n = len(self.cases) if n is None else n
        headers = [b"Host: " + self.host_header, b"User-Agent: securepush-raw-fuzz/1", b"Accept: application/json", b"Connection: close"]
        if auth is None:
            if route.auth == "user":
                auth = b"Bearer " + self.user_token(n)
            elif route.auth == "device":
                auth = b"Bearer " + self.device
        if auth is not None and auth != b"":
            headers.append(b"Authorization: " + auth)
        req = Req(route.method + b" " + route.path + b" HTTP/1.1", headers)
        if route.body is not None:
            req.set(b"Content-Type", b"application/json").with_body(self.body_for(route, n))
        return req

    def add(self, family: str, name: str, route: str, req, expect: str = ANY, half_close: bool = False, drain: bool = False):
        data = req.bytes() if isinstance(req, Req) else bytes(req)
        name = "".join(c if " " <= c <= "~" else c.encode("unicode_escape").decode() for c in name)  # printable names
        self.cases.append(Case(name, family, route, data, expect, half_close, drain, len(self.cases)))

    # --- families ---

    def request_line(self):
        fam = "request-line"
        for rk in ("healthz", "notifications", "read", "devices"):
            r = self.routes[rk]
            m, p = r.method, r.path

            def line(text: bytes, name: str, expect=REJECT, **kw):
                req = self.base(rk)
                req.line = text
                self.add(fam, name, rk, req, expect, **kw)

            line(m, "method only")
            line(m + b" " + p, "HTTP/0.9 form", half_close=True)
            line(b" " + m + b" " + p + b" HTTP/1.1", "leading space")
            line(m + b"  " + p + b" HTTP/1.1", "double space", ANY)  # RFC 9112 3: may parse on whitespace
            line(m + b" " + p + b" HTTP/1.1 extra", "trailing token")
            line(m + b"\t" + p + b"\tHTTP/1.1", "tabs as separators", ANY)
            line(m[:1] + b"\x00" + m[2:] + b" " + p + b" HTTP/1.1", "NUL in method")
            line(m.lower() + b" " + p + b" HTTP/1.1", "lower-case method", ANY)
            line(b"FUZZ " + p + b" HTTP/1.1", "unknown method", ANY)
            line(b"M" * 2000 + b" " + p + b" HTTP/1.1", "2000-byte method", ANY)
            line(m + b" " + p + b" HTTP/2.0", "HTTP/2.0 version", ANY)
            line(m + b" " + p + b" HTTP/1.12", "version 1.12")
            line(m + b" " + p + b" HTTP/9.9", "version 9.9", ANY)
            line(m + b" " + p + b" HTTP/1", "version without minor")
            line(m + b" " + p + b" http/1.1", "lower-case version")
            line(m + b" " + p + b" HTTP/1.1\x00", "NUL after version")
            line(m + b" " + p + b"\x00 HTTP/1.1", "NUL in target")
            line(m + b" " + p + b"\x01\x7f HTTP/1.1", "control bytes in target")
            line(m + b" " + p + b"\xff\xfe HTTP/1.1", "non-UTF-8 bytes in target", ANY)
            line(m + b" " + p + b"%00 HTTP/1.1", "percent-encoded NUL in path", ANY)
            line(m + b" " + p + b"%ff%fe%c0%af HTTP/1.1", "percent-encoded non-UTF-8", ANY)
            line(m + b" " + p + b"%zz HTTP/1.1", "bad percent-escape", ANY)
            line(m + b" " + p + b"?%00=%00&\x7e=%ff HTTP/1.1", "query with NUL and non-UTF-8", ANY)
            line(m + b" " + p.lstrip(b"/") + b" HTTP/1.1", "target without slash", ANY)
            line(m + b" //" + p.lstrip(b"/") + b" HTTP/1.1", "double slash", ANY)
            line(m + b" http://127.0.0.1" + p + b" HTTP/1.1", "absolute form", ANY)
            line(m + b" http://\x00@127.0.0.1" + p + b" HTTP/1.1", "absolute form with NUL")
            line(m + b" " + p + b"/../../healthz HTTP/1.1", "dot segments", ANY)
            line(m + b" " + p + b"/%2e%2e%2f%2e%2e%2fhealthz HTTP/1.1", "encoded dot segments", ANY)
            line(m + b" " + p + b"?" + b"a=" * 4000 + b" HTTP/1.1", "8 KB query", ANY)
            line(m + b" " + p + b"/" + b"x" * 20000 + b" HTTP/1.1", "20 KB target")
            line(b"CONNECT 127.0.0.1:80 HTTP/1.1", "CONNECT authority form", ANY)
            line(b"OPTIONS * HTTP/1.1", "OPTIONS asterisk", ANY)
            line(b"TRACE " + p + b" HTTP/1.1", "TRACE", ANY)
            line(b"PRI * HTTP/2.0", "HTTP/2 preface line", ANY, half_close=True)
            self.add(fam, "empty lines before the request", rk, CRLF * 3 + self.base(rk).bytes(), ANY)
            self.add(fam, "only empty lines", rk, CRLF * 1000, REJECT, half_close=True)
            self.add(fam, "bare LF line endings", rk, self.base(rk).bytes(b"\n"), ANY)
            self.add(fam, "bare CR line endings", rk, self.base(rk).bytes(b"\r"), REJECT, half_close=True)
            self.add(fam, "TLS ClientHello", rk, bytes.fromhex("16030100a5010000a10303") + bytes(range(32)) + b"\x00" * 40, REJECT, half_close=True)
            self.add(fam, "headers never end", rk, self.base(rk).bytes()[: -2 - len(self.base(rk).body)], REJECT, half_close=True)
            self.add(fam, "request line never ends", rk, m + b" " + p, REJECT, half_close=True)
            self.add(fam, "HTTP/2 preface", rk, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00" * 9, REJECT, half_close=True)
        # Query parameters of the listing.
        for query, expect in [
            (b"limit=ffffffffffffffffff", REJECT), (b"limit=99999999999999999999999", REJECT), (b"limit=-1", REJECT),
            (b"limit=1e2", REJECT), (b"limit=%00", REJECT), (b"limit=%EF%BC%95", REJECT), (b"limit= 5", REJECT),
            (b"limit=5&limit=500", ANY), (b"unread=maybe", REJECT), (b"unread=true%00", REJECT), (b"include=payload%00", REJECT),
            (b"cursor=%00", REJECT), (b"cursor=" + b"A" * 5000, REJECT), (b"cursor=999999999999999999_" + str(uuid.UUID(int=0)).encode(), ANY),
            (b"cursor=-99999999999999999_" + str(uuid.UUID(int=1)).encode(), ANY), (b"cursor=+1_" + str(uuid.UUID(int=2)).encode(), ANY),
            (b"cursor=%D9%A1%D9%A2_" + str(uuid.UUID(int=3)).encode(), REJECT), (b"cursor=1_" + b"\xff" * 36, REJECT),
            (b"cursor=1_%00" + b"0" * 35, REJECT), (b"%", ANY), (b"&&&&=&=", ANY), (b"=" * 3000, ANY),
        ]:
            req = self.base("notifications")
            req.line = b"GET /v1/notifications?" + query + b" HTTP/1.1"
            self.add(fam, "listing query " + query[:40].decode("latin-1"), "notifications", req, expect)
        # Notification ids in the path.
        for ident, expect in [
            (b"%00", REJECT), (b"00000000-0000-0000-0000-00000000000%00", REJECT), (b"x" * 10000, REJECT), (b"%ff%fe", REJECT),
            (str(uuid.UUID(int=0)).upper().encode(), ANY), (b"{" + str(uuid.UUID(int=5)).encode() + b"}", REJECT),
            (str(uuid.UUID(int=6)).replace("-", "").encode(), ANY), (b"..%2f..%2fhealthz", REJECT), (b"-1", REJECT),
        ]:
            req = self.base("read")
            req.line = b"GET /v1/notifications/" + ident + b" HTTP/1.1"
            self.add(fam, "notification id " + ident[:40].decode("latin-1"), "read", req, expect)

    def headers(self):
        fam = "headers"
        controls = [0x01, 0x08, 0x0B, 0x0C, 0x0E, 0x1B, 0x1F, 0x7F]
        for rk in ("healthz", "notifications", "devices"):

            def case(name: str, mutate, expect=REJECT, **kw):
                req = self.base(rk)
                out = mutate(req)
                self.add(fam, name, rk, out if isinstance(out, (Req, bytes)) else req, expect, **kw)

            case("NUL in a header value", lambda r: r.add(b"X-Fuzz: a\x00b"))
            case("NUL alone as a header value", lambda r: r.add(b"X-Fuzz: \x00"))
            case("NUL in a header name", lambda r: r.add(b"X-F\x00zz: a"))
            for c in controls:
                case(f"control byte 0x{c:02x} in a header value", lambda r, c=c: r.add(b"X-Fuzz: a" + bytes([c]) + b"b"))
            case("control byte 0x01 in a header name", lambda r: r.add(b"X-\x01: a"))
            case("tab in a header value", lambda r: r.add(b"X-Fuzz: a\tb"), ANY)
            case("obs-text in a header value", lambda r: r.add(b"X-Fuzz: \x80\xff\xfe caf\xc3\xa9"), ANY)
            case("bare CR in a header value", lambda r: r.add(b"X-Fuzz: a\rb"))
            case("bare LF inside the header section", lambda r: r.add(b"X-Fuzz: a\nX-Other: b"), ANY)
            case("space before the colon", lambda r: r.add(b"X-Fuzz : a"))
            case("space inside a header name", lambda r: r.add(b"X Fuzz: a"))
            case("separator in a header name", lambda r: r.add(b"X(Fuzz): a"))
            case("non-ASCII header name", lambda r: r.add(b"X-\xc3\x84: a"))
            case("empty header name", lambda r: r.add(b": a"))
            case("header line without a colon", lambda r: r.add(b"X-Fuzz"))
            case("obs-fold on a header", lambda r: r.add(b"X-Fuzz: a", b" b", b"\tc"), ANY)
            case("obs-fold as the first header line", lambda r: setattr(r, "headers", [b" folded: x"] + r.headers))
            case("obs-fold inside Content-Type", lambda r: r.set(b"Content-Type", b"application/json;\r\n charset=utf-8"), ANY)
            case("obs-fold inside Authorization", lambda r: [r.headers.__setitem__(i, h.replace(b"Bearer ", b"Bearer\r\n ")) for i, h in enumerate(r.headers)], ANY)
            case("8 KB header value", lambda r: r.add(b"X-Fuzz: " + b"v" * 8000), ANY)
            case("20 KB header value", lambda r: r.add(b"X-Fuzz: " + b"v" * 20000))
            case("8 KB header name", lambda r: r.add(b"X-" + b"n" * 8000 + b": v"), ANY)
            case("90 headers", lambda r: r.add(*[b"X-F%d: v" % i for i in range(90)]), ANY)
            case("150 headers", lambda r: r.add(*[b"X-F%d: v" % i for i in range(150)]))
            case("2000 headers", lambda r: r.add(*[b"X-F%d: v" % i for i in range(2000)]))
            case("value of spaces", lambda r: r.add(b"X-Fuzz: " + b" " * 2000), ANY)
            case("no Host", lambda r: r.drop(b"Host"), ANY)
            case("two Host headers", lambda r: r.add(b"Host: example.com"), ANY)
            case("NUL in Host", lambda r: r.set(b"Host", b"127.0.0.1\x00.evil"))
            case("odd Host", lambda r: r.set(b"Host", b"[::1"), ANY)
            case("huge Host", lambda r: r.set(b"Host", b"h" * 8000), ANY)
            case("NUL in Content-Type", lambda r: r.set(b"Content-Type", b"application/json; charset=\x00"))
            case("odd Content-Type", lambda r: r.set(b"Content-Type", b"application/json; charset=utf-16; boundary=\xff"), ANY)
            case("text/html Accept", lambda r: r.set(b"Accept", b"text/html;q=1e999, */*;q=-1"), ANY)
            case("NUL in Accept", lambda r: r.set(b"Accept", b"*/*;q=\x00"))
            case("Expect garbage", lambda r: r.add(b"Expect: 100-continue-ish"), ANY)
            case("Expect 100-continue", lambda r: r.add(b"Expect: 100-continue"), ANY)
            case("Upgrade h2c", lambda r: r.set(b"Connection", b"Upgrade, HTTP2-Settings").add(b"Upgrade: h2c", b"HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA"), ANY)
            case("Upgrade websocket", lambda r: r.set(b"Connection", b"Upgrade").add(b"Upgrade: websocket", b"Sec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAAAA==", b"Sec-WebSocket-Version: 13"), ANY)
            case("NUL in Connection", lambda r: r.set(b"Connection", b"close\x00"))
            case("long Connection list", lambda r: r.set(b"Connection", b", ".join([b"close"] * 500)), ANY)
            case("Content-Encoding gzip on plain JSON", lambda r: r.add(b"Content-Encoding: gzip"), ANY)
            case("odd Range", lambda r: r.add(b"Range: bytes=99999999999999999999-, -1"), ANY)
            case("odd conditionals", lambda r: r.add(b"If-None-Match: \"\xff\"", b"If-Modified-Since: 99 Foo 99999 99:99:99 GMT"), ANY)
            case("NUL in Cookie", lambda r: r.add(b"Cookie: a=\x00"))
            case("8 KB Cookie", lambda r: r.add(b"Cookie: " + b"a=b; " * 1600), ANY)
            case("NUL in Forwarded", lambda r: r.add(b'Forwarded: for="[::1]";by=\x00'))
            case("odd Forwarded", lambda r: r.add(b'Forwarded: for=unknown;for="_x";proto=\xff'), ANY)
            case("HTTP/1.0 keep-alive", lambda r: (setattr(r, "line", r.line.replace(b"HTTP/1.1", b"HTTP/1.0")), r.set(b"Connection", b"keep-alive"))[1], ANY)

    def framing(self):
        fam = "framing"
        for rk in ("devices", "fetch", "healthz"):
            body = self.body_for(self.routes[rk], len(self.cases)) or b'{"x":1}'
            n = len(body)

            def case(name: str, mutate, expect=REJECT, **kw):
                req = self.base(rk)
                if rk == "healthz":
                    expect = ANY  # it answers without reading the body: the framing error comes after the answer
                if not req.body:
                    req.set(b"Content-Type", b"application/json").with_body(body)
                out = mutate(req)
                self.add(fam, name, rk, out if isinstance(out, (Req, bytes)) else req, expect, **kw)

            cl = lambda v: (lambda r: r.set(b"Content-Length", v))  # noqa: E731
            # Content-Length.
            case("duplicate Content-Length, same value", lambda r: r.add(b"Content-Length: %d" % n), ANY)
            case("duplicate Content-Length, different values", lambda r: r.add(b"Content-Length: %d" % (n + 1)), drain=True)
            case("Content-Length list, same values", cl(b"%d, %d" % (n, n)), ANY)
            case("Content-Length list, different values", cl(b"%d, %d" % (n, n - 1)), drain=True)
            for value in [b"-1", b"+%d" % n, b"0x%x" % n, b"%d\x00" % n, b"1e2", b"", b"%d %d" % (n, n), b"\xef\xbc\x95"]:
                case("Content-Length " + repr(value)[2:-1], cl(value), half_close=True)
            case("Content-Length with surrounding spaces", cl(b"  %d  " % n), ANY)
            case("Content-Length with leading zeros", cl(b"0000000000000000000000%d" % n), ANY)
            case("Content-Length that overflows", cl(b"99999999999999999999999999"), half_close=True)
            case("Content-Length 2^64", cl(b"18446744073709551616"), half_close=True)
            case("Content-Length Int64.max", cl(b"9223372036854775807"), half_close=True)
            case("Content-Length larger than the body", cl(b"%d" % (n + 10)), half_close=True)
            case("Content-Length smaller than the body", cl(b"%d" % (n - 1)), ANY, drain=True)
            case("Content-Length over the body limit, no body", lambda r: (r.with_body(b""), r.set(b"Content-Length", b"20000"))[1], half_close=True)
            case("body over the limit", lambda r: r.with_body(b'{"x":"' + b"a" * 17000 + b'"}'))
            case("Expect 100-continue without a body", lambda r: (r.with_body(b""), r.set(b"Content-Length", b"100"), r.add(b"Expect: 100-continue"))[1], half_close=True)
            # Transfer-Encoding.
            case("chunked", lambda r: r.chunked(chunked_of(body)), ANY)
            case("Content-Length and Transfer-Encoding", lambda r: r.chunked(chunked_of(body)).add(b"Content-Length: %d" % n), ANY, drain=True)
            case("Content-Length 0 and chunked smuggling", lambda r: r.chunked(chunked_of(body) + b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").add(b"Content-Length: 0"), ANY, drain=True)
            for te, expect in [
                (b"chunked, chunked", REJECT), (b"gzip, chunked", ANY), (b"chunked, gzip", REJECT), (b"identity", ANY),
                (b"Chunked", ANY), (b" chunked ", ANY), (b"chunked\x00", REJECT), (b"xchunked", REJECT), (b"chunked;q=1", ANY),
                (b"\x0bchunked", REJECT), (b"chunked\r\n ", ANY), (b"", REJECT), (b",,chunked", ANY),
            ]:
                case("Transfer-Encoding " + repr(te)[2:-1], lambda r, te=te: r.chunked(chunked_of(body), te), expect, half_close=True)
            case("two Transfer-Encoding headers", lambda r: r.chunked(chunked_of(body)).add(b"Transfer-Encoding: chunked"), ANY, half_close=True)
            case("chunked in HTTP/1.0", lambda r: (r.chunked(chunked_of(body)), setattr(r, "line", r.line.replace(b"HTTP/1.1", b"HTTP/1.0")))[0], ANY, half_close=True)
            # Chunk sizes.
            for size, expect in [
                (b"ffffffffffffffffff", REJECT), (b"ffffffffffffffff", REJECT), (b"10000000000000000", REJECT), (b"7fffffffffffffff", REJECT),
                (b"FFFFFFFF", REJECT), (b"-1", REJECT), (b"-0", REJECT), (b"0x5", REJECT), (b"5g", REJECT), (b"g", REJECT), (b"", REJECT),
                (b" %x" % n, REJECT), (b"+%x" % n, REJECT), (b"\xef\xbc\x95", REJECT), (b"%x\x00" % n, REJECT),
                (b"0" * 40 + b"%x" % n, ANY), (b"%x " % n, ANY), (b"%X" % n, ANY),
            ]:
                label = repr(size)[2:-1].replace("%x" % n, "<len>").replace("%X" % n, "<LEN>")[:30]
                case("chunk size " + label, lambda r, size=size: r.chunked(chunk(body, size) + b"0\r\n\r\n"), expect, half_close=True)
            # Chunk extensions.
            case("chunk extension", lambda r: r.chunked(chunk(body, ext=b";foo=bar") + b"0;end\r\n\r\n"), ANY)
            case("chunk extension, quoted", lambda r: r.chunked(chunk(body, ext=b';foo="b\\"a;r"') + b"0\r\n\r\n"), ANY)
            case("chunk extension with spaces", lambda r: r.chunked(chunk(body, ext=b" ; foo = bar") + b"0\r\n\r\n"), ANY)
            case("10 KB chunk extension", lambda r: r.chunked(chunk(body, ext=b";" + b"e" * 10000) + b"0\r\n\r\n"), ANY)
            case("NUL in a chunk extension", lambda r: r.chunked(chunk(body, ext=b";\x00") + b"0\r\n\r\n"), half_close=True)
            case("control byte in a chunk extension", lambda r: r.chunked(chunk(body, ext=b";foo=\x01") + b"0\r\n\r\n"), half_close=True)
            case("many empty extensions", lambda r: r.chunked(chunk(body, ext=b";" * 1000) + b"0\r\n\r\n"), ANY)
            case("a chunk per byte, each with an extension", lambda r: r.chunked(b"".join(chunk(body[i:i + 1], ext=b";i=%d" % i) for i in range(n)) + b"0\r\n\r\n"), ANY)
            case("3000 one-byte chunks", lambda r: r.chunked((b"1\r\n \r\n" * 3000) + chunk(body) + b"0\r\n\r\n"), ANY)
            # Chunk data.
            case("truncated chunk", lambda r: r.chunked(chunk(body, b"%x" % (n + 5))[:-2]), half_close=True)
            case("chunk longer than its size", lambda r: r.chunked(chunk(body + b"XX", b"%x" % n) + b"0\r\n\r\n"), half_close=True)
            case("no CRLF after chunk data", lambda r: r.chunked(b"%x\r\n" % n + body + b"0\r\n\r\n"), half_close=True)
            case("bare LF in chunked framing", lambda r: r.chunked(b"%x\n" % n + body + b"\n0\n\n"), ANY, half_close=True)
            case("bare CR in chunked framing", lambda r: r.chunked(b"%x\r" % n + body + b"\r0\r\r"), half_close=True)
            case("no last chunk", lambda r: r.chunked(chunk(body)), half_close=True)
            case("last chunk without the final CRLF", lambda r: r.chunked(chunk(body) + b"0\r\n"), half_close=True)
            case("garbage after the last chunk", lambda r: r.chunked(chunked_of(body) + b"\x00\xff garbage\r\n\r\n"), ANY, drain=True)
            # Trailers.
            case("trailer", lambda r: r.chunked(chunk(body) + b"0\r\nX-Trailer: v\r\n\r\n"), ANY)
            case("NUL in a trailer name", lambda r: r.chunked(chunk(body) + b"0\r\nX-T\x00: v\r\n\r\n"), half_close=True)
            case("NUL in a trailer value", lambda r: r.chunked(chunk(body) + b"0\r\nX-T: \x00\r\n\r\n"), half_close=True)
            case("control byte in a trailer value", lambda r: r.chunked(chunk(body) + b"0\r\nX-T: a\x1bb\r\n\r\n"), half_close=True)
            case("trailer without a colon", lambda r: r.chunked(chunk(body) + b"0\r\nno-colon\r\n\r\n"), half_close=True)
            case("Content-Length trailer", lambda r: r.chunked(chunk(body) + b"0\r\nContent-Length: 5\r\n\r\n"), ANY)
            case("Transfer-Encoding trailer", lambda r: r.chunked(chunk(body) + b"0\r\nTransfer-Encoding: chunked\r\n\r\n"), ANY)
            case("Authorization trailer", lambda r: r.chunked(chunk(body) + b"0\r\nAuthorization: Bearer \x00\r\n\r\n"), half_close=True)
            case("obs-fold in a trailer", lambda r: r.chunked(chunk(body) + b"0\r\nX-T: a\r\n b\r\n\r\n"), ANY)
            case("2000 trailers", lambda r: r.chunked(chunk(body) + b"0\r\n" + b"".join(b"X-T%d: v\r\n" % i for i in range(2000)) + b"\r\n"), half_close=True)
            case("20 KB trailer", lambda r: r.chunked(chunk(body) + b"0\r\nX-T: " + b"v" * 20000 + b"\r\n\r\n"), half_close=True)
            case("trailers never end", lambda r: r.chunked(chunk(body) + b"0\r\nX-T: v\r\n"), half_close=True)
            # Bodies.
            case("NUL bytes in the body", lambda r: r.with_body(body[:-1] + b"\x00\x00" + body[-1:]), ANY)
            case("non-UTF-8 body", lambda r: r.with_body(b'{"platform":"\xff\xfe","token":"\xc0\xaf"}'), ANY)
            case("escaped NUL in the body", lambda r: r.with_body(b'{"platform":"simulated","token":"a\\u0000b","ids":["\\u0000"]}'), ANY)
            case("lone surrogate in the body", lambda r: r.with_body(b'{"platform":"simulated","token":"\\ud800","ids":["\\udfff"]}'), ANY)
            case("deeply nested body", lambda r: r.with_body(b"[" * 5000 + b"]" * 5000), ANY)
            case("token of 5000 combining marks", lambda r: r.with_body(dumps({"platform": "simulated", "token": "e" + "\u0301" * 5000})), ANY)
            case("token of 4097 ASCII characters", lambda r: r.with_body(dumps({"platform": "simulated", "token": "t" * 4097})), ANY)

    def authorization(self):
        fam = "authorization"
        device = self.device
        dev_id, _, dev_secret = device.partition(b".")
        jwt = self.user_token(len(self.cases))
        values = [
            (b"Bearer", REJECT), (b"Bearer ", REJECT), (b"Bearer \x00", REJECT), (b"Bearer abc\x00def", REJECT),
            (b"Bearer\x00" + device, REJECT), (b"Bearer " + device[:40] + b"\x00" + device[41:], REJECT),
            (b"Bearer " + jwt[:20] + b"\x00" + jwt[20:], REJECT), (b"Bearer \xff\xfe\xfd" + b"\x80" * 77, REJECT),
            (b"Bearer " + b"\xc3\xa9" * 40, REJECT), (b"Bearer " + b"A" * 8192, REJECT), (b"Bearer " + b"A" * 8193, REJECT),
            (b"Bearer " + b"A" * 20000, REJECT), (b"Basic dXNlcjpwYXNz", REJECT), (b"Digest username=\"\x01\"", REJECT),
            (b"BEARER\t" + device, REJECT), (b"Bearer " + device + b" extra", REJECT), (b"Bearer  ,,,, ", REJECT),
            (b"Bearer " + dev_id.upper() + b"." + dev_secret, ANY), (b"Bearer " + dev_id + b"." + dev_secret + b"=", REJECT),
            (b"Bearer " + dev_id + b"." + dev_secret[:-1] + b"_", REJECT), (b"Bearer " + str(uuid.UUID(int=0)).encode() + b"." + b"A" * 43, REJECT),
            (b"Bearer " + b"f" * 36 + b"." + dev_secret, REJECT), (b"Bearer " + dev_id[:35] + b"\xff." + dev_secret, REJECT),
            (b"Bearer " + dev_id + b"." + dev_secret[:42] + b"\x00", REJECT), (b"Bearer " + jwt, REJECT), (b"Bearer " + device, ANY),
            (b"Bearer " + jwt + b".", REJECT), (b"Bearer .", REJECT), (b"Bearer ..", REJECT), (b"bearer " + device, ANY),
        ]
        for rk in ("devices", "notifications", "fetch", "read"):
            for value, expect in values:
                user_route = self.routes[rk].auth == "user"
                # The device credential is valid on device routes only, the JWT on the user route only.
                if user_route and value in (b"Bearer " + jwt,):
                    expect = ANY
                if user_route and device in value and expect == ANY:
                    expect = REJECT
                if not user_route and value == b"Bearer " + jwt:
                    expect = REJECT
                req = self.base(rk, auth=b"")
                req.add(b"Authorization: " + value)
                self.add(fam, "Authorization " + repr(value[:48])[2:-1], rk, req, expect)
            req = self.base(rk)
            self.add(fam, "two Authorization headers, valid first", rk, req.add(b"Authorization: Bearer \x00"), REJECT)
            req = self.base(rk, auth=b"")
            own = (b"Bearer " + jwt) if self.routes[rk].auth == "user" else (b"Bearer " + device)
            self.add(fam, "two Authorization headers, invalid first", rk, req.add(b"Authorization: Bearer x", b"Authorization: " + own), REJECT)
            self.add(fam, "two Authorization headers, both valid", rk, self.base(rk, auth=b"").add(b"Authorization: " + own, b"Authorization: " + own), ANY)
            self.add(fam, "no Authorization", rk, self.base(rk, auth=b""), REJECT)

    def jwt(self):
        fam = "jwt"
        rk = "devices"
        configured = {"iss": bool(self.args.issuer), "aud": bool(self.args.audience)}

        def token_case(name: str, token: bytes, expect: str):
            n = len(self.cases)
            self.add(fam, name, rk, self.base(rk, auth=b"Bearer " + token, n=n), expect)

        def claim(name: str, expect: str, **changes):
            token_case(name, self.user_token(len(self.cases), **changes), expect)

        nul_ctrl = ["\x00", "a\x00b", "\x01", "a\x1fb", "\x7f", "a\tb", "a\nb", "a\rb", "\x1b[31m", "\u0085", "\u009b"]
        for value in nul_ctrl:
            claim(f"sub {value!r}", REJECT, sub=value)
        for value, expect in [
            ("", REJECT), (" ", ANY), ("\u2028", ANY), ("\ufeff", ANY), ("\u200b", ANY), ("\u202e", ANY), ("a" * 256, ANY),
            ("a" * 257, REJECT), ("e\u0301" * 256, ANY), ("e" + "\u0301" * 300, ANY), ("\U0001F468\u200d\U0001F469\u200d\U0001F467" * 128, ANY),
            ("\U0001F1FA\U0001F1F8" * 200, ANY), ("a" * 10000, REJECT), ("raw-\U0010FFFF", ANY), ("\udc80", REJECT), ("\ud800x", REJECT),
        ]:
            claim(f"sub {value[:12]!r} ({len(value)} code points)", expect, sub=value)
        for value in [123, 1.5, True, None, [], ["a"], {"a": 1}, 2**70]:
            claim(f"sub of type {type(value).__name__} {str(value)[:10]}", REJECT, sub=value)
        claim("no sub", REJECT, sub=DROP)
        # exp.
        for value, expect in [
            (DROP, REJECT), (None, REJECT), ("4102444800", REJECT), (True, REJECT), ([], REJECT), ({}, REJECT), (0, REJECT),
            (-1, REJECT), (1e308, ANY), (2**64, ANY), (2**63, ANY), (-(2**63) - 1, REJECT), (4102444800.5, ANY),
            (10**400, ANY), (-(10**400), REJECT), ("\x00", REJECT), (float("inf"), ANY), (float("-inf"), REJECT), (float("nan"), REJECT),
        ]:
            claim(f"exp {str(value)[:24]}", expect, exp=value)
        # iss, aud: refused when configured and wrong, else ignored.
        for key in ("iss", "aud"):
            wrong = REJECT if configured[key] else ANY
            for value in ["\x00", "a\x00b", "\x01", "x" * 5000, 123, [], {}, None, True, ["\x00"], [1, 2], [["a"]], ["a"] * 1000]:
                if key == "iss" and isinstance(value, list):
                    continue
                expect = wrong if isinstance(value, str) or value is None else (REJECT if configured[key] else ANY)
                claim(f"{key} {str(value)[:20]!r}", expect, **{key: value})
        # nbf, iat: NUL, control characters, huge numbers, wrong types.
        for key in ("nbf", "iat"):
            for value in ["\x00", "a\x01", 1e308, 2**64, -(2**63) - 1, 10**400, float("inf"), float("nan"), [], {}, True, None, 0, FAR_FUTURE]:
                expect = ANY
                if isinstance(value, (str, list, dict, bool)) or (isinstance(value, float) and value != value):
                    expect = REJECT
                claim(f"{key} {str(value)[:24]}", expect, **{key: value})
        # Other claims and raw payloads.
        base_claims = self.claims(0)
        raw_payloads = [
            ("raw NUL inside the sub string", b'{"sub":"a\x00b","exp":%d}' % FAR_FUTURE, REJECT),
            ("raw control byte inside the sub string", b'{"sub":"a\x01b","exp":%d}' % FAR_FUTURE, REJECT),
            ("non-UTF-8 sub", b'{"sub":"\xff\xfe","exp":%d}' % FAR_FUTURE, REJECT),
            ("overlong UTF-8 NUL in sub", b'{"sub":"a\xc0\x80b","exp":%d}' % FAR_FUTURE, REJECT),
            ("duplicate sub, the second with NUL", b'{"sub":"raw-dup","sub":"a\\u0000b","exp":%d}' % FAR_FUTURE, REJECT),
            ("duplicate exp, the second expired", b'{"sub":"raw-dup2","exp":%d,"exp":1}' % FAR_FUTURE, ANY),
            ("payload is an array", b'["sub","exp"]', REJECT),
            ("payload is a string", b'"sub"', REJECT),
            ("payload is null", b"null", REJECT),
            ("payload is empty", b"", REJECT),
            ("payload is not JSON", b"\x00\x01\x02", REJECT),
            ("deeply nested extra claim", dumps({**base_claims, "sub": "raw-deep"})[:-1] + b',"x":' + b"[" * 5000 + b"]" * 5000 + b"}", ANY),
            ("extra claims with NUL", dumps({**base_claims, "sub": "raw-extra", "jti": "\x00", "\x00": "\x00"}), ANY),
            ("exp as 1e999 text", dumps({**base_claims, "sub": "raw-1e999"}).replace(b"%d" % FAR_FUTURE, b"1e999"), ANY),
            ("exp as -0", dumps({**base_claims, "sub": "raw-neg0"}).replace(b"%d" % FAR_FUTURE, b"-0"), REJECT),
            ("exp with 400 digits", dumps({**base_claims, "sub": "raw-digits"}).replace(b"%d" % FAR_FUTURE, b"9" * 400), ANY),
        ]
        for name, payload, expect in raw_payloads:
            token_case(name, jwt_raw(self.secret, b'{"alg":"HS256","typ":"JWT"}', payload), expect)
        good_payload = dumps({**base_claims, "sub": "raw-header"})
        headers = [
            ("alg none, no signature", b'{"alg":"none","typ":"JWT"}', False, REJECT),
            ("alg none, signed", b'{"alg":"none"}', True, REJECT),
            ("alg HS256 with NUL", b'{"alg":"HS256\\u0000"}', True, REJECT),
            ("alg lower-case", b'{"alg":"hs256"}', True, REJECT),
            ("alg HS512", b'{"alg":"HS512"}', True, REJECT),
            ("alg RS256 with an HMAC signature", b'{"alg":"RS256"}', True, REJECT),
            ("alg ES256 with an HMAC signature", b'{"alg":"ES256"}', True, REJECT),
            ("alg missing", b'{"typ":"JWT"}', True, REJECT),
            ("alg a number", b'{"alg":256}', True, REJECT),
            ("typ with NUL", b'{"alg":"HS256","typ":"\\u0000"}', True, ANY),
            ("kid with NUL", b'{"alg":"HS256","kid":"\\u0000"}', True, ANY),
            ("kid path traversal", b'{"alg":"HS256","kid":"../../../../etc/passwd"}', True, ANY),
            ("jku to elsewhere", b'{"alg":"HS256","jku":"http://127.0.0.1:1/keys"}', True, ANY),
            ("crit unknown", b'{"alg":"HS256","crit":["x-unknown"],"x-unknown":1}', True, ANY),
            ("header not JSON", b"\x00\xff", True, REJECT),
            ("header is an array", b'["HS256"]', True, REJECT),
            ("header of 1500 bytes", b'{"alg":"HS256","x":"' + b"x" * 1500 + b'"}', True, ANY),
            ("duplicate alg, the second none", b'{"alg":"HS256","alg":"none"}', True, REJECT),
        ]
        for name, header, signed, expect in headers:
            token_case("header " + name, jwt_raw(self.secret, header, good_payload, signed), expect)
        good = self.user_token(len(self.cases))
        h, p, s = good.split(b".")
        for name, token in [
            ("empty signature", h + b"." + p + b"."), ("wrong signature", h + b"." + p + b"." + b64url(b"x" * 32)),
("standard base64 alphabet", (h + b"." + p + b"." + s).replace(b"-", b"+").replace(b"_", b"/") + b"+/"),
            ("two segments", h + b"." + p), ("four segments", h + b"." + p + b"." + s + b"." + s), ("empty header segment", b"." + p + b"." + s),
            ("signature of another secret", jwt_raw(b"another-secret-0123456789-0123456789", b'{"alg":"HS256"}', good_payload)),
            ("signature 5000 bytes", h + b"." + p + b"." + b"A" * 5000), ("NUL inside the signature", h + b"." + p + b"." + s[:10] + b"\x00" + s[10:]),
        ]:
            token_case("token " + name, token, REJECT)
        token_case("token signature with padding", h + b"." + p + b"." + s + b"=", ANY)

    def xff(self):
        fam = "xff"
        combining = "e\u0301" * 64
        values: list[tuple[str, list[bytes], str]] = [
            ("empty", [b""], ANY), ("one space", [b" "], ANY), ("commas", [b",,,,"], ANY), ("spaced commas", [b" , , "], ANY),
            ("an address", [b"203.0.113.7"], ANY), ("two hops", [b"203.0.113.7, 198.51.100.9"], ANY), ("unknown", [b"unknown"], ANY),
            ("obfuscated", [b"_hidden"], ANY), ("address with port", [b"203.0.113.7:8080"], ANY), ("bracketed IPv6 with port", [b"[2001:db8::1]:443"], ANY),
            ("IPv6", [b"2001:db8::1"], ANY), ("IPv6 with zone", [b"fe80::1%eth0"], ANY), ("IPv6 with encoded zone", [b"fe80::1%25eth0"], ANY),
            ("IPv6 with empty zone", [b"fe80::1%"], ANY), ("IPv6 with a 60-byte zone", [b"fe80::1%" + b"z" * 60], ANY),
            ("IPv6 with a combining-mark zone", [b"fe80::1%" + ("e\u0301" * 40).encode()], ANY), ("IPv4-mapped loopback", [b"::ffff:127.0.0.1"], ANY),
            ("the proxy itself", [b"127.0.0.1"], ANY), ("only trusted hops", [b"127.0.0.1, 127.0.0.1, ::ffff:127.0.0.1"], ANY),
            ("nine groups", [b"0:0:0:0:0:0:0:0:0"], ANY), ("five octets", [b"1.2.3.4.5"], ANY), ("octets over 255", [b"999.999.999.999"], ANY),
            ("leading zeros", [b"010.000.000.001"], ANY), ("many colons", [b":" * 60], ANY), ("64 digits", [b"1" * 64], ANY), ("65 digits", [b"1" * 65], ANY),
            ("300 hops", [b", ".join(b"10.0.%d.%d" % (i // 250, i % 250) for i in range(300))], ANY),
            ("1500 hops over 4 KB", [b"1.1.1.1," * 1500], ANY),
            ("64 graphemes with combining marks", [combining.encode()], ANY),
            ("64 graphemes with combining marks after a hop", [b"203.0.113.7, " + combining.encode()], ANY),
            ("one grapheme of 96 combining marks", [("\u0301" * 96).encode()], ANY),
            ("64 graphemes of 10 code points", [(("e" + "\u0301" * 9) * 64).encode()], ANY),
            ("64 flag emoji", [("\U0001F1FA\U0001F1F8" * 64).encode()], ANY),
            ("64 family emoji", [("\U0001F468\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466" * 64).encode()], ANY),
            ("64 Hangul syllables of jamo", [("\u1100\u1161\u11a8" * 64).encode()], ANY),
            ("non-UTF-8 bytes", [b"\xff\xfe\xfd"], ANY), ("overlong UTF-8", [b"\xc0\xaf" * 10], ANY), ("UTF-8 surrogate", [b"\xed\xa0\x80"], ANY),
            ("address then non-UTF-8", [b"203.0.113.7\xff"], ANY), ("64 continuation bytes", [b"\x80" * 64], ANY), ("200 continuation bytes", [b"\x80" * 200], ANY),
            ("beyond U+10FFFF", [b"\xf4\x90\x80\x80" * 30], ANY), ("truncated UTF-8", [b"\xe2\x80"], ANY), ("tabs around", [b"\t203.0.113.7\t"], ANY),
            ("NUL", [b"\x00"], REJECT), ("address then NUL", [b"203.0.113.7\x00"], REJECT), ("control byte", [b"203.0.113.7\x01"], REJECT),
            ("DEL", [b"\x7f"], REJECT), ("bare CR", [b"203.0.113.7\r198.51.100.9"], REJECT),
            ("two headers", [b"203.0.113.7", combining.encode()], ANY), ("two empty headers", [b"", b""], ANY),
            ("obs-fold", [b"203.0.113.7,\r\n 198.51.100.9"], ANY),
        ]
        variants = [
            ("notifications", b"", REJECT, "no credential"), ("notifications", b"Bearer " + str(uuid.UUID(int=7)).encode() + b"." + b"A" * 43, REJECT, "wrong credential"),
            ("notifications", None, ANY, "valid credential"), ("devices", b"", REJECT, "no token"), ("devices", b"Bearer x.y.z", REJECT, "bad token"),
            ("devices", None, ANY, "valid token"), ("healthz", None, ANY, ""),
        ]
        for name, headers, expect in values:
            for rk, auth, route_expect, what in variants:
                req = self.base(rk, auth=auth)
                req.add(*[b"X-Forwarded-For: " + h for h in headers])
                final = REJECT if REJECT in (expect, route_expect) else ANY
                self.add(fam, f"X-Forwarded-For {name}" + (f", {what}" if what else ""), rk, req, final)

    def random_mutations(self, count: int):
        fam = "random"
        rng = random.Random(self.args.seed * 7919 + 1)
        interesting = [b"\x00", b"\x01", b"\x7f", b"\x80", b"\xff", b"\r", b"\n", b" ", b"\t", b":", b",", b";", b"-", b"%", b"\"", b"\\", b"\r\n", b"0"]
        route_keys = list(self.routes)
        for i in range(count):
            rk = rng.choice(route_keys)
            req = self.base(rk)
            if rng.random() < 0.3 and req.body:
                req.chunked(chunked_of(req.body, rng.randint(1, 4)))
            if rng.random() < 0.3:
                req.add(b"X-Forwarded-For: " + rng.choice([b"203.0.113.7", ("e\u0301" * 64).encode(), b"\x80" * 70, b"::1%lo"]))
            data = bytearray(req.bytes())
            ops = []
            for _ in range(rng.randint(1, 3)):
                op = rng.choice(["insert", "replace", "delete", "dup-line", "truncate", "repeat"])
                if not data:
                    break
                pos = rng.randrange(len(data))
                if op == "insert":
                    data[pos:pos] = rng.choice(interesting)
                elif op == "replace":
                    data[pos:pos + 1] = rng.choice(interesting)
                elif op == "delete":
                    del data[pos:pos + rng.randint(1, 8)]
                elif op == "dup-line":
                    lines = bytes(data).split(CRLF)
                    j = rng.randrange(len(lines))
                    lines.insert(j, lines[j])
                    data = bytearray(CRLF.join(lines))
                elif op == "truncate":
                    del data[pos:]
                elif op == "repeat":
                    data[pos:pos] = bytes(data[pos:pos + rng.randint(1, 16)]) * rng.randint(2, 500)
                ops.append(f"{op}@{pos}")
            # A mutated request may be incomplete: EOF ends it, so the server has nothing to wait for.
            self.add(fam, f"random #{i} ({', '.join(ops)})", rk, bytes(data), ANY, half_close=True)


class _Drop:
    pass


DROP = _Drop()


# --- sending ------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    kind: str  # "response", "closed", "reset", "timeout", "garbage", "refused"
    responses: list = field(default_factory=list)  # (status, headers dict (lower-case), body)
    detail: str = ""


def parse_responses(buf: bytes, head_request: bool = False) -> tuple[list, bytes, bool]:
    """Complete responses at the start of `buf`, the rest, and whether what is left cannot be HTTP."""
    out = []
    while buf:
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            bad = not b"HTTP/1.1 ".startswith(buf[:9]) and not buf.startswith(b"HTTP/1.")
            return out, buf, bad
        head = buf[:end].decode("latin-1")
        lines = head.split("\r\n")
        m = re.match(r"HTTP/1\.[01] (\d{3})(?: |$)", lines[0])
        if not m:
            return out, buf, True
        status = int(m.group(1))
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            name = name.strip().lower()
            headers[name] = headers[name] + "," + value.strip() if name in headers else value.strip()
        rest = buf[end + 4:]
        if status == 100:
            buf = rest
            continue
        if head_request or status in (204, 304):
            out.append((status, headers, b""))
            buf = rest
            continue
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body, pos = b"", 0
            while True:
                nl = rest.find(b"\r\n", pos)
                if nl < 0:
                    return out, buf, False
                try:
                    size = int(rest[pos:nl].split(b";")[0], 16)
                except ValueError:
                    return out, buf, True
                if size == 0:
                    tend = rest.find(b"\r\n\r\n", nl)
                    if tend < 0:
                        return out, buf, False
                    out.append((status, headers, body))
                    buf = rest[tend + 4:]
                    break
                if len(rest) < nl + 2 + size + 2:
                    return out, buf, False
                body += rest[nl + 2:nl + 2 + size]
                pos = nl + 2 + size + 2
            continue
        if "content-length" in headers:
            try:
                length = int(headers["content-length"].split(",")[0])
            except ValueError:
                return out, buf, True
            if len(rest) < length:
                return out, buf, False
            out.append((status, headers, rest[:length]))
            buf = rest[length:]
            continue
        # Delimited by the close: complete only at EOF (the caller decides).
        return out, buf, False
    return out, b"", False


def exchange(host: str, port: int, case: Case, timeout: float) -> Outcome:
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except ConnectionRefusedError:
        return Outcome("refused")
    except OSError as error:
        return Outcome("refused", detail=str(error))
    deadline = time.monotonic() + timeout
    buf = b""
    eof = False
    try:
        sock.settimeout(timeout)
        try:
            sock.sendall(case.data)
            if case.half_close:
                sock.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered (or closed) before reading everything: read what it sent
        drain_until = None
        while True:
            responses, rest, bad = parse_responses(buf)
            if bad:
                return Outcome("garbage", responses, detail=repr(rest[:80]))
            if responses and not case.drain:
                return Outcome("response", responses)
            if responses and case.drain:
                drain_until = drain_until or min(deadline, time.monotonic() + 0.5)
            now = time.monotonic()
            limit = drain_until or deadline
            if now >= limit:
                if responses:
                    return Outcome("response", responses)
                return Outcome("timeout", detail=f"no answer within {timeout:g} s")
            sock.settimeout(max(0.01, limit - now))
            try:
                data = sock.recv(65536)
            except socket.timeout:
                continue
            except ConnectionResetError:
                responses, rest, _ = parse_responses(buf)
                return Outcome("response", responses) if responses else Outcome("reset")
            if not data:
                eof = True
                break
            buf += data
            if len(buf) > MAX_RESPONSE_BYTES:
                return Outcome("garbage", detail="response over 1 MiB")
    finally:
        sock.close()
    assert eof
    responses, rest, bad = parse_responses(buf)
    if rest and not bad:
        # A close-delimited body (or a truncated response).
        end = rest.find(b"\r\n\r\n")
        m = re.match(rb"HTTP/1\.[01] (\d{3})", rest)
        if m and end >= 0:
            head = rest[:end].decode("latin-1").split("\r\n")
            headers = {}
            for line in head[1:]:
                k, _, v = line.partition(":")
                headers[k.strip().lower()] = v.strip()
            responses.append((int(m.group(1)), headers, rest[end + 4:]))
            rest = b""
    if rest.strip(b"\r\n"):
        return Outcome("garbage", responses, detail=repr(rest[:80]))
    if responses:
        return Outcome("response", responses)
    return Outcome("closed")


def error_shape_problem(headers: dict, body: bytes) -> str | None:
    """Why a 4xx JSON body is not the API's error shape (None when it is, or is not JSON)."""
    content_type = headers.get("content-type", "")
    if "json" not in content_type.lower() and not body.lstrip().startswith(b"{"):
        return None
    try:
        document = json.loads(body)
    except ValueError as error:
        return f"4xx body is not valid JSON ({error})"
    if not isinstance(document, dict) or set(document) != {"error"} or not isinstance(document["error"], dict):
        return "4xx body is not {\"error\": {...}}"
    inner = document["error"]
    if set(inner) != {"code", "message"}:
        return f"error object has keys {sorted(inner)} instead of code, message"
    if not isinstance(inner["code"], str) or not inner["code"] or not isinstance(inner["message"], str) or not inner["message"]:
        return "error code or message is not a non-empty string"
    if "json" not in content_type.lower():
        return f"JSON error body with Content-Type {content_type!r}"
    return None


def judge(case: Case, outcome: Outcome, allow_503: bool, require_error_body: bool = False) -> list[str]:
    problems = []
    if outcome.kind == "timeout":
        problems.append(outcome.detail)
    if outcome.kind == "garbage":
        problems.append(f"unparseable response {outcome.detail}")
    for status, headers, body in outcome.responses:
        if status >= 500:
            if status == 503 and allow_503 and "retry-after" in headers:
                continue
            problems.append(f"status {status}")
        elif 400 <= status < 500:
            # SwiftNIO's HTTP/1 encoder sends every response to CONNECT without a body (RFC 9110 §9.3.6
            # makes that so for 2xx), so a refused CONNECT is a bare 4xx: the status is what counts.
            if case.data.startswith(b"CONNECT ") and not body:
                continue
            problem = error_shape_problem(headers, body)
            if problem is None and require_error_body and not body.lstrip().startswith(b"{"):
                problem = "no JSON error body"
            if problem:
                problems.append(f"status {status}: {problem}")
    if case.expect == REJECT and outcome.responses and outcome.responses[0][0] < 400:
        problems.append(f"malformed input accepted with status {outcome.responses[0][0]}")
    return problems


def healthy(host: str, port: int, timeout: float) -> bool:
    probe = Case("healthz", "probe", "healthz", b"GET /healthz HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n" % (host.encode(), port))
    outcome = exchange(host, port, probe, timeout)
    return outcome.kind == "response" and outcome.responses[0][0] == 200


def first_notification_id(host: str, port: int, device: str, timeout: float) -> str | None:
    probe = Case("list", "probe", "notifications",
                 b"GET /v1/notifications?limit=1 HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n" % (host.encode(), port, device.encode()))
    outcome = exchange(host, port, probe, timeout)
    if outcome.kind != "response" or outcome.responses[0][0] != 200:
        return None
    try:
        items = json.loads(outcome.responses[0][2])["notifications"]
        return items[0]["id"] if items else None
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def show(data: bytes, limit: int) -> str:
    text = repr(data if len(data) <= limit else data[:limit])
    return text + (f" ... ({len(data)} bytes)" if len(data) > limit else "")


def print_failures(failures: list, show_bytes: int) -> None:
    """Each failing case: its name, route, problems and status, its request's bytes and the response's body."""
    for case, problems, outcome in failures:
        status = outcome.responses[0][0] if outcome.responses else outcome.kind
        print(f"FAIL [{case.family}] {case.name} -> {case.route}: {'; '.join(problems)} (got {status})")
        print(f"     request: {show(case.data, show_bytes)}{' + EOF' if case.half_close else ''}")
        if outcome.responses and outcome.responses[0][2]:
            print(f"     response body: {show(outcome.responses[0][2], 200)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", required=True, help="the live API, e.g. http://127.0.0.1:8080 (loopback only)")
    parser.add_argument("--jwt-secret", required=True, help="the server's SECUREPUSH_USER_JWT_SECRET (HS256)")
    parser.add_argument("--device-credential", required=True, help="a valid device credential <device_id>.<secret>")
    parser.add_argument("--issuer", default="", help="the server's SECUREPUSH_USER_JWT_ISSUER, if set")
    parser.add_argument("--audience", default="", help="the server's SECUREPUSH_USER_JWT_AUDIENCE, if set")
    parser.add_argument("--families", default=",".join(FAMILIES), help="comma-separated subset of: " + ", ".join(FAMILIES))
    parser.add_argument("--seed", type=int, default=20261122)
    parser.add_argument("--random", type=int, default=1000, help="seeded random mutations of valid requests (default 1000)")
    parser.add_argument("--max-cases", type=int, default=5000, help="at most this many cases (a seeded sample beyond)")
    parser.add_argument("--timeout", type=float, default=12.0, help="seconds per case for an answer or a close (default 12)")
    parser.add_argument("--max-seconds", type=float, default=900.0, help="the whole run's budget (default 900)")
    parser.add_argument("--allow-503", action="store_true", help="accept 503 with Retry-After (database trouble)")
    parser.add_argument("--require-error-body", action="store_true",
                        help="fail a 4xx without the JSON error body too (the HTTP parser's own 400s have none)")
    parser.add_argument("--label", default="a", help="tells the users and push tokens of separate runs apart")
    parser.add_argument("--only", default="", help="run only the cases whose name matches this regular expression")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("--show-bytes", type=int, default=300, help="bytes of each failing request to print (default 300)")
    args = parser.parse_args()

    url = urllib.parse.urlsplit(args.base_url)
    host, port = url.hostname or "", url.port or 80
    if url.scheme != "http" or host not in ("127.0.0.1", "localhost", "::1"):
        print("raw-http: --base-url must be http:// on the loopback interface", file=sys.stderr)
        return 2
    host = "127.0.0.1" if host == "localhost" else host
    families = [f.strip() for f in args.families.split(",") if f.strip()]
    unknown = set(families) - set(FAMILIES)
    if unknown:
        print(f"raw-http: unknown families {sorted(unknown)}", file=sys.stderr)
        return 2

    notification_id = None if args.list else first_notification_id(host, port, args.device_credential, args.timeout)
    catalogue = Catalogue(args, f"{host}:{port}".encode(), notification_id or str(uuid.UUID(int=0x5EC0DE)))
    builders = {"request-line": catalogue.request_line, "headers": catalogue.headers, "framing": catalogue.framing,
                "authorization": catalogue.authorization, "jwt": catalogue.jwt, "xff": catalogue.xff,
                "random": lambda: catalogue.random_mutations(args.random)}
    for family in families:
        builders[family]()
    cases = catalogue.cases
    if args.only:
        pattern = re.compile(args.only)
        cases = [c for c in cases if pattern.search(c.name) or pattern.search(c.route)]
    if len(cases) > args.max_cases:
        keep = set(random.Random(args.seed).sample(range(len(cases)), args.max_cases))
        cases = [c for i, c in enumerate(cases) if i in keep]
    if args.list:
        for c in cases:
            print(f"{c.family:13} {c.route:13} {c.expect:6} {c.name}")
        print(f"raw-http: {len(cases)} cases")
        return 0

    if not healthy(host, port, args.timeout):
        print(f"raw-http: {args.base_url}/healthz does not answer 200 before the run", file=sys.stderr)
        return 1
    started = time.monotonic()
    failures: list[tuple[Case, list[str], Outcome]] = []
    statuses: dict[str, int] = {}
    sent = 0
    bare_4xx = 0  # 4xx answers without the JSON error body (the HTTP parser's own)
    aborted = ""
    for case in cases:
        if time.monotonic() - started > args.max_seconds:
            aborted = f"stopped after {args.max_seconds:g} s with {len(cases) - sent} cases unsent"
            break
        outcome = exchange(host, port, case, args.timeout)
        sent += 1
        key = str(outcome.responses[0][0]) if outcome.responses else outcome.kind
        statuses[key] = statuses.get(key, 0) + 1
        problems = judge(case, outcome, args.allow_503, args.require_error_body)
        bare = [s for s, _, b in outcome.responses if 400 <= s < 500 and not b.lstrip().startswith(b"{")]
        if bare:
            bare_4xx += 1
        if outcome.kind in ("refused", "closed", "reset", "timeout") and not healthy(host, port, min(args.timeout, 5.0)):
            problems.append("the server stopped answering /healthz after this case (crashed?)")
            failures.append((case, problems, outcome))
            aborted = "the server is down"
            break
        if problems:
            failures.append((case, problems, outcome))
    final_health = "" if aborted == "the server is down" or healthy(host, port, args.timeout) else "GET /healthz does not answer 200 after the run"

    print_failures(failures, args.show_bytes)
    distribution = ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items()))
    elapsed = time.monotonic() - started
    print(f"raw-http: outcomes {distribution} in {elapsed:.1f} s (families {','.join(families)})")
    if bare_4xx:
        print(f"raw-http: {bare_4xx} 4xx answers without the JSON error body (the HTTP parser's own 400s; --require-error-body fails them)")
    if aborted:
        print(f"raw-http: {aborted}")
    if final_health:
        print(f"raw-http: {final_health}")
    failed = len(failures) + (1 if final_health else 0) + (1 if aborted and aborted != "the server is down" else 0)
    print(f"raw-http: {sent} cases, {len(failures)} failures")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
