"""``df.write.format("paimon")`` on a data-evolution table beyond whole rows (ADR 0017, amended): a DataFrame of some
columns is a write of some columns, one with ``_ROW_ID`` an update by row id, option ``upsert-keys`` an upsert by
key; each gives what the ``Table`` API gives on the same input (reads compared with ``_ROW_ID``)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from table_engine.spark.jobs.task_env import FAULT_ENV
from table_engine.table import Table
from tests.spark.conftest import spark_submit
from tests.table_engine.test_bad_input import warehouse_state

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([("id", pa.int64()), ("a", pa.int64()), ("b", pa.string()), ("dt", pa.string())])
OPTIONS = {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}
N = 40


def twins(warehouse: str) -> tuple[Table, Table]:
    """Two equal data-evolution tables (partitioned by ``dt``, N rows in two writes): one for the ``Table`` API,
    one for Spark."""
    out = []
    for name in ("db.api", "db.spark"):
        t = Catalog(warehouse).create_table(name, SCHEMA, partition_keys=["dt"], options=OPTIONS)
        for lo, hi in ((0, N // 2), (N // 2, N)):
            t.write(pa.table({"id": pa.array(range(lo, hi), pa.int64()), "a": pa.array(range(lo, hi), pa.int64()),
                              "b": [f"b{i}" for i in range(lo, hi)], "dt": [f"d{i % 2}" for i in range(lo, hi)]}))
        out.append(t)
    return out[0], out[1]


def rows(t: Table) -> list[dict[str, Any]]:
    table = Catalog(os.path.dirname(os.path.dirname(t.path))).get_table(t.identifier)
    return sorted(table.read(columns=["_ROW_ID", *SCHEMA.names]).to_pylist(), key=lambda r: r["_ROW_ID"])


def save(df: Any, warehouse: str, table: str, **options: str) -> None:
    writer = df.write.format("paimon").mode("append").option("warehouse", warehouse)
    for k, v in options.items():
        writer = writer.option(k, v)
    writer.save(table)


def test_a_dataframe_of_some_columns_is_a_write_of_some_columns(spark: Any, warehouse: str) -> None:
    api, _ = twins(warehouse)
    new = pa.table({"id": pa.array(range(N, N + 6), pa.int64()), "b": [f"n{i}" for i in range(6)],
                    "dt": [f"d{i % 3}" for i in range(6)]})
    api.write(new)
    save(spark.createDataFrame(new.to_pandas()).coalesce(1), warehouse, "db.spark")
    assert rows(Catalog(warehouse).get_table("db.spark")) == rows(api)
    got = {r["id"]: r for r in rows(api)}
    assert got[N]["a"] is None and got[N]["b"] == "n0" and got[N]["_ROW_ID"] >= N
    # several tasks: the same rows, with the next row ids (in some task order)
    more = spark.createDataFrame([(100 + i, f"m{i}", "d1") for i in range(8)], "id long, b string, dt string")
    save(more.repartition(2), warehouse, "db.spark")
    after = rows(Catalog(warehouse).get_table("db.spark"))
    added = [r for r in after if r["id"] >= 100]
    assert sorted(r["_ROW_ID"] for r in added) == list(range(N + 6, N + 14))
    assert sorted((r["id"], r["b"], r["a"]) for r in added) == [(100 + i, f"m{i}", None) for i in range(8)]
    # no compaction in passing (as Table.write): every snapshot is an APPEND
    assert {str(s.commit_kind) for s in Catalog(warehouse).get_table("db.spark").snapshots()} == {"APPEND"}


def test_a_row_id_column_is_an_update_by_row_id_even_when_tasks_share_a_row_range(spark: Any,
                                                                                 warehouse: str) -> None:
    api, _ = twins(warehouse)
    ids = [1, 2, 5, 18, 21, 30, 39]  # rows of both row ranges, spread over both tasks
    update = pa.table({"_ROW_ID": pa.array(ids, pa.int64()), "a": pa.array([-i for i in ids], pa.int64()),
                       "b": [f"u{i}" for i in ids]})
    api.data_evolution.update_by_row_id(update)
    df = spark.createDataFrame(update.to_pandas()).repartition(2, "b")
    save(df, warehouse, "db.spark", **{"commit-user": "job-1"})
    spark_table = Catalog(warehouse).get_table("db.spark")
    assert rows(spark_table) == rows(api)
    assert {r["_ROW_ID"]: r["a"] for r in rows(spark_table)}[21] == -21
    assert not any(p.name.startswith("spark-staging-") for p in Path(spark_table.path).iterdir())
    before = warehouse_state(warehouse)
    save(df, warehouse, "db.spark", **{"commit-user": "job-1"})  # the job again: committed already, a no-op
    assert warehouse_state(warehouse) == before


def test_option_upsert_keys_is_an_upsert_by_key(spark: Any, warehouse: str) -> None:
    api, _ = twins(warehouse)
    data = pa.table({"id": pa.array([3, 4, 100, 101], pa.int64()), "b": ["x3", "x4", "x100", "x101"],
                     "dt": ["d1", "d0", "d0", "d1"]})
    api.data_evolution.upsert_by_key(data, ["id"])
    save(spark.createDataFrame(data.to_pandas()).coalesce(1), warehouse, "db.spark", **{"upsert-keys": "id"})
    assert rows(Catalog(warehouse).get_table("db.spark")) == rows(api)


@pytest.mark.parametrize(("columns", "data", "options", "error"), [
    ("_ROW_ID long, nope long", [(1, 1)], {}, r"column\(s\) \['nope'\] are not in the table"),
    ("_ROW_ID long, a long", [(1, 1), (999, 2)], {}, "row id 999 is not a row of the table"),
    ("_ROW_ID long, a long", [(1, 1), (1, 2)], {}, "repeated _ROW_ID values"),
    ("_ROW_ID long, dt string", [(1, "d9")], {}, r"partition column\(s\) \['dt'\] cannot change"),
    ("id long, b string", [(1, "x")], {}, r"partition column\(s\) \['dt'\] are missing"),
    ("id long, b string, dt string", [(1, "x", "d0")], {"upsert-keys": "k"}, r"key column\(s\) \['k'\]"),
])
def test_bad_input_is_one_error_and_the_table_is_unchanged(spark: Any, warehouse: str, columns: str,
                                                           data: list[tuple[Any, ...]], options: dict[str, str],
                                                           error: str) -> None:
    twins(warehouse)
    before = warehouse_state(warehouse)
    with pytest.raises(Exception, match=error):
        save(spark.createDataFrame(data, columns).repartition(2), warehouse, "db.spark", **options)
    assert warehouse_state(warehouse) == before


def test_retried_tasks_count_once(warehouse: str, tmp_path: Path) -> None:
    """``spark-submit --master local[2,3]``: an update whose task is killed after staging its rows (its file is
    never read: a repeated row id would fail the commit), then a write of some columns whose task fails and is
    retried (one copy of each row)."""
    api, t = twins(warehouse)
    ids = list(range(0, N, 3))
    update = pa.table({"_ROW_ID": pa.array(ids, pa.int64()), "a": pa.array([1000 + i for i in ids], pa.int64())})
    api.data_evolution.update_by_row_id(update)
    src = tmp_path / "update"
    src.mkdir()
    pq.write_table(update.slice(0, 7), src / "part-0.parquet")
    pq.write_table(update.slice(7), src / "part-1.parquet")
    args = ["write", "--warehouse", warehouse, "--table", "db.spark", "--parallelism", "2"]
    res = spark_submit([*args, "--source", str(src)], master="local[2,3]", env={FAULT_ENV: "exit:0"})
    res.ok()
    assert "fault injection" in res.stderr and "failing task 0, attempt 0" in res.stderr
    assert rows(t) == rows(api)
    assert not any(p.name.startswith("spark-staging-") for p in Path(t.path).iterdir())
    new = pa.table({"id": pa.array(range(500, 600), pa.int64()), "dt": ["d0"] * 100})
    src = tmp_path / "columns"
    src.mkdir()
    pq.write_table(new, src / "part-0.parquet")
    res = spark_submit([*args, "--source", str(src)], master="local[2,3]", env={FAULT_ENV: "raise:1"})
    res.ok()
    assert "injected failure of task 1 attempt 0" in res.stderr
    got = Catalog(warehouse).get_table("db.spark").read(columns=["_ROW_ID", "id"])
    assert Counter(got["id"].to_pylist()) == Counter([*range(N), *range(500, 600)])
    assert sorted(got["_ROW_ID"].to_pylist()) == list(range(N + 100))


def test_an_update_by_row_id_on_an_s3_warehouse(spark: Any, s3_warehouse: str, s3_options: dict[str, str]) -> None:
    """The staged rows live on the object store too (written, read and removed through the table's FileIO)."""
    t = Catalog(s3_warehouse, s3_options).create_table("db.de", SCHEMA, partition_keys=["dt"], options=OPTIONS)
    t.write(pa.table({"id": pa.array(range(6), pa.int64()), "a": pa.array(range(6), pa.int64()),
                      "b": [f"b{i}" for i in range(6)], "dt": ["d0", "d1"] * 3}))
    want = {r["_ROW_ID"]: r["a"] for r in t.read(columns=["_ROW_ID", "a"]).to_pylist()} | {1: -1, 4: -4}
    df = spark.createDataFrame([(1, -1), (4, -4)], "_ROW_ID long, a long").repartition(2)
    df.write.format("paimon").mode("append").option("warehouse", s3_warehouse).options(**s3_options).save("db.de")
    got = Catalog(s3_warehouse, s3_options).get_table("db.de").read(columns=["_ROW_ID", "a"]).to_pylist()
    assert {r["_ROW_ID"]: r["a"] for r in got} == want
    paths = [st.path for st in t.file_io.walk(t.path)]
    assert paths and not [p for p in paths if "/spark-staging-" in p]
