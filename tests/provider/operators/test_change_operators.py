"""``PaimonDeleteOperator``, ``PaimonUpdateOperator``, ``PaimonMergeIntoOperator``: commands built from templated
values (JSON text from Params included), run on the worker, the table's Asset emitted with the snapshot, a later try
of the same task instance changes nothing again; and a real ``dag.test()`` run of the three."""

from __future__ import annotations

import datetime
import pathlib
from typing import Any

import pyarrow as pa
import pytest
from paimon_provider.operators import PaimonDeleteOperator, PaimonMergeIntoOperator, PaimonUpdateOperator
from paimon_provider.utils.assets import table_asset

from table_engine.ops import Delete, MergeInto, Update
from tests.provider.operators.conftest import context as base_context

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("n", pa.int64())])


def context(task_id: str = "t") -> dict[str, Any]:
    """A task's context (:func:`base_context`) for task ``task_id``: each task commits as its own commit user."""
    ctx = base_context()
    ctx["ti"].task_id = task_id
    return ctx


@pytest.fixture
def table(paimon_conn: str) -> Any:
    from table_engine import Catalog

    t = Catalog(paimon_conn).create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    t.write(pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"], "n": [10, 20, 30]}, schema=SCHEMA))
    s = Catalog(paimon_conn).create_table("db.s", SCHEMA)
    s.write(pa.table({"id": [3, 4], "v": ["u", "i"], "n": [0, 0]}, schema=SCHEMA))
    return t


def test_commands_are_built_from_templated_values() -> None:
    d = PaimonDeleteOperator(task_id="d", table="db.t", where='[["id", "in", [1, 2]]]', commit_user="u")
    assert d.build_command("/w") == Delete(warehouse="/w", table="db.t", where=[["id", "in", [1, 2]]],
                                           commit_user="u")
    assert d.spark["runner"] == "local" and d.asset_table == "db.t"
    u = PaimonUpdateOperator(task_id="u", table="db.t", set_values='{"v": "x"}', where=[("n", ">", 5)])
    assert u.build_command("/w") == Update(warehouse="/w", table="db.t", set_values={"v": "x"},
                                           where=[["n", ">", 5]])
    m = PaimonMergeIntoOperator(task_id="m", table="db.t", source_table="db.s", on="id",
                                when_matched='[{"action": "update"}]', when_not_matched=[{"action": "insert"}])
    assert m.build_command("/w") == MergeInto(warehouse="/w", table="db.t", source_table="db.s", on=["id"],
                                              when_matched=[{"action": "update"}],
                                              when_not_matched=[{"action": "insert"}])
    assert PaimonMergeIntoOperator(task_id="q", table="db.t", sql="select 1", on=["id"],
                                   when_matched=[{"action": "delete"}]).spark.get("runner") != "local"
    with pytest.raises(ValueError, match="exactly one of source, source_table and sql"):
        PaimonMergeIntoOperator(task_id="m", table="db.t", on=["id"], when_matched=[{"action": "delete"}])
    with pytest.raises(ValueError, match="where must be JSON"):
        PaimonDeleteOperator(task_id="d", table="db.t", where="id = 1").build_command("/w")


def test_they_run_on_the_worker_emit_the_asset_and_a_later_try_changes_nothing(table: Any) -> None:
    ctx = context()
    result: Any = PaimonDeleteOperator(task_id="t", table="db.t", where=[["id", "=", 1]]).execute(ctx)
    assert result["deleted"] == 1 and not result["already_committed"]
    assert ctx["outlet_events"][table_asset("db.t")].extra["snapshot_id"] == result["snapshot_id"]
    again: Any = PaimonDeleteOperator(task_id="t", table="db.t", where=[["id", "=", 2]]).execute(context())
    assert again["already_committed"] and again["snapshot_id"] == result["snapshot_id"]
    upd: Any = PaimonUpdateOperator(task_id="u", table="db.t",
                                    set_values={"n": {"column": "id"}}).execute(context("u"))
    assert upd["updated"] == 2
    merged: Any = PaimonMergeIntoOperator(
        task_id="m", table="db.t", source_table="db.s", on=["id"],
        when_matched=[{"action": "update", "set": {"v": {"column": "source.v"}}}],
        when_not_matched=[{"action": "insert", "condition": [["source.id", ">", 3]]}]).execute(context("m"))
    assert (merged["updated"], merged["inserted"]) == (1, 1)
    rows = sorted(table.read().to_pylist(), key=lambda r: r["id"])
    assert [(r["id"], r["v"], r["n"]) for r in rows] == [(2, "b", 2), (3, "u", 3), (4, "i", 0)]
    assert table.snapshot(merged["snapshot_id"]).commit_user.startswith("airflow:d:m:")


@pytest.mark.airflow
@pytest.mark.timeout(600)
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
@pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")
def test_a_dag_run_deletes_updates_and_merges(airflow_db: None, table: Any, tmp_path: pathlib.Path) -> None:
    from airflow.sdk import DAG, Param

    from tests.dags.test_s3_credentials import sync_to_db

    with DAG("paimon_changes_probe", schedule=None, start_date=datetime.datetime(2026, 1, 1), catchup=False,
             params={"user": Param(2, type="integer")}) as dag:
        delete = PaimonDeleteOperator(task_id="erase_user", table="db.t",
                                      where='[["id", "=", {{ params.user }}]]')
        update = PaimonUpdateOperator(task_id="close", table="db.t", set_values={"v": "closed"},
                                      where=[["n", ">=", 30]])
        merge = PaimonMergeIntoOperator(task_id="upsert", table="db.t", source_table="db.s", on=["id"],
                                        when_matched=[{"action": "update"}], when_not_matched=[{"action": "insert"}])
        delete >> update >> merge
    sync_to_db(dag, tmp_path / "no-dags")
    dr = dag.test()
    states = {ti.task_id: str(ti.state) for ti in dr.get_task_instances()}
    assert set(states.values()) == {"success"}, states
    rows = sorted(table.read().to_pylist(), key=lambda r: r["id"])
    assert [(r["id"], r["v"], r["n"]) for r in rows] == [(1, "a", 10), (3, "u", 0), (4, "i", 0)]
    snaps = {s.id: s for s in table.snapshots()}
    tasks = [(snaps[i].properties or {}).get("airflow.task-id") for i in sorted(snaps)]
    assert {"erase_user", "close", "upsert"} <= set(tasks)
