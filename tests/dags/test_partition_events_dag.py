"""Airflow's side of partition-keyed events, in a real ``dag.test()`` run: a write with ``partition_events=True``
records one Asset event per changed partition, and Airflow queues a run of the per-partition layer for each key
(``AssetPartitionDagRun``) and none of a DAG on the plain Asset; without it, one unkeyed event that queues the plain
DAG only (why keyed events are opt-in: docs/partitions.md, ADR 0030)."""

from __future__ import annotations

import datetime
import pathlib
from typing import Any

import example_lake as sample
import pyarrow.parquet as pq
import pytest

from tests.dags.test_example_lake import lake_dags
from tests.dags.test_lake_dags import queued_by_assets
from tests.dags.test_s3_credentials import sync_to_db

pytestmark = [pytest.mark.airflow, pytest.mark.timeout(900)]
DRIVER = {"conf": {"spark.paimon.driver-job.max-input-size": "64m"}}


def keyed_events(dag_id: str) -> list[str | None]:
    from airflow.models.asset import AssetEvent
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        return list(session.scalars(select(AssetEvent.partition_key).where(AssetEvent.source_dag_id == dag_id)
                                    .order_by(AssetEvent.id)))


def partition_runs() -> set[tuple[str, str]]:
    from airflow.models.asset import AssetPartitionDagRun
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        rows = session.execute(select(AssetPartitionDagRun.target_dag_id, AssetPartitionDagRun.partition_key)).all()
    return {(d, k) for d, k in rows}


def test_keyed_events_queue_the_per_partition_layer_only(airflow_db: None, lake: dict[str, str],
                                                         tmp_path: pathlib.Path) -> None:
    from airflow.sdk import DAG
    from paimon_provider.operators import PaimonWriteOperator
    from paimon_provider.utils.assets import table_asset

    from table_engine import Catalog

    sample.ensure_tables(lake["warehouse"], (sample.ODS,))
    source = tmp_path / "batch.parquet"
    rows = sample.order_events(2)
    pq.write_table(rows, source)
    days = sorted(set(rows.column("dt").to_pylist()))
    dags = lake_dags()
    per_partition = dags.build_dwd_dag("pe_dwd_per_partition", per_partition=True)
    start = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
    with DAG("pe_plain", schedule=[table_asset(sample.ODS.name, "paimon_default")], start_date=start) as plain:
        pass
    producers: dict[bool, Any] = {}
    for keyed in (True, False):
        with DAG(f"pe_producer_{keyed}", schedule=None, start_date=start) as producer:
            PaimonWriteOperator(task_id="append", table=sample.ODS.name, source=str(source), spark=DRIVER,
                                paimon_conn_id="paimon_default", partition_events=keyed)
        producers[keyed] = producer
    for dag in (per_partition, plain, *producers.values()):
        sync_to_db(dag, tmp_path / "no-dags")

    assert str(producers[True].test().state) == "success"
    assert sorted(keyed_events("pe_producer_True")) == [f"dt={d}" for d in days]
    assert partition_runs() == {("pe_dwd_per_partition", f"dt={d}") for d in days}
    assert ("pe_plain", table_asset(sample.ODS.name, "paimon_default").uri) not in queued_by_assets()

    assert str(producers[False].test().state) == "success"
    assert keyed_events("pe_producer_False") == [None]
    assert ("pe_plain", table_asset(sample.ODS.name, "paimon_default").uri) in queued_by_assets()
    assert partition_runs() == {("pe_dwd_per_partition", f"dt={d}") for d in days}  # no new partition runs
    assert Catalog(lake["warehouse"]).get_table(sample.ODS.name).latest_snapshot_id() == 2


@pytest.fixture(autouse=True)
def _leave_no_queued_runs() -> Any:
    """The session's metadata DB is shared by the DAG tests: take this test's queued runs out again."""
    yield
    from airflow.models.asset import AssetDagRunQueue, AssetPartitionDagRun
    from airflow.utils.session import create_session
    from sqlalchemy import delete

    with create_session() as session:
        session.execute(delete(AssetDagRunQueue).where(AssetDagRunQueue.target_dag_id.like("pe_%")))
        session.execute(delete(AssetPartitionDagRun).where(AssetPartitionDagRun.target_dag_id.like("pe_%")))
