"""PaimonTableHook: lazy connection resolution, read-only table access, summaries; connection parsing."""

from __future__ import annotations

import json
import os
import pathlib

import pyarrow as pa
import pytest
from paimon_provider.hooks.table import PaimonTableHook
from paimon_provider.utils.connection import PaimonConnectionConfig

from table_engine import Catalog
from tests import airflow_env
from tests.s3_server import SECRET_KEY, S3Server


def test_connection_fields_are_parsed() -> None:
    cfg = PaimonConnectionConfig.from_connection_fields("c", None, {
        "warehouse": "s3://b/wh", "catalog_options": '{"a": 1}', "spark_conn_id": "spark_x",
        "python": "/py", "spark_conf": {"spark.x": "y"}})
    assert cfg == PaimonConnectionConfig("c", "s3://b/wh", {"a": "1"}, "spark_x", "/py", {"spark.x": "y"})
    legacy = PaimonConnectionConfig.from_connection_fields("c", None, {"extra__paimon__warehouse": "/wh",
                                                                       "spark_conn_id": ""})
    assert legacy.warehouse == "/wh" and legacy.spark_conn_id == "spark_default" and legacy.catalog_options == {}
    assert PaimonConnectionConfig.from_connection_fields("c", "/from/host", {}).warehouse == "/from/host"
    with pytest.raises(ValueError, match="no warehouse"):
        PaimonConnectionConfig.from_connection_fields("c", None, {})
    with pytest.raises(ValueError, match="catalog_options must be a JSON object"):
        PaimonConnectionConfig.from_connection_fields("c", None, {"warehouse": "/w", "catalog_options": "[1]"})


def test_hook_resolves_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    hook = PaimonTableHook("paimon_not_defined_yet")  # no lookup in the constructor
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_NOT_DEFINED_YET", json.dumps({"conn_type": "paimon",
                                                                          "extra": {"warehouse": "/late"}}))
    assert hook.warehouse == "/late"


def test_warehouse_override_without_connection(tmp_path: object) -> None:
    hook = PaimonTableHook("paimon_absent", warehouse="/override")
    assert hook.get_conn().warehouse == "/override"


def test_read_summary_and_test_connection(paimon_conn: str) -> None:
    schema = pa.schema([("id", pa.int64()), ("v", pa.string())])
    t = Catalog(paimon_conn).create_table("db.t", schema, primary_keys=["id"], options={"bucket": "1"})
    t.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=schema))
    t.create_tag("t1")
    hook = PaimonTableHook()
    assert hook.table_exists("db.t") and not hook.table_exists("db.nope")
    assert hook.read("db.t", limit=2).num_rows == 2
    assert hook.read("db.t", columns=["v"], tag="t1").column("v").to_pylist() == ["a", "b", "c"]
    summary = hook.table_summary("db.t")
    json.dumps(summary)  # XCom-friendly
    assert summary["primary_keys"] == ["id"] and summary["tags"] == ["t1"]
    assert summary["latest_snapshot"]["snapshot_id"] == 1 and summary["latest_snapshot"]["commit_kind"] == "APPEND"
    ok, message = hook.test_connection()
    assert ok and "db" in message and "Spark connection spark_default has master local[2]" in message
    assert "probe object was created (if absent) and deleted" in message  # the credentials may write there too
    assert not [p for p in os.listdir(paimon_conn) if p.startswith(".airflow-test-connection")]


def test_test_connection_reports_a_missing_spark_connection_and_a_bad_warehouse(
        paimon_conn: str, monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    os.makedirs(paimon_conn, exist_ok=True)
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_OTHER", airflow_env.paimon_connection(paimon_conn, "spark_nope"))
    ok, message = PaimonTableHook("paimon_other").test_connection()
    assert not ok and "Spark connection 'spark_nope'" in message and f"warehouse {paimon_conn}" in message
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_OTHER", airflow_env.paimon_connection(str(tmp_path / "file")))
    ok, message = PaimonTableHook("paimon_other").test_connection()
    assert not ok and message.startswith(f"cannot list warehouse {tmp_path / 'file'}")
    # a local warehouse that does not exist (a typo): said so, nothing created there
    missing = tmp_path / "no" / "warehouse"
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_OTHER", airflow_env.paimon_connection(str(missing)))
    ok, message = PaimonTableHook("paimon_other").test_connection()
    assert not ok and message.startswith(f"warehouse {missing} does not exist") and not missing.parent.exists()
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_OTHER", json.dumps({"conn_type": "paimon", "extra": {}}))
    ok, message = PaimonTableHook("paimon_other").test_connection()
    assert not ok and "no warehouse" in message


def test_hook_opens_an_s3_warehouse_with_the_connections_credentials(
        monkeypatch: pytest.MonkeyPatch, s3_server: S3Server, s3_warehouse: str, s3_options: dict[str, str]) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_s3_connection(s3_warehouse,
                                                                                       s3_server.endpoint))
    airflow_env.without_aws_environment(monkeypatch)
    schema = pa.schema([("id", pa.int64())])
    Catalog(s3_warehouse, s3_options).create_table("db.t", schema, primary_keys=["id"], options={"bucket": "1"}) \
        .write(pa.table({"id": [1, 2]}, schema=schema))
    hook = PaimonTableHook()
    assert SECRET_KEY not in repr(hook.get_conn())
    assert hook.get_conn().catalog_options["s3.endpoint"] == s3_server.endpoint
    assert hook.read("db.t").num_rows == 2 and hook.latest_snapshot("db.t").snapshot_id == 1  # type: ignore[union-attr]
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", airflow_env.spark_connection("local[2]"))
    ok, message = hook.test_connection()
    assert ok and SECRET_KEY not in message and "probe object was created (if absent) and deleted" in message
    assert not any(".airflow-test-connection" in f.path for f in Catalog(s3_warehouse, s3_options).file_io
                   .list_status(s3_warehouse))
    # a bucket that does not exist (the test server accepts any key): the test fails, naming the warehouse
    missing = "s3://no-such-bucket-for-test-connection/warehouse"
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_MISSING", airflow_env.paimon_s3_connection(missing, s3_server.endpoint))
    ok, message = PaimonTableHook("paimon_missing").test_connection()
    assert not ok and missing in message and SECRET_KEY not in message
    # the warehouse override keeps the connection's credentials
    assert PaimonTableHook(warehouse=s3_warehouse).table_exists("db.t")
