"""A ``paimon`` connection on a REST catalog (``metastore`` = ``rest``, ADR 0045): the bearer token is the
connection's password, so Airflow masks it; the hook reads a table through the server; the token reaches a job
process in the environment (like ``jdbc.password``), never in its command line; a wrong token is a failed Test that
does not show it."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from paimon_provider.hooks.table import PaimonTableHook
from paimon_provider.utils.connection import PaimonConnectionConfig, form_extra, without_credentials

from table_engine.catalog import create_catalog
from table_engine.ops.secrets import SECRETS_ENV
from tests import airflow_env
from tests.rest_server import (
    TOKEN,
    RestCatalogServer,
    own_server,  # noqa: F401 (the fixture "server": a server of each test's own)
)

pytestmark = pytest.mark.timeout(300)

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def _connection(server: RestCatalogServer, token: str) -> str:
    return json.dumps({"conn_type": "paimon", "password": token, "extra": form_extra(
        server.warehouse, spark_conn_id="spark_default", metastore="rest", uri=server.uri, token_provider="bear")})


def test_a_rest_connection(server: RestCatalogServer, monkeypatch: pytest.MonkeyPatch) -> None:
    with create_catalog(server.warehouse, server.options()) as catalog:
        catalog.create_table("conn_db.t", SCHEMA).write(pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=SCHEMA))
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", _connection(server, TOKEN))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", airflow_env.spark_connection("local[2]"))
    hook = PaimonTableHook()
    config = hook.get_conn()
    assert config.catalog_options["token.provider"] == "bear" and "token" not in config.catalog_options
    assert config.credentials == {"token": TOKEN} and TOKEN not in repr(config)
    assert hook.read("conn_db.t").num_rows == 2
    ok, message = hook.test_connection()
    assert ok, message
    assert "REST catalog" in message and "conn_db" in message and TOKEN not in message
    # a job: the token in the environment, not in what may travel in an argv
    assert TOKEN not in json.dumps(without_credentials(config.engine_options()))
    assert TOKEN in config.job_environment()[SECRETS_ENV]

    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", _connection(server, "wrong-token-7d1c"))
    ok, message = PaimonTableHook().test_connection()
    assert not ok and "401" in message and "wrong-token-7d1c" not in message, message


def test_dlf_keys_are_the_login_and_password() -> None:
    config = PaimonConnectionConfig.from_connection_fields(
        "c", None, {"warehouse": "lake", "metastore": "rest", "uri": "http://127.0.0.1:1", "token_provider": "dlf"},
        login="ak-id", password="ak-secret")
    assert config.catalog_options["dlf.access-key-id"] == "ak-id"
    assert config.credentials == {"dlf.access-key-secret": "ak-secret"}
    with pytest.raises(ValueError, match="leave the login empty"):
        PaimonConnectionConfig.from_connection_fields(
            "c", None, {"warehouse": "lake", "metastore": "rest", "uri": "http://127.0.0.1:1"}, login="x",
            password="y")
