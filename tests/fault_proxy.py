"""A loopback HTTP proxy in front of the test S3 server: counts requests and injects faults by rule.

Clients reach it through catalog options: ``S3Server.options(endpoint=proxy.endpoint)``. Every request is recorded
(:class:`Request`: operation, key, status, fault); :meth:`FaultProxy.count` counts them by operation (``PUT``,
``GET``, ``LIST``, ``HEAD``, ``DELETE``, ``POST``) and key pattern. :class:`Rule` s inject faults into matching
requests:

* ``status``: answer ``status`` (500, 503, ...) without forwarding;
* ``delay``: hold the request past the client's timeout without forwarding, then close the connection;
* ``drop``: FORWARD the request (the store applies it), then close the connection instead of answering: the object is
  written, the client sees a broken connection;
* ``reset``: close the connection as soon as the request's headers arrive, without forwarding it (a store closing a
  kept-alive connection the client was reusing).

A rule applies to the ``nth`` matching requests (1-based, counted per rule) or to a ``fraction`` of them drawn from a
seeded generator, at most ``limit`` times: with a sequential client the faults are deterministic.
"""

from __future__ import annotations

import http.client
import random
import re
import socket
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Literal
from urllib.parse import parse_qs, urlsplit

Action = Literal["status", "delay", "drop", "reset"]
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}


@dataclass
class Rule:
    """A fault for requests of ``method`` (``PUT``, ``GET``, ``LIST``, ``HEAD``, ``DELETE``, ``POST``, or None: any)
    whose key matches ``pattern`` (a regex searched in the key, or None: any)."""

    action: Action
    method: str | None = None
    pattern: str | None = None
    status: int = 503
    nth: Iterable[int] | None = None
    fraction: float | None = None
    limit: int | None = None
    seen: int = 0
    fired: int = 0

    def __post_init__(self) -> None:
        self._nth = None if self.nth is None else set(self.nth)
        self._regex = None if self.pattern is None else re.compile(self.pattern)

    def matches(self, op: str, key: str) -> bool:
        return (self.method is None or self.method == op) and (self._regex is None or bool(self._regex.search(key)))

    def fires(self, rng: random.Random) -> bool:
        """Called for each matching request (under the proxy's lock): does the fault apply to this one?"""
        self.seen += 1
        if self.limit is not None and self.fired >= self.limit:
            return False
        if self._nth is not None:
            hit = self.seen in self._nth
        else:
            hit = rng.random() < (self.fraction if self.fraction is not None else 1.0)
        self.fired += hit
        return hit


@dataclass(frozen=True)
class Request:
    """One request the proxy saw: operation, bucket-relative key, status returned by the store (None if not
    forwarded), and the fault applied (None, "status", "delay", "drop")."""

    op: str
    key: str
    status: int | None
    fault: Action | None


def operation(method: str, path: str, query: str) -> str:
    """``LIST`` for a bucket-level GET (ListObjectsV2), else the HTTP method."""
    parts = path.lstrip("/").split("/", 1)
    if method == "GET" and (len(parts) < 2 or not parts[1] or "list-type" in parse_qs(query)):
        return "LIST"
    return method


@dataclass
class FaultProxy:
    """The proxy: ``start()`` it on a free 127.0.0.1 port, ``stop()`` it (a context manager does both)."""

    upstream: str
    seed: int = 0
    delay_seconds: float = 5.0
    rules: list[Rule] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)

    def __post_init__(self) -> None:
        up = urlsplit(self.upstream)
        self._up_host, self._up_port = up.hostname or "127.0.0.1", up.port or 80
        self._lock = threading.Lock()
        self._rng = random.Random(self.seed)
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        assert self._server is not None, "proxy not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> FaultProxy:
        proxy = self

        class Handler(_Handler):
            owner = proxy

        self._server = _QuietServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fault-proxy", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None

    # ---- rules and counters ----------------------------------------------------------------------------------
    def add(self, rule: Rule) -> Rule:
        with self._lock:
            self.rules.append(rule)
        return rule

    def clear_rules(self) -> None:
        with self._lock:
            self.rules.clear()

    def reset(self) -> None:
        """Forget the recorded requests."""
        with self._lock:
            self.requests.clear()

    def count(self, op: str | None = None, pattern: str | None = None, status: int | None = None,
              fault: Action | None | Literal["any"] = "any") -> int:
        """Requests of ``op`` whose key matches ``pattern`` (regex search), answered by the store with ``status``
        and with ``fault`` applied (default: any)."""
        regex = None if pattern is None else re.compile(pattern)
        with self._lock:
            return sum(1 for r in self.requests
                       if (op is None or r.op == op) and (regex is None or regex.search(r.key))
                       and (status is None or r.status == status) and (fault == "any" or r.fault == fault))

    def counts(self) -> dict[str, int]:
        """Requests by operation."""
        out: dict[str, int] = {}
        with self._lock:
            for r in self.requests:
                out[r.op] = out.get(r.op, 0) + 1
        return out

    def _decide(self, op: str, key: str) -> Rule | None:
        with self._lock:
            for rule in self.rules:
                if rule.matches(op, key) and rule.fires(self._rng):
                    return rule
        return None

    def _record(self, r: Request) -> None:
        with self._lock:
            self.requests.append(r)


class _QuietServer(ThreadingHTTPServer):
    """A client that drops its connection (a timed-out request) is expected here: no traceback on stderr."""

    def handle_error(self, request: object, client_address: object) -> None:
        pass


class _Handler(BaseHTTPRequestHandler):
    owner: FaultProxy
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (stdlib signature)
        pass

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _handle(self) -> None:
        proxy = self.owner
        split = urlsplit(self.path)
        parts = split.path.lstrip("/").split("/", 1)
        key = parts[1] if len(parts) > 1 else ""
        op = operation(self.command, split.path, split.query)
        # a rule is decided before the body is read (a reset closes the connection there), except for a POST: a
        # batched DeleteObjects names its keys in the body, and rules see them as one space-separated key
        rule = None if op == "POST" else proxy._decide(op, key)
        if rule is not None and rule.action == "reset":
            proxy._record(Request(op, key, None, "reset"))
            self._abort()
            return
        body = self._body()
        if op == "POST":
            if "delete" in parse_qs(split.query, keep_blank_values=True):
                op, key = "DELETE", " ".join(re.findall(r"<Key>(.*?)</Key>", body.decode("utf-8", "replace")))
            rule = proxy._decide(op, key)
        if rule is not None and rule.action == "status":
            proxy._record(Request(op, key, None, "status"))
            payload = b"<Error><Code>ServiceUnavailable</Code><Message>injected</Message></Error>"
            self.send_response(rule.status)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return
        if rule is not None and rule.action == "delay":
            proxy._record(Request(op, key, None, "delay"))
            proxy._stopping.wait(proxy.delay_seconds)
            self._abort()
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
        if body or self.command in ("PUT", "POST"):
            headers["Content-Length"] = str(len(body))
        conn = http.client.HTTPConnection(proxy._up_host, proxy._up_port, timeout=60)
        try:
            conn.request(self.command, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            status, resp_headers = resp.status, resp.getheaders()
        finally:
            conn.close()
        if rule is not None and rule.action == "drop":
            proxy._record(Request(op, key, status, "drop"))
            self._abort()
            return
        proxy._record(Request(op, key, status, None))
        self.send_response(status)
        for k, v in resp_headers:
            if k.lower() not in _HOP_BY_HOP and k.lower() != "content-length":
                self.send_header(k, v)
        length = next((v for k, v in resp_headers if k.lower() == "content-length"), None)
        self.send_header("Content-Length", length if self.command == "HEAD" and length else str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _abort(self) -> None:
        """Close the connection without an answer (the client sees a broken connection)."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle  # noqa: N815 (stdlib naming)
