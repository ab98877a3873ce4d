"""Retries, authentication failures and secrecy of ``RestClient``/``RestApi`` against ``tests/rest_server.py``."""

from __future__ import annotations

import logging
import time

import pytest

from table_engine.catalog.rest.api import RestApi
from table_engine.catalog.rest.client import RestClient, RestResponseError, RetryPolicy
from table_engine.catalog.rest.messages import Identifier
from table_engine.errors import CatalogError
from tests.rest_server import FAST_RETRY, RestCatalogServer
from tests.s3_server import free_port

pytestmark = pytest.mark.timeout(120)


def _db_gets(server: RestCatalogServer) -> int:
    return sum(1 for m, p in server.requests if m == "GET" and p == "/v1/paimon/databases")


def test_two_503_then_success(api: RestApi, server: RestCatalogServer, caplog: pytest.LogCaptureFixture) -> None:
    before = _db_gets(server)
    server.fail_next(2, 503)
    with caplog.at_level(logging.WARNING, logger="table_engine.catalog.rest.client"):
        api.list_databases()
    assert _db_gets(server) - before == 3
    assert [r.getMessage() for r in caplog.records if "retry" in r.getMessage()][:2] == [
        "REST catalog GET /v1/paimon/databases: HTTP 503, retry 1/3 in 0.01s",
        "REST catalog GET /v1/paimon/databases: HTTP 503, retry 2/3 in 0.02s",
    ]


def test_429_honours_retry_after(server: RestCatalogServer) -> None:
    api = RestApi(server.options(), retry=RetryPolicy(max_retries=2, initial_backoff=0.01, max_backoff=5, jitter=0))
    try:
        server.fail_next(1, 429, retry_after="1")
        started = time.monotonic()
        api.list_databases()
        assert 1.0 <= time.monotonic() - started < 4.0
    finally:
        api.close()


def test_retries_run_out_with_the_status_and_message(api: RestApi, server: RestCatalogServer) -> None:
    server.fail_next(10, 503)
    with pytest.raises(RestResponseError, match=r"GET /v1/paimon/databases failed with HTTP 503: injected fault") as e:
        api.list_databases()
    assert e.value.status == 503
    server._faults.clear()


def test_post_is_not_retried_on_503_but_is_on_429(api: RestApi, server: RestCatalogServer) -> None:
    server.fail_next(1, 503)
    with pytest.raises(RestResponseError, match="POST /v1/paimon/databases failed with HTTP 503"):
        api.create_database("never_made")
    server.fail_next(1, 429)
    api.create_database("made_after_429")
    assert "made_after_429" in api.list_databases() and "never_made" not in api.list_databases()


def test_server_down_is_one_catalog_error_naming_the_uri_in_bounded_time() -> None:
    uri = f"http://127.0.0.1:{free_port()}"
    client = RestClient(uri, _Bearer("tok-down-123"),
                        retry=RetryPolicy(max_retries=3, initial_backoff=0.05, max_backoff=0.2, jitter=0))
    started = time.monotonic()
    with pytest.raises(CatalogError) as e:
        client.request("GET", "/v1/config")
    assert time.monotonic() - started < 5
    assert uri in str(e.value) and "after 4 attempt(s)" in str(e.value) and "GET /v1/config" in str(e.value)
    assert "tok-down-123" not in str(e.value)
    with pytest.raises(CatalogError, match=uri.replace(".", r"\.")):
        RestApi({"uri": uri, "warehouse": "w", "token.provider": "bear", "token": "x"},
                retry=RetryPolicy(max_retries=1, initial_backoff=0.01, jitter=0))


def test_wrong_token(server: RestCatalogServer) -> None:
    with pytest.raises(CatalogError, match=f"authentication failed for {server.uri}") as e:
        RestApi({**server.options(), "token": "wrong-token-abc"}, retry=FAST_RETRY)
    assert "wrong-token-abc" not in str(e.value) and "HTTP 401" in str(e.value)


def test_expired_token(api: RestApi, server: RestCatalogServer, caplog: pytest.LogCaptureFixture) -> None:
    server.expire_token()
    with caplog.at_level(logging.DEBUG), pytest.raises(CatalogError, match="authentication failed") as e:
        api.list_databases()
    assert "token expired" in str(e.value)
    text = f"{e.value}\n{e.value!r}\n{api!r}\n{api.client!r}\n" + "\n".join(r.getMessage() for r in caplog.records)
    assert server.token not in text


def test_token_never_in_exceptions_or_logs(server: RestCatalogServer, caplog: pytest.LogCaptureFixture) -> None:
    """A careless server quotes the Authorization header in its errors: the client scrubs it; logs hold none."""
    secret = server.token
    server.echo_auth_in_errors = True
    server.fail_next(1, 503)
    errors: list[BaseException] = []
    try:
        with caplog.at_level(logging.DEBUG):
            api = RestApi(server.options(), retry=FAST_RETRY)
            try:
                for call in (lambda: api.get_database("missing_db"), lambda: api.create_database("dup_db"),
                             lambda: api.create_database("dup_db"), lambda: api.get_table(_ident())):
                    try:
                        call()
                    except CatalogError as e:
                        errors.append(e)
                server.expire_token()
                try:
                    api.list_databases()
                except CatalogError as e:
                    errors.append(e)
            finally:
                api.close()
    finally:
        server.echo_auth_in_errors = False
    assert len(errors) == 4  # not found, exists, not found, expired
    text = "\n".join([*(f"{e}{e!r}{e.__cause__!r}{e.__context__!r}" for e in errors),
                      *(r.getMessage() for r in caplog.records), *(str(r.args) for r in caplog.records)])
    assert "Authorization: Bearer ***" in text
    assert secret not in text


def _ident() -> Identifier:
    return Identifier("missing_db", "t")


class _Bearer:
    def __init__(self, token: str) -> None:
        self._token = token

    def headers(self, method: str, path: str, params: object, body: object) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._token}"}

    def secrets(self) -> tuple[str, ...]:
        return (self._token,)
