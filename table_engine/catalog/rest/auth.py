r"""Authentication of REST catalog requests: Paimon's ``token.provider`` (``bear`` and ``dlf``).

``bear`` (Paimon's ``BearTokenAuthProvider``): ``Authorization: Bearer <token>`` on every request.

``dlf`` (Paimon's ``DLFAuthProvider`` with the ``default`` signer, ``DLFDefaultSigner``: DLF4-HMAC-SHA256, used by
DLF's VPC endpoints). Per request it adds ``x-dlf-date`` (``yyyyMMdd'T'HHmmss'Z'``, UTC), ``x-dlf-content-sha256:
UNSIGNED-PAYLOAD``, ``x-dlf-version: v1``, with a body ``Content-Type: application/json`` and ``Content-MD5``
(base64 of the body's MD5), with an STS token ``x-dlf-security-token``, and ``Authorization``::

    canonical request = METHOD \n path \n canonical query \n (sorted "name:value" of the signed headers present) \n
                        UNSIGNED-PAYLOAD
    canonical query   = parameters sorted by name, each "name=value" (value URL-encoded, nothing safe), or "name"
                        when the value is empty, joined by "&"
    string to sign    = "DLF4-HMAC-SHA256" \n datetime \n "<yyyyMMdd>/<region>/DlfNext/aliyun_v4_request" \n
                        hex(sha256(canonical request))
    signing key       = HMAC chain over "aliyun_v4" + secret: date, region, "DlfNext", "aliyun_v4_request"
    Authorization     = "DLF4-HMAC-SHA256 Credential=<ak id>/<date>/<region>/DlfNext/aliyun_v4_request,
                        Signature=<hex(hmac(signing key, string to sign))>"

The signed path is the request path exactly as sent (the prefix and names already URL-encoded) and the body the exact
JSON text sent. ``tests/table_engine/catalog/rest/test_auth.py`` checks this against a vector made by pypaimon
2.1.0's own ``DLFDefaultSigner``. Not here yet: the ``openapi`` signers (DLF's public endpoints) and the DLF token
loaders (``dlf.token-loader``: ECS metadata, local file), which refresh STS credentials.

Secrets never reach a repr, a message or a log line: providers expose them only through :meth:`secrets`, which the
client uses to scrub server messages.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Protocol
from urllib.parse import quote

from table_engine.errors import OptionError, UnsupportedError

TOKEN_PROVIDER = "token.provider"
TOKEN = "token"
DLF_ACCESS_KEY_ID = "dlf.access-key-id"
DLF_ACCESS_KEY_SECRET = "dlf.access-key-secret"
DLF_SECURITY_TOKEN = "dlf.security-token"
DLF_REGION = "dlf.region"
DLF_SIGNING_ALGORITHM = "dlf.signing-algorithm"


class AuthProvider(Protocol):
    """Adds authentication headers to one request."""

    def headers(self, method: str, path: str, params: Mapping[str, str], body: str | None) -> dict[str, str]:
        """The headers to add for ``method path?params`` with ``body`` (the exact text sent)."""
        ...

    def secrets(self) -> tuple[str, ...]:
        """Values that must never appear in any message (tokens, keys), for scrubbing."""
        ...


class BearerAuthProvider:
    """``token.provider=bear``: a static bearer token."""

    def __init__(self, token: str) -> None:
        if not token:
            raise OptionError("token.provider=bear needs the option 'token'")
        self._token = token

    def __repr__(self) -> str:
        return "BearerAuthProvider(token=***)"

    def headers(self, method: str, path: str, params: Mapping[str, str], body: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._token}"}

    def secrets(self) -> tuple[str, ...]:
        return (self._token,)


class DlfAuthProvider:
    """``token.provider=dlf`` with Paimon's default signer (DLF4-HMAC-SHA256); see the module docstring."""

    ALGORITHM = "DLF4-HMAC-SHA256"
    PRODUCT = "DlfNext"
    REQUEST_TYPE = "aliyun_v4_request"
    UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"
    SIGNED_HEADERS = ("content-md5", "content-type", "x-dlf-content-sha256", "x-dlf-date", "x-dlf-version",
                      "x-dlf-security-token")

    def __init__(self, access_key_id: str, access_key_secret: str, region: str, security_token: str | None = None,
                 clock: Callable[[], datetime] | None = None) -> None:
        if not access_key_id or not access_key_secret:
            raise OptionError(f"token.provider=dlf needs '{DLF_ACCESS_KEY_ID}' and '{DLF_ACCESS_KEY_SECRET}'")
        if not region:
            raise OptionError(f"token.provider=dlf needs '{DLF_REGION}'")
        self._access_key_id = access_key_id
        self._secret = access_key_secret
        self._security_token = security_token or None
        self.region = region
        self._clock = clock or (lambda: datetime.now(UTC))

    def __repr__(self) -> str:
        return f"DlfAuthProvider(region={self.region!r}, access_key_id=***, access_key_secret=***)"

    def secrets(self) -> tuple[str, ...]:
        return tuple(s for s in (self._access_key_id, self._secret, self._security_token) if s)

    def headers(self, method: str, path: str, params: Mapping[str, str], body: str | None) -> dict[str, str]:
        date_time = self._clock().astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
        signed = {"x-dlf-date": date_time, "x-dlf-content-sha256": self.UNSIGNED_PAYLOAD, "x-dlf-version": "v1"}
        if body:
            signed["Content-Type"] = "application/json"
            signed["Content-MD5"] = base64.b64encode(hashlib.md5(body.encode()).digest()).decode()
        if self._security_token is not None:
            signed["x-dlf-security-token"] = self._security_token
        return {**signed, "Authorization": self.authorization(method, path, params, signed)}

    def canonical_request(self, method: str, path: str, params: Mapping[str, str], signed: Mapping[str, str]) -> str:
        """Paimon's canonical request (see the module docstring)."""
        query = "&".join(
            f"{k.strip()}={quote(v, safe='').strip()}" if v else k.strip()
            for k, v in sorted(params.items()))
        header_lines = [f"{k}:{v.strip()}" for k, v in sorted((k.lower(), v) for k, v in signed.items()
                                                               if k.lower() in self.SIGNED_HEADERS)]
        return "\n".join([method, path, query, *header_lines,
                          signed.get("x-dlf-content-sha256", self.UNSIGNED_PAYLOAD)])

    def authorization(self, method: str, path: str, params: Mapping[str, str], signed: Mapping[str, str]) -> str:
        date_time = signed["x-dlf-date"]
        date = date_time[:8]
        scope = f"{date}/{self.region}/{self.PRODUCT}/{self.REQUEST_TYPE}"
        canonical = self.canonical_request(method, path, params, signed)
        to_sign = "\n".join([self.ALGORITHM, date_time, scope, hashlib.sha256(canonical.encode()).hexdigest()])
        key = f"aliyun_v4{self._secret}".encode()
        for part in (date, self.region, self.PRODUCT, self.REQUEST_TYPE):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        return f"{self.ALGORITHM} Credential={self._access_key_id}/{scope},Signature={signature}"


def auth_provider_from_options(options: Mapping[str, str]) -> AuthProvider:
    """The provider that ``token.provider`` names (``bear`` or ``dlf``)."""
    kind = (options.get(TOKEN_PROVIDER) or "").strip().lower()
    if kind == "bear":
        return BearerAuthProvider(options.get(TOKEN, ""))
    if kind == "dlf":
        # Paimon's values are dlf-default and dlf-openapi (the "dlf-" prefix is optional here)
        algorithm = (options.get(DLF_SIGNING_ALGORITHM) or "default").strip().lower().removeprefix("dlf-")
        host = (options.get("uri") or "").lower().split("://")[-1].split("/")[0].split(":")[0]
        if algorithm == "default" and "dlfnext" in host:
            algorithm = "openapi"  # Paimon picks the OpenAPI signer for DLF's public (dlfnext) endpoints
        if algorithm != "default":
            raise UnsupportedError(f"{DLF_SIGNING_ALGORITHM}={algorithm!r}: only the 'default' DLF signer is "
                                   "implemented")
        return DlfAuthProvider(options.get(DLF_ACCESS_KEY_ID, ""), options.get(DLF_ACCESS_KEY_SECRET, ""),
                               options.get(DLF_REGION, ""), options.get(DLF_SECURITY_TOKEN))
    if not kind:
        raise OptionError(f"the REST catalog needs '{TOKEN_PROVIDER}' (bear or dlf)")
    raise OptionError(f"unknown {TOKEN_PROVIDER} {kind!r}: expected bear or dlf")
