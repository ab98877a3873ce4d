"""Asset events mean data (ADR 0021): on the demo lake, ``paimon_compact`` (minor and full), snapshot expiry and a
rollback to the latest snapshot start no layer DAG, while the DWD layer's compaction, which produces the lookup
changelog, does start DWS; the ADS layer's serving tag is named per run, to the millisecond. The engine runs on the
worker (``LAPTOP_SPARK_CONF``), as ``make demo`` runs it; ``dag.test()`` runs, Asset events and the queue of runs
they start (``asset_dag_run_queue``) read from the metadata database as tests/dags/test_lake_dags.py does."""

from __future__ import annotations

import pathlib
import re
from typing import Any

import example_lake as sample
import pytest

from tests import airflow_env
from tests.dags.test_lake_dags import asset_events, queued_by_assets, run

pytestmark = [pytest.mark.airflow, pytest.mark.slow, pytest.mark.timeout(1800)]
DWD_URI = "paimon://paimon_default/dwd/orders"
UPKEEP_DAGS = ("paimon_compact", "paimon_expire_snapshots", "paimon_rollback")


def clear_run_queue() -> None:
    from airflow.models.asset import AssetDagRunQueue
    from airflow.utils.session import create_session
    from sqlalchemy import delete

    with create_session() as session:
        session.execute(delete(AssetDagRunQueue))


def test_upkeep_starts_no_layer_and_changelog_does(dagbag: Any, airflow_db: None, lake: dict[str, str],
                                                   monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    from table_engine import Catalog
    from tests.dags.test_s3_credentials import sync_to_db

    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_connection(
        lake["warehouse"], spark_conf=sample.LAPTOP_SPARK_CONF))
    catalog = Catalog(lake["warehouse"])
    clear_run_queue()
    run(dagbag, "paimon_lake_ods", {"batch": 1, "landing_dir": lake["landing"]})
    uri, extra = asset_events("paimon_lake_ods")[-1]
    assert uri == "paimon://paimon_default/ods/order_events"
    assert (extra["commit_kind"], extra["added_rows"], extra["deleted_rows"], extra["changelog_records"]) == (
        "APPEND", len(sample.order_event_rows(1)), 0, 0)
    assert extra["partitions"] and all(p.startswith("dt=") for p in extra["partitions"])

    # the DWD compaction produces the changelog: data, so it starts DWS
    run(dagbag, "paimon_lake_dwd")
    uri, extra = asset_events("paimon_lake_dwd")[-1]
    assert uri == DWD_URI and extra["command"] == "compact" and extra["commit_kind"] == "COMPACT"
    assert extra["changelog_records"] > 0
    assert ("paimon_lake_dws", DWD_URI) in queued_by_assets()
    run(dagbag, "paimon_lake_dws")
    run(dagbag, "paimon_lake_ads")
    tags = catalog.get_table(sample.DWS.name).list_tags()
    assert len(tags) == 1 and re.fullmatch(r"ads-\d{8}T\d{6}\.\d{3}", tags[0]), tags

    # upkeep: more ODS files written past Airflow (no event), then compactions, expiry, a rollback to the latest
    ods = catalog.get_table(sample.ODS.name)
    for batch in (2, 3):
        ods.write(sample.order_events(batch))
    clear_run_queue()
    before = {dag_id: len(asset_events(dag_id)) for dag_id in UPKEEP_DAGS}
    tables = [sample.ODS.name, sample.DWD.name, sample.DWS.name]
    run(dagbag, "paimon_compact", {"tables": tables, "mode": "minor", "partitions": ""})
    ods_before_full = ods.latest_snapshot_id()
    run(dagbag, "paimon_compact", {"tables": tables, "mode": "full", "partitions": ""})
    compacted = ods.latest_snapshot()
    assert compacted is not None and compacted.id != ods_before_full and str(compacted.commit_kind) == "COMPACT"
    run(dagbag, "paimon_expire_snapshots", {"tables": [sample.ODS.name], "retain_min": 1, "retain_max": 1,
                                            "older_than": ""})
    # snapshot 1 expires; the DWD consumer, which has read it, protects the newer ones
    assert [s.id for s in ods.snapshots()] == [2, 3, compacted.id]
    dwd = catalog.get_table(sample.DWD.name)
    run(dagbag, "paimon_rollback", {"table": sample.DWD.name, "version": str(dwd.latest_snapshot_id())})
    assert {dag_id: len(asset_events(dag_id)) for dag_id in UPKEEP_DAGS} == before
    assert queued_by_assets() == set()

    # a static outlet (the table known at parse time): the upkeep commit takes it off, Airflow emits nothing
    import datetime

    from airflow.sdk import DAG
    from paimon_provider.operators import PaimonCompactOperator

    ods.write(sample.order_events(1))
    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    with DAG("upkeep_static_outlet", schedule=None, start_date=start) as dag:
        PaimonCompactOperator(task_id="compact_ods", table=sample.ODS.name, full=True)
    sync_to_db(dag, tmp_path / "no-dags")
    before_full = ods.latest_snapshot_id()
    dr = dag.test()
    assert str(dr.state) == "success"
    assert ods.latest_snapshot_id() != before_full and str(ods.latest_snapshot().commit_kind) == "COMPACT"
    assert asset_events("upkeep_static_outlet") == [] and queued_by_assets() == set()
