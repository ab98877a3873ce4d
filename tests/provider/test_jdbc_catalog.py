"""A ``paimon`` connection on a JDBC catalog (``metastore`` = ``jdbc``, an SQLite database here: no server): the
hook, an operator in a ``dag.test()`` run, a sensor and its trigger, the engine's CLI and the Spark application's
metadata route all open the catalog the connection names, so a table registered there is found and one the
catalog does not register is not; the Test button lists the catalog's databases. The JDBC password is a secret:
tests/provider/hooks/test_spark.py (never in an argv), tests/provider/utils/test_connection.py (refused in
catalog_options)."""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import subprocess
import sys
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from airflow.sdk.exceptions import AirflowFailException
from paimon_provider.hooks.table import PaimonTableHook

from table_engine.catalog import Catalog, create_catalog
from table_engine.errors import TableNotExistError
from table_engine.ops import CreateTag
from tests import airflow_env
from tests.provider.operators.conftest import LOCAL
from tests.provider.operators.test_retries import DRIVER, ti_context

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def jdbc(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> dict[str, Any]:
    """``paimon_default`` -> a JDBC catalog (SQLite, commit lock on) of a fresh warehouse; ``spark_default`` ->
    ``local[2]``. Its warehouse, catalog options and table ``db.t`` (created through the catalog, one row)."""
    warehouse = str(tmp_path / "warehouse")
    options = {"metastore": "jdbc", "uri": f"jdbc:sqlite:{tmp_path / 'catalog.db'}", "lock.enabled": "true"}
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_connection(
        warehouse, metastore="jdbc", uri=options["uri"], lock_enabled=True))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", airflow_env.spark_connection("local[2]"))
    catalog = create_catalog(warehouse, options)
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"}).write(
        pa.table({"id": [1], "v": ["a"]}, schema=SCHEMA))
    # a table with files in the warehouse that the JDBC catalog does not register: not one of its tables
    Catalog(warehouse).create_table("db.unregistered", SCHEMA)
    return {"warehouse": warehouse, "options": options, "catalog": catalog}


def test_the_hook_reads_through_the_jdbc_catalog_and_the_test_button_lists_its_databases(jdbc: dict[str, Any]
                                                                                        ) -> None:
    hook = PaimonTableHook()
    assert hook.get_conn().catalog_options == {"metastore": "jdbc", "uri": jdbc["options"]["uri"],
                                               "lock.enabled": "true"}
    assert hook.table_exists("db.t") and not hook.table_exists("db.unregistered")
    assert hook.read("db.t").to_pylist() == [{"id": 1, "v": "a"}]
    assert hook.latest_snapshot("db.t").snapshot_id == 1
    ok, message = hook.test_connection()
    assert ok, message
    assert message.startswith(f"the jdbc catalog of {jdbc['warehouse']} lists databases ['db'] (ok: 1 databases)")


def test_the_test_button_reports_a_catalog_that_does_not_open(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: pathlib.Path) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_BAD", airflow_env.paimon_connection(
        str(tmp_path / "wh"), metastore="rest"))
    ok, message = PaimonTableHook("paimon_bad").test_connection()
    assert not ok and "metastore=rest needs the option 'uri'" in message
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_BAD", airflow_env.paimon_connection(
        str(tmp_path / "wh"), metastore="jdbc", uri="jdbc:nosuchdb://127.0.0.1:9/x", jdbc_password="pw-s3cr3t-42"))
    ok, message = PaimonTableHook("paimon_bad").test_connection()
    assert not ok and "pw-s3cr3t-42" not in message


def test_operators_write_and_tag_through_the_jdbc_catalog(jdbc: dict[str, Any], tmp_path: pathlib.Path) -> None:
    from paimon_provider.operators import PaimonCreateTagOperator, PaimonWriteOperator

    source = tmp_path / "batch.parquet"
    pq.write_table(pa.table({"id": [2, 3], "v": ["b", "c"]}, schema=SCHEMA), source)
    PaimonWriteOperator(task_id="w", table="db.t", source=str(source), spark=DRIVER).execute(ti_context(1))
    PaimonCreateTagOperator(task_id="g", table="db.t", tag="after-load", spark=LOCAL).execute(ti_context(1))
    table = jdbc["catalog"].get_table("db.t")
    assert table.latest_snapshot_id() == 2 and table.list_tags() == ["after-load"]
    assert sorted(table.read().column("id").to_pylist()) == [1, 2, 3]
    with pytest.raises(AirflowFailException, match="TableNotExistError"):  # the worker's check asks the catalog
        PaimonCreateTagOperator(task_id="g2", table="db.unregistered", tag="x", spark=LOCAL).execute(ti_context(1))


@pytest.mark.airflow
@pytest.mark.timeout(600)
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Airflow's DAG run code and its dependencies (as tests/dags)
@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
def test_in_a_dag_run_an_operator_writes_through_the_jdbc_catalog(airflow_db: None, jdbc: dict[str, Any],
                                                                  tmp_path: pathlib.Path) -> None:
    from airflow.sdk import DAG
    from paimon_provider.operators import PaimonWriteOperator

    from tests.dags.test_s3_credentials import sync_to_db

    source = tmp_path / "batch.parquet"
    pq.write_table(pa.table({"id": [5], "v": ["e"]}, schema=SCHEMA), source)
    with DAG("paimon_jdbc_probe", schedule=None, start_date=datetime.datetime(2026, 1, 1), catchup=False) as dag:
        PaimonWriteOperator(task_id="load", table="db.t", source=str(source), spark=DRIVER)
    sync_to_db(dag, tmp_path / "no-dags")
    dr = dag.test()
    assert {str(ti.state) for ti in dr.get_task_instances()} == {"success"}
    assert sorted(jdbc["catalog"].get_table("db.t").read().column("id").to_pylist()) == [1, 5]


def test_a_sensor_and_its_trigger_see_the_jdbc_catalogs_table(jdbc: dict[str, Any]) -> None:
    from paimon_provider.sensors import PaimonSnapshotSensor
    from paimon_provider.triggers.metadata import PaimonSnapshotTrigger

    from tests.provider.sensors.test_sensors import run_trigger

    sensor = PaimonSnapshotSensor(task_id="s", table="db.t", after_snapshot_id="1")
    assert sensor.poke({}).is_done is False
    jdbc["catalog"].get_table("db.t").write(pa.table({"id": [9], "v": ["z"]}, schema=SCHEMA))
    result = sensor.poke({})
    assert result.is_done and result.xcom_value["snapshot_id"] == 2
    trigger = PaimonSnapshotTrigger(warehouse=jdbc["warehouse"], table="db.t", after_snapshot_id=1,
                                    poll_interval=0.1, paimon_conn_id="paimon_default")
    event = run_trigger(trigger)
    assert event["status"] == "success" and event["snapshot"]["snapshot_id"] == 2
    assert PaimonSnapshotSensor(task_id="s2", table="db.unregistered").poke({}).is_done is False


def _engine(module: str, cmd: CreateTag, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", module, "--command-json", cmd.to_json()], capture_output=True,
                          text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "provider")]),
                               **env})


@pytest.mark.parametrize("module", ["table_engine.cli", "table_engine.spark.app"])
def test_the_cli_and_the_spark_application_open_the_jdbc_catalog(jdbc: dict[str, Any], module: str) -> None:
    """The engine's CLI and the Spark application (a metadata command runs on its driver, no SparkContext): the
    catalog options of the command reach create_catalog; a table the catalog does not register is refused."""
    ok = _engine(module, CreateTag(warehouse=jdbc["warehouse"], table="db.t", tag=f"by-{module}",
                                   catalog_options=jdbc["options"]), {})
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout.strip().splitlines()[-1])["status"] == "ok"
    assert f"by-{module}" in jdbc["catalog"].get_table("db.t").list_tags()
    bad = _engine(module, CreateTag(warehouse=jdbc["warehouse"], table="db.unregistered", tag="x",
                                    catalog_options=jdbc["options"]), {})
    assert bad.returncode == 1 and "TableNotExistError" in bad.stdout.strip().splitlines()[-1]


def test_a_secret_reaches_the_engine_from_the_environment_and_is_never_shown(jdbc: dict[str, Any]) -> None:
    """``PAIMON_CATALOG_SECRETS`` (what the hook gives a job process) adds ``jdbc.password`` to the command's catalog
    options: a filesystem catalog refuses a metastore's option, and the refusal does not show the value."""
    from table_engine.ops.secrets import SECRETS_ENV

    secret = "pw-from-env-5e1d"
    run = _engine("table_engine.cli", CreateTag(warehouse=jdbc["warehouse"], table="db.t", tag="x"),
                  {SECRETS_ENV: json.dumps({"jdbc.password": secret})})
    assert run.returncode == 1 and "jdbc.password" in run.stdout + run.stderr
    assert secret not in run.stdout + run.stderr
    with pytest.raises(TableNotExistError):
        jdbc["catalog"].get_table("db.unregistered")
