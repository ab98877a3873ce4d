"""The ``paimon_maintenance`` DAG with ``dag.test()``: a database of 20 tables where 3 need work (an L0 backlog, too
many snapshots, small files of an append table) runs jobs for exactly those 3; the other 17 plan nothing and stay
as they were; an excluded table is not touched; a dry run changes nothing. Engine only (no Spark)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from paimon_provider.utils.maintenance import match_tables

pytestmark = [pytest.mark.airflow, pytest.mark.slow, pytest.mark.timeout(1200)]

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.int64())])
WORK = {"t03": "compact", "t07": "expire-snapshots", "t15": "compact"}


def test_globs_select_tables() -> None:
    names = ["orders", "orders_tmp", "users", "x1"]
    assert match_tables("db", names, ["*"], []) == ["db.orders", "db.orders_tmp", "db.users", "db.x1"]
    assert match_tables("db", names, ["orders*", "x?"], ["*_tmp"]) == ["db.orders", "db.x1"]
    assert match_tables("db", names, None, "users") == ["db.orders", "db.orders_tmp", "db.x1"]
    assert match_tables("db", names, ["  "], None) == ["db.orders", "db.orders_tmp", "db.users", "db.x1"]


def _write(t: Any, i: int) -> None:
    t.write(pa.table({"dt": ["a"], "id": [i], "v": [0]}, schema=SCHEMA))


def _results(dr: Any) -> dict[str, dict[str, Any]]:
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    with create_session() as session:
        rows = session.query(XComModel).filter(XComModel.dag_id == dr.dag_id, XComModel.run_id == dr.run_id,
                                               XComModel.task_id == "maintain", XComModel.key == "return_value")
        values = [XComModel.deserialize_value(r) for r in rows]
    return {v["table"]: v for v in values}


def test_twenty_tables_three_need_work(dagbag: Any, airflow_db: None, lake: dict[str, str]) -> None:
    from table_engine import Catalog
    from table_engine.ops.maintain import plan_table

    catalog = Catalog(lake["warehouse"])
    tables = {}
    for n in range(20):
        name = f"t{n:02d}"
        if name == "t07":  # too many snapshots
            opts = {"bucket": "1", "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "2"}
        else:
            opts = {"bucket": "1", "write-only": "true"}
        pk = ["dt", "id"] if name != "t15" else []  # t15: an append table gathering small files
        t = catalog.create_table(f"m.{name}", SCHEMA, primary_keys=pk, options=opts if pk else {"write-only": "true"})
        for i in range(6 if name in WORK else 1):
            _write(t, i)
        tables[name] = t
    skip = catalog.create_table("m.skip_me", SCHEMA, primary_keys=["dt", "id"],
                                options={"bucket": "1", "write-only": "true"})
    for i in range(6):
        _write(skip, i)
    before = {n: t.latest_snapshot_id() for n, t in tables.items()}
    conf = {"databases": ["m"], "include": ["t*"], "exclude": ["skip_*"], "dry_run": True, "orphans": False}

    dag = dagbag.dags["paimon_maintenance"]
    dry = dag.test(run_conf={**conf, "include": ["*"]})
    assert str(dry.state) == "success"
    planned = _results(dry)
    assert set(planned) == {f"m.{n}" for n in tables}  # skip_me excluded
    assert {t: r["due"] for t, r in planned.items() if r["due"]} == {f"m.{n}": [k] for n, k in WORK.items()}
    assert {n: t.latest_snapshot_id() for n, t in tables.items()} == before  # a dry run changes nothing

    dr = dag.test(run_conf={**conf, "dry_run": False})
    states = {f"{ti.task_id}[{ti.map_index}]": str(ti.state) for ti in dr.get_task_instances()}
    assert str(dr.state) == "success", states
    done = _results(dr)
    ran = {t: [r["kind"] for r in v["results"]] for t, v in done.items() if v["results"]}
    assert ran == {f"m.{n}": [k] for n, k in WORK.items()}
    after = {n: t.latest_snapshot_id() for n, t in tables.items()}
    assert {n for n in tables if after[n] != before[n]} == {"t03", "t15"}  # expiry commits no snapshot
    last, first = tables["t07"].latest_snapshot_id(), tables["t07"].earliest_snapshot_id()
    assert last is not None and first is not None and last - first + 1 == 2  # snapshot.num-retained.max
    assert skip.latest_snapshot_id() == 6  # excluded: untouched
    compacted = tables["t03"].snapshot(after["t03"])
    assert str(compacted.commit_kind) == "COMPACT" and (compacted.properties or {}).get("airflow.dag-id") == \
        "paimon_maintenance"
    assert all(plan_table(catalog.get_table(f"m.{n}")).empty for n in tables)  # done: nothing is due any more
