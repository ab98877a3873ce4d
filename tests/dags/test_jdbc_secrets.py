"""A DAG run on a JDBC catalog whose password is only in the ``paimon`` connection (its ``jdbc_password`` field), and
a hunt for it, as tests/dags/test_s3_credentials.py hunts the S3 secret key (its watch of every descendant's argv
and its read of the metadata database's rendered fields, XComs and Asset event extras).

One ``dag.test()`` run on a JDBC catalog (SQLite: it ignores the password, so the hunt needs no server): a write on
the worker (a small job in the task's process), a metadata command in a process of its own (the engine's CLI: the
password reaches it in ``PAIMON_CATALOG_SECRETS``, never its argv) and a poking sensor. The password appears in no
argv, task log, rendered field, XCom or Asset event."""

from __future__ import annotations

import datetime
import json
import pathlib
import uuid
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from example_lake import LAPTOP_SPARK_CONF

from tests import airflow_env
from tests.dags.test_s3_credentials import CmdlineWatch, _db_texts, metadata_db_bytes, sync_to_db

pytestmark = [pytest.mark.airflow, pytest.mark.slow, pytest.mark.timeout(900)]

DAG_ID = "paimon_jdbc_secret"
TABLE = "db.events"
PASSWORD = f"jdbc-pw-{uuid.uuid4().hex}"
"""Made when the test runs: this file is the DAG's file, whose source Airflow stores (``dag_code``)."""


def build_dag(source: str) -> Any:
    from airflow.sdk import DAG
    from paimon_provider.operators import PaimonCreateTagOperator, PaimonWriteOperator
    from paimon_provider.sensors import PaimonSnapshotSensor

    with DAG(DAG_ID, schedule=None, start_date=datetime.datetime(2026, 1, 1), catchup=False) as dag:
        write = PaimonWriteOperator(task_id="write", table=TABLE, source=source, primary_keys=["id"],
                                    table_options={"bucket": "1"}, spark={"conf": LAPTOP_SPARK_CONF})
        # env_vars: the engine's CLI in a process of its own, which gets the password from its environment
        tag = PaimonCreateTagOperator(task_id="tag", table=TABLE, tag="t1",
                                      spark={"runner": "local", "env_vars": {"PAIMON_PROBE": "1"}})
        poke = PaimonSnapshotSensor(task_id="poke", table=TABLE, poke_interval=1, timeout=120)
        write >> tag >> poke
    return dag


def test_a_dag_run_on_a_jdbc_catalog_leaks_its_password_nowhere(
        airflow_db: None, monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path,
        capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    from table_engine.catalog import create_catalog

    warehouse = str(tmp_path / "warehouse")
    uri = f"jdbc:sqlite:{tmp_path / 'catalog.db'}"
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_connection(
        warehouse, metastore="jdbc", uri=uri, jdbc_user="etl", jdbc_password=PASSWORD, lock_enabled=True))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", airflow_env.spark_connection("local[2]"))
    options = {"metastore": "jdbc", "uri": uri, "jdbc.user": "etl", "jdbc.password": PASSWORD}
    with create_catalog(warehouse, options) as catalog:
        catalog.create_database("db")
    source = tmp_path / "landing" / "part-0.parquet"
    source.parent.mkdir()
    pq.write_table(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}), source)
    dag = build_dag(str(source.parent))
    sync_to_db(dag, tmp_path / "no-dags")
    with CmdlineWatch((PASSWORD,)) as watch:
        dr = dag.test()
    states = {ti.task_id: str(ti.state) for ti in dr.get_task_instances()}
    assert str(dr.state) == "success", states

    with create_catalog(warehouse, options) as catalog:
        table = catalog.get_table(TABLE)
        assert sorted(table.read().column("id").to_pylist()) == [1, 2, 3] and table.list_tags() == ["t1"]
    # the tag task's CLI ran in a process of its own (the watch saw it), and no argv held the password
    assert any("table_engine.cli" in s for s in watch.seen), watch.seen
    assert watch.leaks == []
    texts = _db_texts(DAG_ID)
    assert json.loads(texts["xcom"])  # the tasks' results are there
    for what, text in texts.items():
        assert PASSWORD not in text, what
    out, err = capfd.readouterr()
    assert "create-tag db.events: starting" in out + err  # the CLI's own log lines are in the task output
    assert PASSWORD not in out and PASSWORD not in err and PASSWORD not in caplog.text
    for path, data in metadata_db_bytes():
        assert PASSWORD.encode() not in data, path
