"""A failed and retried write task leaves exactly one copy of every row (``spark-submit --master local[2,3]``:
two cores, up to three attempts per task; the writer fails a task's first attempt on request)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from table_engine import Catalog
from table_engine.spark.jobs.task_env import FAULT_ENV
from table_engine.store.committing import snapshot_info
from tests.spark.conftest import spark_submit

pytestmark = pytest.mark.spark

N = 4000


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> str:
    d = tmp_path_factory.mktemp("retry-src")
    ids = list(range(N))
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64()), "v": [f"v{i}" for i in ids],
                             "dt": [f"d{i % 4}" for i in ids]}), d / "part-0.parquet")
    return str(d)


def referenced_and_on_disk(table) -> tuple[set[str], set[str]]:
    referenced: set[str] = set()
    for snap in table.snapshots():
        referenced |= set(snapshot_info.snapshot_changes(table.file_io, table.path, snap).added_files)
    on_disk = {p.name for p in Path(table.path).rglob("data-*.parquet")}
    return referenced, on_disk


def test_a_task_that_fails_and_cleans_up_is_retried_without_duplicates(source, warehouse):
    res = spark_submit(["write", "--warehouse", warehouse, "--table", "db.events", "--source", source,
                        "--create-if-missing", "--partition-key", "dt", "--parallelism", "2"],
                       master="local[2,3]", env={FAULT_ENV: "raise:0"})
    out = res.ok()
    assert "injected failure of task 0 attempt 0" in res.stderr
    table = Catalog(warehouse).get_table("db.events")
    rows = table.read()
    assert out["rows"] == N and rows.num_rows == N
    assert Counter(rows["id"].to_pylist()) == Counter(range(N))          # exactly one copy of every row
    referenced, on_disk = referenced_and_on_disk(table)
    assert on_disk == referenced                                         # the failed attempt removed its files


def test_a_killed_task_is_retried_and_its_files_are_never_committed(source, warehouse):
    res = spark_submit(["write", "--warehouse", warehouse, "--table", "db.users", "--source", source,
                        "--create-if-missing", "--primary-key", "id,dt", "--partition-key", "dt",
                        "--option", "bucket=-1", "--option", "dynamic-bucket.target-row-num=300",
                        "--parallelism", "2"],
                       master="local[2,3]", env={FAULT_ENV: "exit:1"})
    res.ok()
    table = Catalog(warehouse).get_table("db.users")
    rows = table.read()
    assert rows.num_rows == N and Counter(rows["id"].to_pylist()) == Counter(range(N))
    referenced, on_disk = referenced_and_on_disk(table)
    assert referenced < on_disk                  # the killed attempt's files are orphans, never referenced
    assert len(table.snapshots()) == 1
