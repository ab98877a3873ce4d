"""The row-level commands in the Spark application: ``merge-into --sql`` as a Spark job on the session (its source a
query Spark runs, merged by the engine on the driver), and ``delete`` through the application's entry point, which
runs it with the engine on the driver without starting Spark."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.ops import MergeInto
from table_engine.spark import app
from table_engine.spark.jobs.run import run_spark_job

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("n", pa.int64())])


def _rows(warehouse: str, name: str) -> list[tuple[Any, ...]]:
    t = Catalog(warehouse).get_table(name)
    return sorted(tuple(r.values()) for r in t.read().to_pylist())


def test_merge_into_a_spark_query_then_delete_through_the_application(spark, warehouse, capsys):
    t = Catalog(warehouse).create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    t.write(pa.table({"id": [1, 2, 3, 4, 5], "v": ["a", "b", "c", "d", "e"], "n": [10, 20, 30, 40, 50]},
                     schema=SCHEMA))
    # Spark types the literals INT: the engine casts the source to the table's BIGINT
    sql = "SELECT * FROM VALUES (2, 'B', 25), (3, 'C', 5), (4, 'D', 45), (6, 'F', 60), (7, 'G', 1) AS s(id, v, n)"
    cmd = MergeInto(warehouse=warehouse, table="db.t", sql=sql, on=("id",),
                    when_matched=({"action": "update", "condition": [["source.n", ">", {"column": "target.n"}]]},
                                  {"action": "delete", "condition": [["source.n", "<", 10]]}),
                    when_not_matched=({"action": "insert", "condition": [["n", ">", 10]]},))
    out = run_spark_job(cmd, spark)
    assert (out["deleted"], out["updated"], out["inserted"]) == (1, 2, 1)
    assert out["snapshot_id"] == 2 and out["already_committed"] is False
    assert _rows(warehouse, "db.t") == [(1, "a", 10), (2, "B", 25), (4, "D", 45), (5, "e", 50), (6, "F", 60)]

    capsys.readouterr()
    code = app.main(["delete", "--warehouse", warehouse, "--table", "db.t",
                     "--where", json.dumps([["n", ">=", 45]]), "--commit-user", "nightly"])
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0 and result["status"] == "ok", result
    assert (result["deleted"], result["updated"], result["inserted"], result["snapshot_id"]) == (3, 0, 0, 3)
    assert _rows(warehouse, "db.t") == [(1, "a", 10), (2, "B", 25)]
    assert Catalog(warehouse).get_table("db.t").snapshot(3).commit_user == "nightly"
    # a retry with the same commit user finds the change committed
    assert app.main(["delete", "--warehouse", warehouse, "--table", "db.t", "--where", json.dumps([]),
                     "--commit-user", "nightly"]) == 0
    again = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert again["already_committed"] is True and again["snapshot_id"] == 3
    assert _rows(warehouse, "db.t") == [(1, "a", 10), (2, "B", 25)]
