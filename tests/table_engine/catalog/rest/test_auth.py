"""Auth providers: bearer headers, and the DLF default signer against a vector made by pypaimon 2.1.0's own
``DLFDefaultSigner`` (run in its venv with these inputs: region cn-hangzhou, 2025-04-16T03:44:46Z, key id
``AccessKeyId``, secret ``AccessKeySecret``, security token ``securityToken``)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from table_engine.catalog.rest.auth import BearerAuthProvider, DlfAuthProvider, auth_provider_from_options
from table_engine.errors import OptionError, UnsupportedError

NOW = datetime(2025, 4, 16, 3, 44, 46, tzinfo=UTC)


def _dlf() -> DlfAuthProvider:
    return DlfAuthProvider("AccessKeyId", "AccessKeySecret", "cn-hangzhou", "securityToken", clock=lambda: NOW)


def test_dlf_post_with_body_matches_pypaimon() -> None:
    headers = _dlf().headers("POST", "/v1/paimon/databases", {}, '{"name":"db1","options":{}}')
    assert headers == {
        "Content-MD5": "Rs+25PQC+FJtNEZhyqUSkQ==", "Content-Type": "application/json",
        "x-dlf-content-sha256": "UNSIGNED-PAYLOAD", "x-dlf-date": "20250416T034446Z",
        "x-dlf-security-token": "securityToken", "x-dlf-version": "v1",
        "Authorization": "DLF4-HMAC-SHA256 Credential=AccessKeyId/20250416/cn-hangzhou/DlfNext/aliyun_v4_request,"
                         "Signature=5e81daa8ab12010f836a48d995e584c188e64a15364c29cdab21cb4093a71636",
    }


def test_dlf_get_with_query_matches_pypaimon() -> None:
    headers = _dlf().headers("GET", "/v1/paimon/databases", {"maxResults": "10", "pageToken": "a b/c"}, None)
    assert "Content-MD5" not in headers and "Content-Type" not in headers
    assert headers["Authorization"].endswith(
        "Signature=e81de387000a01db020ae69e32b31da89a3507ec481cc0c55c51b10b5968aa6e")


def test_reprs_hide_secrets() -> None:
    assert "AccessKeySecret" not in repr(_dlf()) and "AccessKeyId" not in repr(_dlf())
    assert "s3cr3t" not in repr(BearerAuthProvider("s3cr3t"))
    assert BearerAuthProvider("s3cr3t").headers("GET", "/v1/config", {}, None) == {"Authorization": "Bearer s3cr3t"}


def test_options_pick_the_provider() -> None:
    assert isinstance(auth_provider_from_options({"token.provider": "bear", "token": "t"}), BearerAuthProvider)
    dlf = auth_provider_from_options({"token.provider": "dlf", "dlf.access-key-id": "a", "dlf.access-key-secret": "b",
                                      "dlf.region": "cn-hangzhou"})
    assert isinstance(dlf, DlfAuthProvider)
    with pytest.raises(OptionError, match="token.provider"):
        auth_provider_from_options({})
    with pytest.raises(OptionError, match="'token'"):
        auth_provider_from_options({"token.provider": "bear"})
    with pytest.raises(UnsupportedError, match="openapi"):
        auth_provider_from_options({"token.provider": "dlf", "uri": "https://dlfnext.cn-hangzhou.aliyuncs.com",
                                    "dlf.access-key-id": "a", "dlf.access-key-secret": "b", "dlf.region": "r"})
