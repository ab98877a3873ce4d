"""The streaming-lake DAGs run to success with ``dag.test()`` and the tables hold what the reference model says: two
batches flow ODS -> DWD -> DWS -> ADS. The first batch's jobs run as ``make demo`` runs them, with the engine on the
worker (``LAPTOP_SPARK_CONF``: small jobs on the driver, see tests/spark/test_driver_jobs.py for their equality with
the Spark jobs); the second batch's, whose updates must be retracted downstream, as Spark jobs (spark-submit, local
mode) on the tables the first left: every layer DAG runs end to end through spark-submit once.

DWS is fed by the DWD changelog, which the dedicated compaction produces (``changelog-producer = lookup``): batch 2
changes and re-sends orders of batch 1, so DWS is right only if the changelog retracts what the updates replace.
Along the way: each write's result line becomes its Asset event's extra, and that event queues the layer scheduled
on the table (the scheduler's side of it is in test_live_airflow.py).
"""

from __future__ import annotations

from typing import Any

import example_lake as sample
import pytest

from tests import airflow_env

pytestmark = [pytest.mark.spark, pytest.mark.airflow, pytest.mark.slow, pytest.mark.timeout(3600)]
ODS_URI = "paimon://paimon_default/ods/order_events"


def run(dagbag: Any, dag_id: str, conf: dict[str, Any] | None = None) -> dict[str, str]:
    dr = dagbag.dags[dag_id].test(run_conf=conf)
    states = {ti.task_id: str(ti.state) for ti in dr.get_task_instances()}
    assert str(dr.state) == "success", f"{dag_id}: {states}"
    return states


def asset_events(dag_id: str) -> list[tuple[str, dict[str, Any]]]:
    """(asset URI, extra) of the Asset events the runs of ``dag_id`` emitted, oldest first."""
    from airflow.models.asset import AssetEvent, AssetModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        rows = session.execute(select(AssetModel.uri, AssetEvent.extra).join(AssetModel, AssetModel.id ==
                                                                            AssetEvent.asset_id)
                               .where(AssetEvent.source_dag_id == dag_id).order_by(AssetEvent.id)).all()
    return [(uri, dict(extra)) for uri, extra in rows]


def queued_by_assets() -> set[tuple[str, str]]:
    """(DAG id, asset URI) of the runs Asset events have queued for the scheduler (``asset_dag_run_queue``)."""
    from airflow.models.asset import AssetDagRunQueue, AssetModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        rows = session.execute(select(AssetDagRunQueue.target_dag_id, AssetModel.uri)
                               .join(AssetModel, AssetModel.id == AssetDagRunQueue.asset_id)).all()
    return {(dag_id, uri) for dag_id, uri in rows}


def latest_orders(batches: tuple[int, ...]) -> dict[tuple[int, str], tuple[str, float]]:
    latest: dict[tuple[int, str], dict[str, Any]] = {}
    for b in batches:
        for row in sample.order_event_rows(b):
            key = (row["order_id"], row["dt"])
            if key not in latest or row["event_time_ms"] >= latest[key]["event_time_ms"]:
                latest[key] = row
    return {k: (r["status"], r["amount"]) for k, r in latest.items()}


def test_layers_end_to_end(dagbag: Any, airflow_db: None, lake: dict[str, str],
                           monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]) -> None:
    from table_engine import Catalog

    catalog = Catalog(lake["warehouse"])
    events = 0
    for batch, spark_conf in ((1, sample.LAPTOP_SPARK_CONF), (2, sample.SMALL_LOCAL_SPARK_CONF)):
        monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_connection(
            lake["warehouse"], spark_conf=spark_conf))
        run(dagbag, "paimon_lake_ods", {"batch": batch, "landing_dir": lake["landing"]})
        events += len(sample.order_event_rows(batch))
        ods = catalog.get_table("ods.order_events")
        assert ods.read().num_rows == events  # raw: duplicates kept
        # the write's result line reached the Asset event, which queued the DWD layer for the scheduler
        uri, extra = asset_events("paimon_lake_ods")[-1]
        assert (uri, extra["table"], extra["command"], extra["snapshot_id"], extra["added_rows"]) == (
            ODS_URI, "ods.order_events", "write", ods.latest_snapshot_id(), len(sample.order_event_rows(batch)))
        assert ("paimon_lake_dwd", ODS_URI) in queued_by_assets()

        assert run(dagbag, "paimon_lake_dwd") == {"create_dwd_orders": "success", "apply_ods_changes": "success",
                                                   "compact_dwd_orders": "success"}
        dwd = catalog.get_table("dwd.orders")
        got = {(r["order_id"], r["dt"]): (r["status"], r["amount"]) for r in dwd.read().to_pylist()}
        assert got == latest_orders(tuple(range(1, batch + 1)))  # deduplicated, late event ignored
        next_ods = ods.latest_snapshot_id() + 1  # type: ignore[operator]
        assert ods.consumers() == {sample.DWD_CONSUMER: next_ods}  # the DWD consumer read everything
        assert set(dwd.consumers()) <= {sample.DWS_CONSUMER}
        compaction = dwd.latest_snapshot()
        assert compaction is not None and str(compaction.commit_kind) == "COMPACT"
        assert compaction.changelog_record_count  # changelog-producer=lookup: the compaction wrote the changelog

        states = run(dagbag, "paimon_lake_dws")
        assert states["aggregate_dwd_changelog"] == "success"
        dws = catalog.get_table("dws.user_daily")
        totals = {(r["user_id"], r["dt"]): (r["quantity"], round(r["amount"], 2)) for r in dws.read().to_pylist()}
        assert totals == sample.expected_user_daily(tuple(range(1, batch + 1)))
        # its data event names the data commit (APPEND), not the lookup compaction its writer committed after it
        uri, extra = asset_events("paimon_lake_dws")[-1]
        assert (extra["commit_kind"], extra.get("compacted")) == ("APPEND", True), extra
        assert extra["changelog_records"] > 0 and extra["added_rows"] > 0, extra

        run(dagbag, "paimon_lake_ads")
        # the batch took the route asked: its 4 jobs (ODS write, DWD apply and compaction, DWS aggregation) on the
        # worker, or as spark-submits (the task logs)
        log = capfd.readouterr().out
        jobs = (log.count(": a small job ("), log.count("spark-submit: spark-submit "))
        assert jobs == ((4, 0) if batch == 1 else (0, 4)), jobs
        tags = dws.list_tags()
        assert len(tags) == batch and all(t.startswith("ads-") for t in tags)
        tagged = dws.read(tag=tags[-1]).num_rows
        assert tagged == len(totals)

    report = sample.report(lake["warehouse"])
    assert "ADS: dws.user_daily at tag ads-" in report
