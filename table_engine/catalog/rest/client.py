"""The HTTP client of the REST catalog: one ``requests.Session`` per catalog, JSON in and out.

Why ``requests`` (ADR 0045): pypaimon's REST client uses it, Airflow depends on it (so the provider adds nothing), and
the catalog's traffic is synchronous, small and sequential; httpx's async and HTTP/2 would bring nothing here.
``requests``' own ``Retry`` adapter is not used: it cannot be told to retry a POST only on 429, and its errors carry
the full URL and request; the loop below owns both.

Retries (:class:`RetryPolicy`), with exponential backoff capped at ``max_backoff`` and a server's ``Retry-After``
(seconds or an HTTP date) honoured (also capped):

* 429 (too many requests: refused before any work) on every method;
* 503 on idempotent methods (GET, HEAD, DELETE) only: a POST (a commit) answered 503 by a proxy may have been
  executed, and resending it would turn a success into a conflict -- as in Paimon Java and pypaimon;
* connection failures (nothing was sent) on every method; read failures (timeouts, resets) on idempotent methods only.

Errors: :class:`RestResponseError` (a :class:`CatalogError` with the status, the server's ``ErrorResponse`` fields)
for an error answer, :class:`RestConnectionError` (a :class:`CatalogError`) naming the URI when the server cannot be
reached after the retries. Every
message names the method, the endpoint path and the status; none holds a header value, and any secret of the auth
provider that a server echoes is replaced by ``***``.
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import requests

from table_engine.catalog.rest.auth import AuthProvider
from table_engine.errors import CatalogError

log = logging.getLogger(__name__)

IDEMPOTENT = frozenset({"GET", "HEAD", "DELETE"})


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry (see the module docstring for which failures)."""

    max_retries: int = 5
    initial_backoff: float = 0.5
    max_backoff: float = 30.0
    jitter: float = 0.1  # a fraction of each delay added at random, so that clients do not retry in lockstep


@dataclass(frozen=True)
class Timeouts:
    """Seconds to connect and to wait for each read of the answer."""

    connect: float = 10.0
    read: float = 60.0


class RestResponseError(CatalogError):
    """The server answered an error status; ``status`` and the ``ErrorResponse`` fields are attributes."""

    def __init__(self, method: str, path: str, status: int, message: str, resource_type: str | None = None,
                 resource_name: str | None = None) -> None:
        super().__init__(f"{method} {path} failed with HTTP {status}: {message}")
        self.method, self.path, self.status, self.server_message = method, path, status, message
        self.resource_type, self.resource_name = resource_type, resource_name


class RestConnectionError(CatalogError):
    """The server could not be reached, or did not answer, after the retries. ``sent``: whether the request may have
    reached the server (a read failure after sending; a refused connection was never sent)."""

    def __init__(self, message: str, sent: bool) -> None:
        super().__init__(message)
        self.sent = sent


def _scrub(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def _retry_after(value: str | None) -> float | None:
    """``Retry-After`` in seconds (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class RestClient:
    """JSON requests to one REST catalog server (``uri``), authenticated by ``auth``."""

    def __init__(self, uri: str, auth: AuthProvider, headers: Mapping[str, str] | None = None,
                 timeouts: Timeouts | None = None, retry: RetryPolicy | None = None,
                 session: requests.Session | None = None) -> None:
        uri = uri.strip().rstrip("/")
        if not uri:
            raise CatalogError("the REST catalog needs the option 'uri'")
        self.uri = uri if uri.startswith(("http://", "https://")) else f"http://{uri}"
        self._auth = auth
        self._headers = dict(headers or {})
        self.timeouts = timeouts or Timeouts()
        self.retry = retry or RetryPolicy()
        self._session = session or requests.Session()

    def __repr__(self) -> str:
        return f"RestClient(uri={self.uri!r})"

    def close(self) -> None:
        self._session.close()

    def set_headers(self, headers: Mapping[str, str]) -> None:
        """Replace the static headers (``header.*`` options, after the config call merged the server's)."""
        self._headers = dict(headers)

    def request(self, method: str, path: str, params: Mapping[str, str] | None = None,
                body: Any = None) -> Any:
        """Send one request (retrying per :class:`RetryPolicy`); the decoded JSON answer, or None when empty."""
        params = {k: v for k, v in (params or {}).items() if v is not None}
        data = None if body is None else json.dumps(body, separators=(",", ":"))
        secrets = self._auth.secrets()
        attempt = 0
        while True:
            headers = {"Content-Type": "application/json", **self._headers,
                       **self._auth.headers(method, path, params, data)}
            delay: float | None = None
            try:
                response = self._session.request(method, self.uri + path, params=params or None, data=data,
                                                 headers=headers, timeout=(self.timeouts.connect, self.timeouts.read))
            except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as e:
                never_sent = isinstance(e, requests.exceptions.ConnectTimeout) or (
                    isinstance(e, requests.exceptions.ConnectionError) and _never_sent(e))
                if attempt >= self.retry.max_retries or not (never_sent or method in IDEMPOTENT):
                    what = "cannot reach" if never_sent else "no answer from"
                    raise RestConnectionError(f"{method} {path}: {what} the REST catalog at {self.uri} after "
                                              f"{attempt + 1} attempt(s) ({type(e).__name__})",
                                              sent=not never_sent) from None
                reason = "connection failed" if never_sent else f"no answer ({type(e).__name__})"
            else:
                status = response.status_code
                if status < 400:
                    return response.json() if response.content else None
                retryable = status == 429 or (status == 503 and method in IDEMPOTENT)
                if not retryable or attempt >= self.retry.max_retries:
                    raise self._error(method, path, response, secrets)
                reason = f"HTTP {status}"
                delay = _retry_after(response.headers.get("Retry-After"))
            backoff = min(self.retry.max_backoff, self.retry.initial_backoff * (2 ** attempt))
            wait = min(self.retry.max_backoff, delay if delay is not None else backoff)
            wait += wait * self.retry.jitter * random.random()
            attempt += 1
            log.warning("REST catalog %s %s: %s, retry %d/%d in %.2fs", method, path, reason, attempt,
                        self.retry.max_retries, wait)
            time.sleep(wait)

    @staticmethod
    def _error(method: str, path: str, response: requests.Response, secrets: tuple[str, ...]) -> RestResponseError:
        message, resource_type, resource_name = "", None, None
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if isinstance(payload, dict):
            message = str(payload.get("message") or "")
            resource_type = payload.get("resourceType") or None
            resource_name = payload.get("resourceName") or None
        if not message:
            message = (response.text or response.reason or "no message")[:500]
        return RestResponseError(method, path, response.status_code, _scrub(message, secrets), resource_type,
                                 None if resource_name is None else _scrub(str(resource_name), secrets))


def _never_sent(error: requests.exceptions.ConnectionError) -> bool:
    """Whether the connection failed before the request went out (refused, DNS, connect timeout)."""
    text = repr(error.args[0]) if error.args else ""
    return any(marker in text for marker in ("NewConnectionError", "ConnectTimeoutError", "NameResolutionError",
                                             "Connection refused"))
