"""Retries converge in a real ``dag.test()`` run (docs/retries.md): ``tag`` (create-tag, the engine's CLI on the
worker) and ``consume`` (consume-changelog into files, spark-submit) each fail on their first try *after* their job
committed, as when a worker is lost then; between the tries another writer commits, so "latest" moves on and a new
batch of changes is waiting. Airflow retries both; the second tries succeed without doing the work twice: the tag
stays on the snapshot try 1 tagged, and ``check`` downstream receives try 1's batch (9 rows), not the new one.
"""

from __future__ import annotations

import datetime
import json
import pathlib
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from example_lake import SMALL_LOCAL_SPARK_CONF
from paimon_provider.operators import PaimonConsumeChangelogOperator, PaimonCreateTagOperator

from tests import airflow_env

pytestmark = [pytest.mark.spark, pytest.mark.airflow, pytest.mark.slow, pytest.mark.timeout(900)]

DAG_ID = "paimon_retries_converge"
TABLE = "db.events"


def another_writer_commits(warehouse: str) -> None:
    """What happens while Airflow has not noticed the lost worker yet: the table moves on."""
    from table_engine import Catalog

    Catalog(warehouse).get_table(TABLE).write(pa.table({"id": [100], "v": ["late"]}))


class LostAfterCommitMixin:
    """The first try fails after the operator's job committed (a worker lost at that moment)."""

    warehouse_path: str

    def execute(self, context: Any) -> Any:
        result = super().execute(context)  # type: ignore[misc]
        if context["ti"].try_number == 1:
            another_writer_commits(self.warehouse_path)
            raise RuntimeError(f"worker lost after {self.task_id} committed {result}")  # type: ignore[attr-defined]
        return result


class TagLostAfterCommit(LostAfterCommitMixin, PaimonCreateTagOperator):
    def __init__(self, *, warehouse_path: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.warehouse_path = warehouse_path


class ConsumeLostAfterCommit(LostAfterCommitMixin, PaimonConsumeChangelogOperator):
    def __init__(self, *, warehouse_path: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.warehouse_path = warehouse_path


def build_dag(warehouse: str, output: str) -> Any:
    from airflow.sdk import DAG, task

    retry = {"retries": 1, "retry_delay": datetime.timedelta(seconds=0)}
    with DAG(DAG_ID, schedule=None, start_date=datetime.datetime(2026, 1, 1), catchup=False) as dag:
        tag = TagLostAfterCommit(task_id="tag", table=TABLE, tag="daily", warehouse_path=warehouse, **retry)
        consume = ConsumeLostAfterCommit(task_id="consume", table=TABLE, consumer_id="c1", output_path=output,
                                         warehouse_path=warehouse, spark={"conf": SMALL_LOCAL_SPARK_CONF}, **retry)

        @task
        def check(batch: dict[str, Any]) -> int:
            return int(pq.read_table(batch["output"]).num_rows)

        tag >> consume
        check(consume.output)
    return dag


def test_a_task_lost_after_its_job_committed_is_retried_and_converges(
        airflow_db: None, monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    from table_engine import Catalog
    from tests.dags.test_s3_credentials import sync_to_db

    warehouse, output = str(tmp_path / "warehouse"), str(tmp_path / "out")
    monkeypatch.setenv("AIRFLOW_CONN_PAIMON_DEFAULT", airflow_env.paimon_connection(warehouse))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", airflow_env.spark_connection("local[2]"))
    table = Catalog(warehouse).create_table(TABLE, pa.schema([("id", pa.int64()), ("v", pa.string())]),
                                            primary_keys=["id"], options={"bucket": "1",
                                                                          "changelog-producer": "input"})
    for i in range(3):  # snapshots 1-3: 9 rows
        table.write(pa.table({"id": [3 * i, 3 * i + 1, 3 * i + 2], "v": ["a"] * 3}))
    dag = build_dag(warehouse, output)
    sync_to_db(dag, tmp_path / "no-dags")
    dr = dag.test()
    tis = {ti.task_id: ti for ti in dr.get_task_instances()}
    assert str(dr.state) == "success", {k: str(v.state) for k, v in tis.items()}
    assert tis["tag"].try_number == 2 and tis["consume"].try_number == 2
    # tag: try 1 tagged snapshot 3, then the table moved on (snapshot 4); try 2 found its own tag
    assert table.tag_snapshot("daily").id == 3 and table.tags()[0].creator == f"airflow:{DAG_ID}:tag:{dr.run_id}"
    # consume: try 1 delivered snapshots 1-4 (10 rows), then snapshot 5 landed; try 2 returned try 1's batch
    with create_session() as session:
        xcoms = dict(session.execute(select(XComModel.task_id, XComModel.value).where(
            XComModel.dag_id == DAG_ID, XComModel.run_id == dr.run_id, XComModel.key == "return_value")).all())
    consumed = xcoms["consume"] if isinstance(xcoms["consume"], dict) else json.loads(xcoms["consume"])
    assert consumed["redelivered"] and (consumed["from_snapshot"], consumed["to_snapshot"]) == (1, 4)
    assert int(xcoms["check"]) == consumed["rows"] == 10
    assert sorted(p.name for p in pathlib.Path(output).iterdir()) == ["snapshots-1-4"]
    assert table.consumers()["c1"] == 5 and table.snapshot(5).commit_kind == "APPEND"
