"""Every row of docs/retries.md on the worker route: ``execute`` twice for the same task instance (try 1, then
try 2, default arguments), asserting the table and the results; mapped task instances (map index) are different
task instances. consume-changelog into files (a spark-submit) is retried in a real DAG run:
tests/dags/test_retries_dag.py."""

from __future__ import annotations

import pathlib
from types import SimpleNamespace
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from airflow.sdk.exceptions import AirflowFailException
from paimon_provider.operators import (
    PaimonCompactOperator,
    PaimonConsumeChangelogOperator,
    PaimonCreateBranchOperator,
    PaimonCreateTagOperator,
    PaimonDeleteBranchOperator,
    PaimonDeleteTagOperator,
    PaimonDropPartitionsOperator,
    PaimonExpireSnapshotsOperator,
    PaimonFastForwardOperator,
    PaimonRollbackOperator,
    PaimonWriteOperator,
)

from tests.provider.operators.conftest import LOCAL

DRIVER = {"conf": {"spark.paimon.driver-job.max-input-size": "64m"}}
"""An operator's ``spark=`` for a small Spark-job command: the engine on the worker, no spark-submit."""


def ti_context(try_number: int = 1, *, task_id: str = "t", run_id: str = "manual__1",
               map_index: int = -1) -> Any:
    """The context of one try of task instance (dag ``d``, ``task_id``, ``run_id``, ``map_index``)."""
    from airflow.sdk.execution_time.context import OutletEventAccessors

    ti = SimpleNamespace(dag_id="d", task_id=task_id, run_id=run_id, map_index=map_index, try_number=try_number)
    return {"ti": ti, "outlet_events": OutletEventAccessors()}


@pytest.fixture
def table(paimon_conn: str) -> Any:
    from table_engine import Catalog

    schema = pa.schema([("id", pa.int64()), ("v", pa.string()), ("dt", pa.string())])
    t = Catalog(paimon_conn).create_table("db.t", schema, primary_keys=["id", "dt"], partition_keys=["dt"],
                                          options={"bucket": "1", "changelog-producer": "input"})
    for i in range(3):  # snapshots 1-3, 9 rows
        t.write(pa.table({"id": [3 * i, 3 * i + 1, 3 * i + 2], "v": ["a"] * 3, "dt": [f"d{i}"] * 3}))
    return t


def test_create_tag_a_retry_finds_its_own_tag_after_latest_moved(table: Any) -> None:
    op = PaimonCreateTagOperator(task_id="t", table="db.t", tag="daily", spark=LOCAL)
    first = op.execute(ti_context(1))
    assert first is not None and (first["snapshot_id"], first["already_existed"]) == (3, False)
    table.write(pa.table({"id": [100], "v": ["b"], "dt": ["d0"]}))  # latest moves on: snapshot 4
    second = op.execute(ti_context(2))
    assert second is not None and (second["snapshot_id"], second["already_existed"]) == (3, True)
    assert table.tag_snapshot("daily").id == 3
    # a cleared task instance re-runs with a new try number: the same case
    assert op.execute(ti_context(3))["snapshot_id"] == 3  # type: ignore[index]


def test_create_tag_someone_elses_tag_fails_unless_if_exists(table: Any) -> None:
    PaimonCreateTagOperator(task_id="t", table="db.t", tag="daily", spark=LOCAL).execute(ti_context(1))
    table.write(pa.table({"id": [100], "v": ["b"], "dt": ["d0"]}))
    other = ti_context(1, run_id="manual__2")
    with pytest.raises(AirflowFailException, match=r"tag 'daily' of table db.t exists already at snapshot 3 "
                                                    r"\(created by airflow:d:t:manual__1\), not at snapshot 4"):
        PaimonCreateTagOperator(task_id="t", table="db.t", tag="daily", spark=LOCAL).execute(other)
    skipped = PaimonCreateTagOperator(task_id="t", table="db.t", tag="daily", if_exists="skip",
                                      spark=LOCAL).execute(other)
    assert skipped is not None and skipped["skipped"] and table.tag_snapshot("daily").id == 3
    replaced = PaimonCreateTagOperator(task_id="t", table="db.t", tag="daily", if_exists="replace",
                                       spark=LOCAL).execute(other)
    assert replaced is not None and (replaced["snapshot_id"], replaced["replaced"]) == (4, 3)
    assert table.tag_snapshot("daily").id == 4
    # the same snapshot requested by anyone: the tag is already as asked
    same = PaimonCreateTagOperator(task_id="x", table="db.t", tag="daily", spark=LOCAL).execute(ti_context(1))
    assert same is not None and same["snapshot_id"] == 4 and same["already_existed"]


def test_create_tag_mapped_task_instances_are_distinct(table: Any) -> None:
    op = PaimonCreateTagOperator(task_id="t", table="db.t", tag="daily", spark=LOCAL)
    op.execute(ti_context(1, map_index=0))
    table.write(pa.table({"id": [100], "v": ["b"], "dt": ["d0"]}))
    with pytest.raises(AirflowFailException, match="created by airflow:d:t:manual__1:0"):
        op.execute(ti_context(1, map_index=1))
    assert op.execute(ti_context(2, map_index=0))["snapshot_id"] == 3  # type: ignore[index]


def test_delete_tag_already_gone_is_success_on_a_retry(table: Any, capsys: pytest.CaptureFixture[str]) -> None:
    table.create_tag("old", 1)
    op = PaimonDeleteTagOperator(task_id="t", table="db.t", tag="old", spark=LOCAL)
    assert op.execute(ti_context(1))["deleted_tags"] == ["old"]  # type: ignore[index]
    assert op.execute(ti_context(2))["deleted_tags"] == []  # type: ignore[index]
    assert "tag(s) old of db.t did not exist (deleted by an earlier try)" in capsys.readouterr().out
    with pytest.raises(AirflowFailException, match="TagNotExistError"):  # a first try: the tag name is wrong
        op.execute(ti_context(1, run_id="manual__2"))
    missing_ok = PaimonDeleteTagOperator(task_id="t", table="db.t", tag="old", ignore_if_missing=True, spark=LOCAL)
    assert missing_ok.execute(ti_context(1, run_id="manual__2"))["deleted_tags"] == []  # type: ignore[index]
    assert table.list_tags() == []


def test_branch_operators_converge_on_retries(table: Any) -> None:
    """Write-audit-publish's steps: create the branch, fast-forward, delete it; each converges on a later try."""
    table.create_tag("base", 1)
    create = PaimonCreateBranchOperator(task_id="c", table="db.t", branch="audit", tag="base", spark=LOCAL)
    assert create.execute(ti_context(1))["already_existed"] is False  # type: ignore[index]
    assert create.execute(ti_context(2))["already_existed"] is True  # type: ignore[index]
    publish = PaimonFastForwardOperator(task_id="f", table="db.t", branch="audit", spark=LOCAL)
    with pytest.raises(AirflowFailException, match="moved on since the branch was made"):  # main has 2 and 3
        publish.execute(ti_context(1))
    forced = PaimonFastForwardOperator(task_id="f", table="db.t", branch="audit", check_unchanged=False, spark=LOCAL)
    assert forced.execute(ti_context(1))["discarded_snapshots"] == [2, 3]  # type: ignore[index]
    assert publish.execute(ti_context(2))["already_done"] is True  # type: ignore[index]
    drop = PaimonDeleteBranchOperator(task_id="d", table="db.t", branch="audit", spark=LOCAL)
    assert drop.execute(ti_context(1))["deleted"] is True  # type: ignore[index]
    assert drop.execute(ti_context(2))["deleted"] is False  # type: ignore[index]
    with pytest.raises(AirflowFailException, match="BranchNotExistError"):
        drop.execute(ti_context(1, run_id="manual__2"))
    assert table.list_branches() == [] and table.latest_snapshot_id() == 1


def test_drop_partitions_already_gone_is_success_on_a_retry(table: Any, capsys: pytest.CaptureFixture[str]) -> None:
    op = PaimonDropPartitionsOperator(task_id="t", table="db.t", partitions={"dt": "d1"}, spark=LOCAL)
    first = op.execute(ti_context(1))
    assert first is not None and (first["snapshot_id"], first["dropped"]) == (4, True)
    second = op.execute(ti_context(2))
    assert second is not None and (second["snapshot_id"], second["dropped"]) == (None, False)
    assert "did not exist (dropped by an earlier try)" in capsys.readouterr().out
    assert table.latest_snapshot_id() == 4 and sorted(set(table.read().column("dt").to_pylist())) == ["d0", "d2"]
    with pytest.raises(AirflowFailException, match="matches no partition"):
        op.execute(ti_context(1, run_id="manual__2"))
    assert PaimonDropPartitionsOperator(task_id="t", table="db.t", partitions={"dt": "d1"}, ignore_if_missing=True,
                                        spark=LOCAL).execute(ti_context(1, run_id="manual__2"))["dropped"] is False  # type: ignore[index]
    assert table.latest_snapshot_id() == 4


def test_consume_changelog_into_a_table_a_retry_reports_the_same_commit(table: Any, paimon_conn: str) -> None:
    from table_engine import Catalog

    catalog = Catalog(paimon_conn)
    target = catalog.create_table("db.dwd", table.arrow_schema, primary_keys=["id", "dt"],
                                  options={"bucket": "1"})
    op = PaimonConsumeChangelogOperator(task_id="t", table="db.t", consumer_id="c1", target_table="db.dwd",
                                        spark=DRIVER)
    first = op.execute(ti_context(1))
    assert first is not None and (first["target_snapshot_id"], first["rows"]) == (1, 9)
    table.write(pa.table({"id": [100], "v": ["b"], "dt": ["d0"]}))
    second = op.execute(ti_context(2))
    assert second is not None and second["redelivered"]
    assert (second["target_snapshot_id"], second["to_snapshot"], second["rows"]) == (1, 3, 9)
    assert target.latest_snapshot_id() == 1 and target.read().num_rows == 9
    nxt = op.execute(ti_context(1, run_id="manual__2"))
    assert nxt is not None and (nxt["target_snapshot_id"], nxt["rows"]) == (2, 1)


def test_write_compact_rollback_expire_converge(table: Any, tmp_path: pathlib.Path) -> None:
    src = tmp_path / "src.parquet"
    pq.write_table(pa.table({"id": [7], "v": ["w"], "dt": ["d9"]}), src)
    write = PaimonWriteOperator(task_id="w", table="db.t", source=str(src), spark=DRIVER)
    first = write.execute(ti_context(1, task_id="w"))
    second = write.execute(ti_context(2, task_id="w"))
    assert first is not None and second is not None and second["snapshot_id"] == first["snapshot_id"] == 4
    assert second["already_committed"] and table.read().num_rows == 10
    compact = PaimonCompactOperator(task_id="c", table="db.t", full=True, spark=DRIVER)
    table.write(pa.table({"id": [0], "v": ["x"], "dt": ["d0"]}))  # snapshot 5: a second file in d0 to compact
    sid = compact.execute(ti_context(1, task_id="c"))["snapshot_id"]  # type: ignore[index]
    assert sid == 6 and table.snapshot(6).commit_kind == "COMPACT"
    again = compact.execute(ti_context(2, task_id="c"))
    assert again is not None and again["snapshot_id"] in (None, 6) and table.latest_snapshot_id() == 6
    rollback = PaimonRollbackOperator(task_id="r", table="db.t", snapshot_id=4, spark=LOCAL)
    rollback.execute(ti_context(1, task_id="r"))
    assert rollback.execute(ti_context(2, task_id="r"))["snapshot_id"] == 4 and table.latest_snapshot_id() == 4  # type: ignore[index]
    expire = PaimonExpireSnapshotsOperator(task_id="e", table="db.t", retain_max=1, retain_min=1, spark=LOCAL)
    assert expire.execute(ti_context(1, task_id="e"))["expired_snapshots"] == [1, 2, 3]  # type: ignore[index]
    assert table.read().num_rows == 10
    assert expire.execute(ti_context(2, task_id="e"))["expired_snapshots"] == []  # type: ignore[index]
    assert table.read().num_rows == 10


@pytest.mark.parametrize("deferrable", [False, True])
def test_sensors_find_the_same_snapshot_and_partition_on_a_retry(table: Any, deferrable: bool) -> None:
    """Sensors change nothing: a later try (also of a deferrable sensor whose trigger had fired before the worker
    was lost) checks the same rendered criteria and finds the same, oldest matching snapshot."""
    from paimon_provider.sensors import PaimonPartitionSensor, PaimonSnapshotSensor

    sensor = PaimonSnapshotSensor(task_id="t", table="db.t", after_snapshot_id=1, deferrable=deferrable,
                                  poke_interval=0.05, timeout=30)
    first = sensor.execute(ti_context(1))
    table.write(pa.table({"id": [100], "v": ["b"], "dt": ["d0"]}))
    second = sensor.execute(ti_context(2))
    assert first["snapshot_id"] == second["snapshot_id"] == 2
    partition = PaimonPartitionSensor(task_id="p", table="db.t", partition="dt=d1", deferrable=deferrable,
                                      poke_interval=0.05, timeout=30)
    assert partition.execute(ti_context(1)) is not None and partition.execute(ti_context(2)) is not None
