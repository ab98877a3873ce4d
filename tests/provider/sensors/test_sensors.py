"""Sensors poke table metadata; deferred, their triggers poll for real until a snapshot lands."""

from __future__ import annotations

import asyncio
import pathlib
import threading
import time
from typing import Any

import pyarrow as pa
import pytest
from paimon_provider.sensors import PaimonPartitionSensor, PaimonSnapshotSensor
from paimon_provider.triggers.metadata import PaimonPartitionTrigger, PaimonSnapshotTrigger

from table_engine import Catalog
from tests import airflow_env
from tests.s3_server import ACCESS_KEY, SECRET_KEY, S3Server

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string())])


def batch(ids: list[int], dt: str) -> pa.Table:
    return pa.table({"id": ids, "dt": [dt] * len(ids)}, schema=SCHEMA)


@pytest.fixture
def catalog(paimon_conn: str) -> Catalog:
    cat = Catalog(paimon_conn)
    cat.create_table("db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"], options={"bucket": "1"})
    return cat


def run_trigger(trigger: Any, timeout: float = 60) -> dict[str, Any]:
    """Run a trigger's async generator to its first event, as the triggerer does."""
    async def first() -> dict[str, Any]:
        async for event in trigger.run():
            return dict(event.payload)
        raise AssertionError("trigger ended without an event")

    return asyncio.run(asyncio.wait_for(first(), timeout))


def test_snapshot_sensor_pokes(catalog: Catalog) -> None:
    sensor = PaimonSnapshotSensor(task_id="s", table="db.t", after_snapshot_id="{{ x }}", commit_kind="append")
    sensor.after_snapshot_id = ""  # as rendered from an empty template
    assert sensor.poke({}).is_done is False
    catalog.get_table("db.t").write(batch([1], "a"))
    result = sensor.poke({})
    assert result.is_done and result.xcom_value["snapshot_id"] == 1  # type: ignore[index]
    sensor.after_snapshot_id = "1"
    assert sensor.poke({}).is_done is False
    with pytest.raises(ValueError, match="unknown commit kinds"):
        PaimonSnapshotSensor(task_id="s2", table="db.t", commit_kind="MERGE").criteria()


def test_snapshot_sensor_defers_and_its_trigger_fires_when_a_snapshot_lands(catalog: Catalog) -> None:
    from airflow.sdk.exceptions import TaskDeferred

    table = catalog.get_table("db.t")
    table.write(batch([1], "2026-11-20"))
    sensor = PaimonSnapshotSensor(task_id="s", table="db.t", after_snapshot_id=1, partition="dt=2026-11-21",
                                  deferrable=True, poke_interval=0.2, timeout=120)
    with pytest.raises(TaskDeferred) as deferred:
        sensor.execute({})
    trigger = deferred.value.trigger
    assert isinstance(trigger, PaimonSnapshotTrigger) and deferred.value.method_name == "execute_complete"
    classpath, kwargs = trigger.serialize()
    assert classpath == "paimon_provider.triggers.metadata.PaimonSnapshotTrigger"
    assert kwargs["warehouse"] == catalog.warehouse and kwargs["partition"] == {"dt": "2026-11-21"}
    revived = PaimonSnapshotTrigger(**kwargs)  # what the triggerer does with the serialized form

    def writer() -> None:
        time.sleep(1.0)
        table.write(batch([2], "2026-11-20"))  # snapshot 2: another partition, does not count
        time.sleep(0.5)
        table.write(batch([3], "2026-11-21"))  # snapshot 3

    thread = threading.Thread(target=writer)
    started = time.monotonic()
    thread.start()
    event = run_trigger(revived)
    thread.join()
    assert time.monotonic() - started >= 1.4
    assert event["status"] == "success" and event["snapshot"]["snapshot_id"] == 3
    assert sensor.execute_complete({}, event)["snapshot_id"] == 3


def test_deferrable_sensor_returns_at_once_when_already_satisfied(catalog: Catalog) -> None:
    catalog.get_table("db.t").write(batch([1], "a"))
    sensor = PaimonSnapshotSensor(task_id="s", table="db.t", deferrable=True)
    assert sensor.execute({})["snapshot_id"] == 1


def test_snapshot_trigger_reports_repeated_errors(tmp_path: pathlib.Path) -> None:
    Catalog(str(tmp_path / "wh")).create_table("db.t", SCHEMA)  # a table (schema-0) whose snapshot is corrupt
    bad = tmp_path / "wh" / "db.db" / "t" / "snapshot"
    bad.mkdir(parents=True)
    (bad / "snapshot-1").write_text("{garbled")
    (bad / "LATEST").write_text("1")
    event = run_trigger(PaimonSnapshotTrigger(warehouse=str(tmp_path / "wh"), table="db.t", poll_interval=0.01))
    assert event["status"] == "error" and "snapshot" in event["message"]
    from airflow.sdk.exceptions import AirflowException

    with pytest.raises(AirflowException, match="failed"):
        PaimonSnapshotSensor(task_id="s", table="db.t").execute_complete({}, event)


def test_partition_sensor_data_and_done(catalog: Catalog, paimon_conn: str) -> None:
    data = PaimonPartitionSensor(task_id="p", table="db.t", partition={"dt": "2026-11-20"})
    done = PaimonPartitionSensor(task_id="d", table="db.t", partition="dt=2026-11-20", require="done")
    assert not data.poke({}).is_done and not done.poke({}).is_done
    catalog.get_table("db.t").write(batch([1, 2], "2026-11-20"))
    result = data.poke({})
    assert result.is_done and result.xcom_value["row_count"] == 2  # type: ignore[index]
    assert not done.poke({}).is_done
    pathlib.Path(f"{paimon_conn}/db.db/t/dt=2026-11-20/_SUCCESS").write_text("{}")
    assert done.poke({}).is_done
    with pytest.raises(ValueError, match="require must be one of"):
        PaimonPartitionSensor(task_id="x", table="db.t", partition="dt=a", require="ready").poke({})


def test_partition_sensor_defers_until_the_partition_is_written(catalog: Catalog) -> None:
    from airflow.sdk.exceptions import TaskDeferred

    sensor = PaimonPartitionSensor(task_id="p", table="db.t", partition="dt=2026-11-22", deferrable=True,
                                   poke_interval=0.2)
    with pytest.raises(TaskDeferred) as deferred:
        sensor.execute({})
    classpath, kwargs = deferred.value.trigger.serialize()
    assert classpath == "paimon_provider.triggers.metadata.PaimonPartitionTrigger"
    timer = threading.Timer(0.8, lambda: catalog.get_table("db.t").write(batch([9], "2026-11-22")))
    timer.start()
    event = run_trigger(PaimonPartitionTrigger(**kwargs))
    timer.join()
    assert event["status"] == "success" and event["partition"]["file_count"] == 1
    assert sensor.execute_complete({}, event)["row_count"] == 1


@pytest.fixture
def s3_conn(monkeypatch: pytest.MonkeyPatch, s3_server: S3Server, s3_warehouse: str) -> str:
    """``paimon_default`` -> an S3 warehouse, credentials only in the connection (none in the environment)."""
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_s3_connection(s3_warehouse,
                                                                                       s3_server.endpoint))
    airflow_env.without_aws_environment(monkeypatch)
    return s3_warehouse


def test_sensors_and_triggers_read_an_s3_warehouse_with_the_connections_credentials(
        s3_conn: str, s3_options: dict[str, str]) -> None:
    from airflow.sdk.exceptions import TaskDeferred

    table = Catalog(s3_conn, s3_options).create_table("db.t", SCHEMA, primary_keys=["id", "dt"],
                                                      partition_keys=["dt"], options={"bucket": "1"})
    sensor = PaimonSnapshotSensor(task_id="s", table="db.t", deferrable=True, poke_interval=0.05, timeout=120)
    assert sensor.poke({}).is_done is False
    with pytest.raises(TaskDeferred) as deferred:
        sensor.execute({})
    classpath, kwargs = deferred.value.trigger.serialize()
    # trigger kwargs are stored in the metadata DB: the connection id, never the credentials
    assert SECRET_KEY not in repr(kwargs) and ACCESS_KEY not in repr(kwargs)
    assert kwargs["paimon_conn_id"] == "paimon_default" and kwargs["warehouse"] == s3_conn
    table.write(batch([1], "2026-11-20"))  # lands after the deferral: the trigger finds it on its first poll
    event = run_trigger(PaimonSnapshotTrigger(**kwargs))
    assert event["status"] == "success" and event["snapshot"]["snapshot_id"] == 1
    data = PaimonPartitionSensor(task_id="p", table="db.t", partition="dt=2026-11-20", deferrable=True)
    assert data.execute({})["row_count"] == 1  # satisfied at once: no deferral
    later = PaimonPartitionSensor(task_id="q", table="db.t", partition="dt=2026-11-21", deferrable=True,
                                  poke_interval=0.05)
    with pytest.raises(TaskDeferred) as deferred:
        later.execute({})
    _, kwargs = deferred.value.trigger.serialize()
    assert SECRET_KEY not in repr(kwargs)
    table.write(batch([2], "2026-11-21"))
    event = run_trigger(PaimonPartitionTrigger(**kwargs))
    assert event["status"] == "success" and event["partition"]["row_count"] == 1
