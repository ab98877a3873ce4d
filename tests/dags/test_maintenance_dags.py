"""The maintenance DAGs run to success with ``dag.test()``, driven by their forms (``run_conf`` as the UI's trigger
form sends it), and do what they say to a table written by the engine. Only compaction is a Spark job: through
spark-submit (local mode) for the ODS append table; in the tour of every DAG as ``make demo`` runs it, with the engine
on the worker (``LAPTOP_SPARK_CONF``; the primary-key compaction runs through spark-submit from the forms of the live
Airflow, tests/dags/test_live_airflow.py and test_trigger_forms.py)."""

from __future__ import annotations

import os
import pathlib
import time
from typing import Any

import example_lake as sample
import pyarrow as pa
import pytest

from tests import airflow_env

pytestmark = [pytest.mark.spark, pytest.mark.airflow, pytest.mark.slow, pytest.mark.timeout(3600)]


def run(dagbag: Any, dag_id: str, conf: dict[str, Any]) -> dict[str, str]:
    dr = dagbag.dags[dag_id].test(run_conf=conf)
    states = {f"{ti.task_id}[{ti.map_index}]": str(ti.state) for ti in dr.get_task_instances()}
    assert str(dr.state) == "success", f"{dag_id}: {states}"
    return states


def future_rows() -> pa.Table:
    rows = [dict(r, dt="2099-01-01", event_id=f"f{i}") for i, r in enumerate(sample.order_event_rows(1)[:2])]
    return pa.Table.from_pylist(rows, schema=sample.order_events(1).schema)


def test_maintenance_end_to_end(dagbag: Any, airflow_db: None, lake: dict[str, str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    from table_engine import Catalog
    from table_engine.types import parse_type, to_arrow_type

    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_connection(
        lake["warehouse"], spark_conf=sample.LAPTOP_SPARK_CONF))
    catalog = Catalog(lake["warehouse"])
    d = sample.DWD
    schema = pa.schema([(n, to_arrow_type(parse_type(t))) for n, t in d.columns.items()])
    table = catalog.create_table(d.name, schema, primary_keys=d.primary_keys, partition_keys=d.partition_keys,
                                 options=d.options)
    for batch in sample.BATCHES:
        table.write(sample.order_events(batch))
    table.write(future_rows())
    rows_before = table.read().num_rows
    one = {"tables": [d.name]}

    # compaction: full, from the form
    run(dagbag, "paimon_compact", {**one, "mode": "full", "partitions": ""})
    compacted = table.latest_snapshot()
    assert compacted is not None and str(compacted.commit_kind) == "COMPACT" and compacted.id == 5
    assert table.read().num_rows == rows_before

    # a daily tag (a manual run: the name carries the time), then tag expiry
    states = run(dagbag, "paimon_daily_tag", {**one, "tag_prefix": "daily", "time_retained": "7 d"})
    assert states == {"selected_tables[-1]": "success", "create_tag[0]": "success",
                      "expire_tags[0]": "success"}
    tags = table.list_tags()
    assert len(tags) == 1 and tags[0].startswith("daily-") and "T" in tags[0]
    assert table.tag_snapshot(tags[0]).id == 5

    # snapshot expiry keeps retain_max snapshots
    run(dagbag, "paimon_expire_snapshots", {**one, "retain_min": 1, "retain_max": 2, "older_than": ""})
    assert [s.id for s in table.snapshots()] == [4, 5]

    # orphan files older than a day go, fresh ones stay
    bucket_dir = pathlib.Path(table.path) / "dt=2026-11-20" / "bucket-0"
    old_orphan, new_orphan = bucket_dir / "data-orphan-old.parquet", bucket_dir / "data-orphan-new.parquet"
    for f in (old_orphan, new_orphan):
        f.write_bytes(b"not referenced")
    two_days_ago = time.time() - 2 * 86400
    os.utime(old_orphan, (two_days_ago, two_days_ago))
    run(dagbag, "paimon_remove_orphan_files", {**one, "older_than": "1 d ago", "dry_run": False})
    assert not old_orphan.exists() and new_orphan.exists()
    assert table.read().num_rows == rows_before

    # partitions older than a day are dropped (dry run first: nothing changes)
    form = {**one, "expiration_time": "1 d", "timestamp_formatter": "yyyy-MM-dd", "timestamp_pattern": "$dt"}
    run(dagbag, "paimon_expire_partitions", {**form, "dry_run": True})
    assert table.read().num_rows == rows_before
    run(dagbag, "paimon_expire_partitions", {**form, "dry_run": False})
    assert set(table.read().column("dt").to_pylist()) == {"2099-01-01"}

    # and the daily tag brings everything back
    run(dagbag, "paimon_rollback", {"table": d.name, "version": tags[0]})
    assert table.read().num_rows == rows_before and table.latest_snapshot_id() == 5


def test_compaction_dag_compacts_the_ods_append_table(dagbag: Any, airflow_db: None, lake: dict[str, str]) -> None:
    """``paimon_compact`` on the ODS append table (unaware bucket): its small files, one per batch, are rewritten by
    the dedicated append compaction (Spark application), rows unchanged."""
    from table_engine import Catalog
    from table_engine.types import parse_type, to_arrow_type

    o = sample.ODS
    schema = pa.schema([(n, to_arrow_type(parse_type(t))) for n, t in o.columns.items()])
    table = Catalog(lake["warehouse"]).create_table(
        o.name, schema, partition_keys=o.partition_keys, options={**o.options, "write-only": "true"})
    for batch in sample.BATCHES:  # write-only: every batch leaves its own small files
        table.write(sample.order_events(batch))
    catalog = Catalog(lake["warehouse"])
    files_before = catalog.get_table(f"{o.name}$files").read().num_rows
    rows_before = table.read().sort_by("event_id")
    run(dagbag, "paimon_compact", {"tables": [o.name], "mode": "full", "partitions": ""})
    compacted = table.latest_snapshot()
    assert compacted is not None and str(compacted.commit_kind) == "COMPACT"
    assert table.read().sort_by("event_id").equals(rows_before)
    files_after = catalog.get_table(f"{o.name}$files").read().num_rows
    assert files_after < files_before, (files_before, files_after)
    # the form's sort: each partition's rows ordered by a z-order of two columns, the same rows
    run(dagbag, "paimon_compact", {"tables": [o.name], "mode": "minor", "partitions": "",
                                   "order_strategy": "zorder", "order_by": "user_id,event_time_ms"})
    table = Catalog(lake["warehouse"]).get_table(o.name)
    assert str(table.latest_snapshot().commit_kind) == "COMPACT"  # type: ignore[union-attr]
    assert table.latest_snapshot().id == compacted.id + 1  # type: ignore[union-attr]
    assert table.read().sort_by("event_id").equals(rows_before)


def test_compaction_dag_publishes_a_postpone_bucket_table(dagbag: Any, airflow_db: None, lake: dict[str, str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """On a postpone bucket table (``bucket`` = -2) the rows stay invisible until ``paimon_compact`` runs: its
    compaction assigns them to buckets and commits them (one DAG run, the engine on the worker)."""
    from table_engine import Catalog

    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_connection(
        lake["warehouse"], spark_conf=sample.LAPTOP_SPARK_CONF))
    schema = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.string())])
    table = Catalog(lake["warehouse"]).create_table("dwd.postponed", schema, primary_keys=["dt", "id"],
                                                    partition_keys=["dt"], options={"bucket": "-2"})
    table.write(pa.table({"dt": ["a", "a", "b"], "id": [1, 2, 3], "v": ["x", "y", "z"]}, schema=schema))
    table.write(pa.table({"dt": ["a"], "id": [1], "v": ["x2"]}, schema=schema))
    assert table.read().num_rows == 0
    run(dagbag, "paimon_compact", {"tables": ["dwd.postponed"], "mode": "minor", "partitions": ""})
    compacted = table.latest_snapshot()
    assert compacted is not None and str(compacted.commit_kind) == "COMPACT"
    assert sorted(table.read().to_pylist(), key=lambda r: r["id"]) == [
        {"dt": "a", "id": 1, "v": "x2"}, {"dt": "a", "id": 2, "v": "y"}, {"dt": "b", "id": 3, "v": "z"}]
