"""Run identity on snapshots (issue 27, docs/run-identity.md): the snapshot an operator's task try commits carries
its DAG, run, task, map index and try number (``airflow.*`` snapshot properties) beside the user's own; a retry that
finds the earlier try's commit commits nothing, so the snapshot keeps the committing try's number. On the worker
route (try by try, as tests/provider/operators/test_retries.py) and in a real ``dag.test()`` run of a mapped task."""

from __future__ import annotations

import datetime
import pathlib
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from airflow.sdk.exceptions import AirflowFailException
from paimon_provider.operators import (
    PaimonCompactOperator,
    PaimonCreateTagOperator,
    PaimonDropPartitionsOperator,
    PaimonWriteOperator,
)

from table_engine.run_identity import RunIdentity
from tests.provider.operators.conftest import LOCAL
from tests.provider.operators.test_retries import DRIVER, ti_context

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("dt", pa.string())])


@pytest.fixture
def table(paimon_conn: str) -> Any:
    from table_engine import Catalog

    return Catalog(paimon_conn).create_table("db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                             options={"bucket": "1"})


def source(tmp_path: pathlib.Path, i: int) -> str:
    path = tmp_path / f"src{i}.parquet"
    pq.write_table(pa.table({"id": [i], "v": ["w"], "dt": [f"d{i}"]}, schema=SCHEMA), path)
    return str(path)


def test_each_committing_operator_stamps_the_try_that_committed(table: Any, tmp_path: pathlib.Path) -> None:
    write = PaimonWriteOperator(task_id="w", table="db.t", source=source(tmp_path, 1), spark=DRIVER,
                                snapshot_properties={"team": "{{ ti.task_id }}"})
    write.render_template_fields({"ti": ti_context()["ti"]})
    first = write.execute(ti_context(2, task_id="w", map_index=4))  # try 2 commits (try 1 failed before)
    again = write.execute(ti_context(3, task_id="w", map_index=4))  # try 3 finds it: no new snapshot
    assert first is not None and again is not None and again["already_committed"]
    assert first["snapshot_id"] == again["snapshot_id"] == 1 == table.latest_snapshot_id()
    assert table.metadata().run_of(1) == RunIdentity("d", "manual__1", "w", map_index=4, try_number=2)
    assert table.snapshot(1).properties["team"] == "t"  # the user's own, rendered
    assert table.snapshot(1).commit_user == "airflow:d:w:manual__1:4"  # the exactly-once role is unchanged

    PaimonWriteOperator(task_id="w2", table="db.t", source=source(tmp_path, 2), spark=DRIVER).execute(
        ti_context(1, task_id="w2"))
    PaimonCompactOperator(task_id="c", table="db.t", full=True, spark=DRIVER).execute(ti_context(1, task_id="c"))
    PaimonDropPartitionsOperator(task_id="p", table="db.t", partitions={"dt": "d1"}, spark=LOCAL).execute(
        ti_context(1, task_id="p", run_id="manual__2"))
    runs = {sid: table.metadata().run_of(sid) for sid in range(1, table.latest_snapshot_id() + 1)}
    assert [(r.task_id, r.run_id, r.map_index, r.try_number) for r in runs.values() if r is not None] == [
        ("w", "manual__1", 4, 2), ("w2", "manual__1", -1, 1), ("c", "manual__1", -1, 1), ("p", "manual__2", -1, 1)]
    assert [s.id for s in table.metadata().snapshots_of_run("manual__2", dag_id="d")] == [4]


def test_bad_snapshot_properties_fail_the_task_without_a_retry(table: Any, tmp_path: pathlib.Path) -> None:
    cases = [(PaimonWriteOperator(task_id="w", table="db.t", source=source(tmp_path, 1), spark=DRIVER,
                                  snapshot_properties={"airflow.run-id": "forged"}), "keys starting with 'airflow.'"),
             (PaimonWriteOperator(task_id="w", table="db.t", source=source(tmp_path, 1), spark=DRIVER,
                                  snapshot_properties={"n": 1}), "--snapshot-property must map"),
             (PaimonCreateTagOperator(task_id="g", table="db.t", tag="x", spark=LOCAL,
                                      snapshot_properties={"k": "v"}), "create-tag commits no snapshot")]
    for op, message in cases:
        with pytest.raises(AirflowFailException, match=message):
            op.execute(ti_context(1))
    assert table.latest_snapshot_id() is None


@pytest.mark.airflow
@pytest.mark.timeout(600)
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Airflow's DAG run code and its dependencies (as tests/dags)
@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
def test_in_a_dag_run_a_mapped_write_stamps_each_map_index(airflow_db: None, table: Any,
                                                           tmp_path: pathlib.Path) -> None:
    from airflow.sdk import DAG

    from tests.dags.test_s3_credentials import sync_to_db

    with DAG("paimon_runid_probe", schedule=None, start_date=datetime.datetime(2026, 1, 1), catchup=False) as dag:
        PaimonWriteOperator.partial(task_id="load", table="db.t", spark=DRIVER).expand(
            source=[source(tmp_path, 1), source(tmp_path, 2)])
    sync_to_db(dag, tmp_path / "no-dags")
    dr = dag.test()
    assert {str(ti.state) for ti in dr.get_task_instances()} == {"success"}
    runs = [table.metadata().run_of(s.id) for s in table.metadata().snapshots_of_run(dr.run_id)]
    assert sorted((r.dag_id, r.run_id, r.task_id, r.map_index, r.try_number) for r in runs) == [
        ("paimon_runid_probe", dr.run_id, "load", 0, 1), ("paimon_runid_probe", dr.run_id, "load", 1, 1)]
