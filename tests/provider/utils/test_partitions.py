"""Partitions as Airflow partition keys (paimon_provider.utils.partitions): with ``partition_events`` a write's Asset
event names the partitions it changed (one event per partition, as Airflow records them), as the ``k=v,...`` text every
``partitions`` argument parses; by default one event without keys (what a DAG on the plain Asset needs); no keys
through an alias, for an unpartitioned table, on a Task SDK without ``add_partitions`` or
for a key too long for Airflow (one event, as before); a run's partition key read from the context."""

from __future__ import annotations

import pathlib
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from airflow.sdk.execution_time.context import OutletEventAccessors
from airflow.sdk.execution_time.task_runner import _serialize_outlet_events
from paimon_provider.operators import PaimonWriteOperator
from paimon_provider.utils.arguments import partition_texts
from paimon_provider.utils.assets import table_asset, writes_alias
from paimon_provider.utils.partitions import add_partition_keys, partitioned_schedule, run_partition_key

from table_engine import Catalog
from tests.provider.operators.test_retries import DRIVER, ti_context

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("h", pa.int32())])


def source(tmp_path: pathlib.Path, dts: list[str]) -> str:
    path = tmp_path / "src.parquet"
    pq.write_table(pa.table({"id": list(range(len(dts))), "dt": dts, "h": pa.array([5] * len(dts), pa.int32())},
                            schema=SCHEMA), path)
    return str(path)


def test_a_write_emits_one_event_per_changed_partition(paimon_conn: str, tmp_path: pathlib.Path) -> None:
    Catalog(paimon_conn).create_table("db.t", SCHEMA, partition_keys=["dt", "h"], options={"bucket": "-1"})
    src = source(tmp_path, ["2026-11-27", "2026-11-28", "2026-11-27"])
    context = ti_context(1, task_id="d")
    PaimonWriteOperator(task_id="d", table="db.t", source=src, spark=DRIVER).execute(context)
    assert [e.get("partition_key") for e in _serialize_outlet_events(context["outlet_events"])] == [None]
    op = PaimonWriteOperator(task_id="w", table="db.t", source=src, spark=DRIVER, partition_events=True)
    context = ti_context(1, task_id="w")
    op.execute(context)
    accessor = context["outlet_events"][table_asset("db.t")]
    assert accessor.partition_keys == {"dt=2026-11-27,h=5", "dt=2026-11-28,h=5"}
    events = list(_serialize_outlet_events(context["outlet_events"]))  # what the task reports to Airflow
    assert sorted(e["partition_key"] for e in events) == ["dt=2026-11-27,h=5", "dt=2026-11-28,h=5"]
    assert all(e["extra"]["snapshot_id"] == 2 for e in events)
    # a key is what a partitions argument parses: a per-partition run passes it on unchanged
    assert partition_texts("dt=2026-11-28,h=5") == [{"dt": "2026-11-28", "h": "5"}]


def test_no_keys_for_an_unpartitioned_table_or_through_the_alias(paimon_conn: str, tmp_path: pathlib.Path) -> None:
    Catalog(paimon_conn).create_table("db.u", pa.schema([("id", pa.int64())]))
    path = tmp_path / "u.parquet"
    pq.write_table(pa.table({"id": [1]}), path)
    context = ti_context(1, task_id="u")
    PaimonWriteOperator(task_id="u", table="db.u", source=str(path), spark=DRIVER,
                        partition_events=True).execute(context)
    assert [e.get("partition_key") for e in _serialize_outlet_events(context["outlet_events"])] == [None]
    Catalog(paimon_conn).create_table("db.t", SCHEMA, partition_keys=["dt", "h"], options={"bucket": "-1"})
    mapped = PaimonWriteOperator(task_id="m", table="{{ 'db.t' }}", source=source(tmp_path, ["a"]), spark=DRIVER,
                                 outlets=[writes_alias()], partition_events=True)
    mapped.render_template_fields({})
    context = ti_context(1, task_id="m", map_index=0)
    mapped.execute(context)
    assert len(context["outlet_events"][writes_alias()].asset_alias_events) == 1  # an alias event has no key


def test_older_task_sdk_and_long_keys_give_one_event() -> None:
    old = SimpleNamespace(extra={})  # an outlet event accessor without add_partitions (Task SDK of Airflow 3.2)
    assert add_partition_keys(old, ["dt=a"]) == []
    accessor = OutletEventAccessors()[table_asset("db.t")]
    assert add_partition_keys(accessor, ["dt=" + "x" * 300, "dt=a"]) == [] and accessor.partition_keys == set()
    assert add_partition_keys(accessor, []) == []
    assert add_partition_keys(accessor, ["dt=a", "dt=a", "dt=b"]) == ["dt=a", "dt=b"]


def test_run_partition_key_and_the_schedule() -> None:
    assert run_partition_key({"dag_run": SimpleNamespace(partition_key="dt=a")}) == "dt=a"
    assert run_partition_key({"dag_run": SimpleNamespace(partition_key=None)}) is None
    assert run_partition_key({"dag_run": SimpleNamespace()}) is None and run_partition_key({}) is None
    from airflow.sdk import PartitionedAssetTimetable

    schedule: Any = partitioned_schedule(table_asset("dwd.orders"))
    assert isinstance(schedule, PartitionedAssetTimetable) and schedule.asset_condition == table_asset("dwd.orders")
