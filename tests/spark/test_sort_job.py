"""The Spark sort compaction of a partition cut into ranges (table_engine.spark.jobs.sort_job): sampled boundaries,
rows routed through a Spark range repartition, each range sorted by one task; the partition reads sorted across its
files, the same rows (deletion vectors applied), one COMPACT snapshot, sequence numbers in range order."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.core_enums import OrderType
from table_engine.format.snapshot import CommitKind
from table_engine.sort.keys import sort_indices
from table_engine.spark.jobs import compact_job, sort_job
from table_engine.store.compaction.compact import BucketFiles
from table_engine.store.compaction.sort_compact import SortOrder
from tests.table_engine.store.compaction.test_append_compact import delete_rows, dv_entries

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([("a", pa.int64()), ("b", pa.int64()), ("s", pa.string()), ("dt", pa.string())])


def _table(warehouse: str, name: str, **options: str) -> Any:
    t = Catalog(warehouse).create_table(f"db.{name}", SCHEMA, partition_keys=["dt"], options={
        "bucket": "-1", "write-only": "true", "target-file-size": "16 kb", **options})
    rng = random.Random(name)
    for batch in range(6):
        n = 2000
        pairs = rng.sample(range(10 ** 6), n)  # unique keys: one order, whatever the tie-breaking
        t.write(pa.table({"a": [p // 1000 for p in pairs], "b": [p % 1000 for p in pairs],
                          "s": [f"s{batch}-{i}" for i in range(n)],
                          "dt": ["big"] * (n - 50) + ["small"] * 50}, schema=SCHEMA))
    return t


def _rows(t: Any, dt: str) -> list[tuple[Any, ...]]:
    """The partition's rows in file order (files by sequence number), as a reader meets them."""
    split = next(s for s in t.plan() if s.partition_values[0] == dt)
    files = sorted(split.files, key=lambda f: f.min_sequence_number)
    seqs = [(f.min_sequence_number, f.max_sequence_number, f.row_count) for f in files]
    assert all(hi - lo + 1 == n for lo, hi, n in seqs) and all(a[1] + 1 == b[0] for a, b in zip(seqs, seqs[1:]))
    table = t.read(filter=[("dt", "=", dt)])
    return [tuple(r.values()) for r in table.to_pylist()]


class _Sized:
    def __init__(self, size: int) -> None:
        self.file_size = size


@pytest.mark.parametrize("strategy", ["order", "zorder", "hilbert"])
def test_a_partition_cut_into_ranges_reads_sorted_across_its_files(spark, warehouse, strategy):
    t = _table(warehouse, f"r_{strategy}", **{"deletion-vectors.enabled": "true"})
    first = sorted((f for s in t.plan() for f in s.files), key=lambda f: f.min_sequence_number)[0]
    delete_rows(t, {first.file_name: [0, 5, 9]})
    before = Counter(tuple(r.values()) for r in t.read().to_pylist())
    report = compact_job.run_compaction(spark, t, order=SortOrder.parse(strategy, "a,b"), parallelism=3,
                                        range_bytes=1)
    snap = t.latest_snapshot()
    assert snap.commit_kind == CommitKind.COMPACT and report.snapshot_id == snap.id
    assert len(report.tasks) >= 3  # the big partition's ranges (the small one gets one), a task report each
    assert Counter(tuple(r.values()) for r in t.read().to_pylist()) == before and dv_entries(t) == []
    for dt in ("big", "small"):
        got = _rows(t, dt)
        rows = pa.Table.from_pylist([dict(zip(SCHEMA.names, r, strict=True)) for r in got], schema=SCHEMA)
        expected = rows.take(sort_indices(rows, OrderType(strategy), ["a", "b"]))
        assert got == [tuple(r.values()) for r in expected.to_pylist()], dt


def test_ranges_follow_the_bytes_and_the_cores():
    def plan(*sizes: int) -> list[BucketFiles]:
        return [BucketFiles(b"", 0, -1, (_Sized(s),)) for s in sizes]  # type: ignore[arg-type]

    assert sort_job.plan_ranges(plan(100, 100), parallelism=8, range_bytes=10) == [4, 4]
    assert sort_job.plan_ranges(plan(1000, 10), parallelism=4, range_bytes=100) == [4, 1]
    assert sort_job.plan_ranges(plan(1000, 10), parallelism=4, range_bytes=2000) == [1, 1]
    assert sort_job.plan_ranges(plan(300), parallelism=8, range_bytes=100) == [3]


def test_small_partitions_are_sorted_whole_in_tasks(spark, warehouse):
    t = _table(warehouse, "whole")
    report = compact_job.run_compaction(spark, t, order=SortOrder.parse("zorder", "a,b"), parallelism=2)
    assert sum(r.buckets for r in report.tasks) == 2  # the default range bytes: each partition in one task
