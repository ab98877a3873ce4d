"""The Spark compaction job (table_engine.spark.jobs.compact_job): tasks through ``mapInArrow`` with their report, the
job's parallelism and memory read from the Spark conf (no SparkContext), and the memory check before any task."""

from __future__ import annotations

import inspect
import os
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import CommandError
from table_engine.spark import compat
from table_engine.spark.compat import default_parallelism, executor_memory, parse_memory
from table_engine.spark.jobs import compact_job
from table_engine.store.compaction.sort_compact import SortOrder

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def _table(warehouse: str, name: str, options: dict[str, str]) -> Any:
    t = Catalog(warehouse).create_table(f"db.{name}", SCHEMA, primary_keys=["id"],
                                        options={"bucket": "4", "write-only": "true", **options})
    for c in range(3):
        ids = list(range(c * 10, c * 10 + 40))
        t.write(pa.table({"id": pa.array(ids, pa.int64()), "v": [f"{c}-{i}" for i in ids]}, schema=SCHEMA))
    return t


def _listing(path: str) -> list[str]:
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs)


def test_tasks_run_through_map_in_arrow_and_report_where(spark, warehouse):
    t = _table(warehouse, "t", {})
    want = sorted(t.read().to_pylist(), key=lambda r: r["id"])
    report = compact_job.run_compaction(spark, t, full=True)
    assert report.snapshot_id == t.latest_snapshot().id and t.latest_snapshot().commit_kind == "COMPACT"
    assert len(report.tasks) == 2 and sum(r.buckets for r in report.tasks) == 4  # local[2]: 2 groups of 2
    assert len(report.executors) == 1 and all(r.seconds > 0 for r in report.tasks)  # local: one JVM
    assert sorted(t.read().to_pylist(), key=lambda r: r["id"]) == want
    names = {n for f in vars(compact_job).values() if inspect.isfunction(f) and f.__module__ == compact_job.__name__
             for n in f.__code__.co_names}
    assert not names & {"sparkContext", "rdd", "parallelize"}  # Spark Connect has neither


def test_parallelism_and_memory_come_from_the_conf(monkeypatch):
    class Conf:
        def __init__(self, values: dict[str, str]) -> None:
            self.values = values

        def get(self, key: str, default: str | None = None) -> str | None:
            return self.values.get(key, default)

    class Session:  # a session as Spark Connect has it: a conf, no sparkContext
        __module__ = "pyspark.sql.connect.session"  # what compat.is_connect looks at

        def __init__(self, **values: str) -> None:
            self.conf = Conf({k.replace("_", "."): v for k, v in values.items()})

        @property
        def sparkContext(self) -> Any:
            raise RuntimeError("no sparkContext on Spark Connect")

    def par(**conf: str) -> int:
        return default_parallelism(Session(**conf))  # type: ignore[arg-type]

    assert par(spark_default_parallelism="7", spark_master="local[2]") == 7
    assert (par(spark_master="local[3]"), par(spark_master="local"), par(spark_master="local[*]")) == (
        3, 1, os.cpu_count())
    assert par(spark_master="spark://h:7077", spark_cores_max="6") == 6
    assert par(spark_master="yarn", spark_executor_instances="3", spark_executor_cores="4") == 12
    monkeypatch.setattr(compat, "_probed_parallelism", lambda _spark: 5)  # nothing known: a spark.range measures
    assert par(spark_master="sc://h:15002") == 5
    assert (parse_memory("512m"), parse_memory("4g"), parse_memory("2048"), parse_memory("1x")) == (
        512 << 20, 4 << 30, 2048 << 20, None)
    def mem(**conf: str) -> tuple[int, str] | None:
        return executor_memory(Session(**conf))  # type: ignore[arg-type]

    assert mem(spark_master="spark://h:7077") == (1 << 30, "spark.executor.memory")  # Spark's default
    assert mem(spark_master="spark://h:7077", spark_executor_memory="3g") == (3 << 30, "spark.executor.memory")
    assert mem(spark_master="local[2]") is None
    assert mem(spark_master="local[2]", spark_driver_memory="2g") == (2 << 30, "spark.driver.memory")
    assert mem(spark_master="local[2]", spark_driver_memory="2g", spark_executor_pyspark_memory="300m") == (
        300 << 20, "spark.executor.pyspark.memory")


def test_a_bucket_merged_in_memory_that_would_not_fit_fails_before_any_task(spark, warehouse, monkeypatch):
    t = _table(warehouse, "dv", {"deletion-vectors.enabled": "true"})
    before, sid = _listing(t.path), t.latest_snapshot().id
    monkeypatch.setattr(compact_job, "executor_memory", lambda _spark: (4096, "spark.executor.memory"))
    with pytest.raises(CommandError, match=r"compaction of bucket \d of .*: 3 files of .* need about .* "
                                           r"\(deletion-vectors.enabled: merged in memory\), the executors have "
                                           r"4.0 KiB \(spark.executor.memory\): raise it$"):
        compact_job.compact_table(spark, t, full=True)
    assert _listing(t.path) == before and t.latest_snapshot().id == sid   # nothing written
    streamed = _table(warehouse, "plain", {})                              # streams: no limit applies
    assert compact_job.compact_table(spark, streamed, full=True) is not None


SORT_SCHEMA = pa.schema([("a", pa.int32()), ("b", pa.int32()), ("dt", pa.string())])


def _append_table(warehouse: str, name: str) -> Any:
    t = Catalog(warehouse).create_table(f"db.{name}", SORT_SCHEMA, partition_keys=["dt"],
                                        options={"bucket": "-1", "write-only": "true", "target-file-size": "2 kb"})
    for c in range(3):
        n = 600
        t.write(pa.table({"a": [(i * 7919 + c) % 997 for i in range(n)],
                          "b": [(i * 104729 + c) % 991 for i in range(n)],
                          "dt": ["d1" if i % 2 else "d2" for i in range(n)]}, schema=SORT_SCHEMA))
    return t


def test_a_sort_compaction_sorts_each_partition_in_a_task(spark, warehouse):
    t = _append_table(warehouse, "sorted")
    want = sorted(map(tuple, (r.values() for r in t.read().to_pylist())))
    files_before = sum(len(s.files) for s in t.plan(filter=[("a", "<", 100)]))
    report = compact_job.run_compaction(spark, t, order=SortOrder.parse("zorder", "a,b"))
    assert t.latest_snapshot().commit_kind == "COMPACT" and report.snapshot_id == t.latest_snapshot().id
    assert sum(r.buckets for r in report.tasks) == 2  # the two partitions, each sorted whole in one task
    assert sorted(map(tuple, (r.values() for r in t.read().to_pylist()))) == want
    assert sum(len(s.files) for s in t.plan(filter=[("a", "<", 100)])) < files_before


def test_a_sort_buffer_that_would_not_fit_fails_before_any_task(spark, warehouse, monkeypatch):
    t = _append_table(warehouse, "big")
    before, sid = _listing(t.path), t.latest_snapshot().id
    monkeypatch.setattr(compact_job, "executor_memory", lambda _spark: (4 << 20, "spark.executor.memory"))
    with pytest.raises(CommandError, match=r"sort of .*: write-buffer-size 256.0 MiB of rows needs about 1.0 GiB "
                                           r"of executor memory with the sort, the executors have 4.0 MiB "
                                           r"\(spark.executor.memory\): lower write-buffer-size"):
        compact_job.run_compaction(spark, t, order=SortOrder.parse("order", "a"))
    assert _listing(t.path) == before and t.latest_snapshot().id == sid
    small = Catalog(warehouse).get_table("db.big").copy({"write-buffer-size": "256 kb"})
    report = compact_job.run_compaction(spark, small, order=SortOrder.parse("order", "a"))  # spills: fits
    assert report.snapshot_id is not None
