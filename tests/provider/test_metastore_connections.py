"""``paimon`` connections on the metastores that run as servers: a JDBC catalog on PostgreSQL (the password in the
connection's ``jdbc_password`` field) and a Hive Metastore (``thrift://``), both the session's (the ``postgres`` and
``hive_metastore`` fixtures of tests/conftest.py, on 127.0.0.1). The hook reads a table registered there, the Test
button lists the catalog's databases, and a wrong password is a failed test that does not show it."""

from __future__ import annotations

import pathlib
from typing import Any

import pyarrow as pa
import pytest
from paimon_provider.hooks.table import PaimonTableHook

from table_engine.catalog import create_catalog
from tests import airflow_env

pytestmark = pytest.mark.integration

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def _check(monkeypatch: pytest.MonkeyPatch, warehouse: str, options: dict[str, str], **fields: Any) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_connection(warehouse, **fields))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", airflow_env.spark_connection("local[2]"))
    catalog = create_catalog(warehouse, options)
    try:
        catalog.create_database("conn_db", ignore_if_exists=True)
        catalog.create_table("conn_db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"}).write(
            pa.table({"id": [1, 2], "v": ["a", "b"]}, schema=SCHEMA))
    finally:
        catalog.close()
    hook = PaimonTableHook()
    assert hook.read("conn_db.t").num_rows == 2 and hook.table_exists("conn_db.t")
    ok, message = hook.test_connection()
    assert ok, message
    kind = options["metastore"]
    assert message.startswith(f"the {kind} catalog of {warehouse} lists databases [") and "conn_db" in message


def test_a_jdbc_connection_on_postgresql(postgres: Any, monkeypatch: pytest.MonkeyPatch,
                                         tmp_path: pathlib.Path) -> None:
    from tests import postgres_server

    warehouse = str(tmp_path / "warehouse")
    uri = postgres.jdbc_uri(postgres.new_database())
    options = {"metastore": "jdbc", "uri": uri, "jdbc.user": postgres_server.USER,
               "jdbc.password": postgres_server.PASSWORD, "lock.enabled": "true"}
    _check(monkeypatch, warehouse, options, metastore="jdbc", uri=uri, jdbc_user=postgres_server.USER,
           jdbc_password=postgres_server.PASSWORD, lock_enabled=True)
    assert postgres_server.PASSWORD not in repr(PaimonTableHook().get_conn())
    # a wrong password: a failed test, which names the catalog but neither password
    wrong = "not-the-password-93be"
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_connection(
        warehouse, metastore="jdbc", uri=uri, jdbc_user=postgres_server.USER, jdbc_password=wrong))
    ok, message = PaimonTableHook().test_connection()
    assert not ok and wrong not in message and postgres_server.PASSWORD not in message, message


def test_a_hive_connection(hive_metastore: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    warehouse = str(tmp_path / "warehouse")
    options = {"metastore": "hive", "uri": hive_metastore.uri}
    _check(monkeypatch, warehouse, options, metastore="hive", uri=hive_metastore.uri)
