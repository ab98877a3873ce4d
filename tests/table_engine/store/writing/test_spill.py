"""``write-buffer-spillable``: a full buffer is spilled as a sorted run to a local file, and the spilled runs are
merged by streaming into level-0 files at flush. Spilled writes read equal to in-memory writes (hypothesis, tiny
``write-buffer-size``, several buckets and partitions, every merge of spilled runs), with fewer level-0 files; the
spill files are gone after the commit and after an abort."""

from __future__ import annotations

import os
import tempfile
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.table import Table
from tests.budget import examples

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("dt", pa.string(), nullable=False),
                    pa.field("v", pa.int64())])
ENGINES = {
    "deduplicate": {},
    "partial-update": {"merge-engine": "partial-update"},
    "aggregation": {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"},
    "changelog-input": {"changelog-producer": "input"},
}
ROWS = st.lists(st.tuples(st.integers(0, 20), st.sampled_from(["a", "b"]), st.one_of(st.none(), st.integers(-5, 5))),
                min_size=1, max_size=12)


def batch(rows: list[tuple[int, str, int | None]]) -> pa.Table:
    return pa.table({"id": pa.array([r[0] for r in rows], pa.int64()), "dt": [r[1] for r in rows],
                     "v": pa.array([r[2] for r in rows], pa.int64())}, schema=SCHEMA)


def make(warehouse: str, name: str, engine: str, options: dict[str, str]) -> Table:
    return Catalog(warehouse).create_table(f"db.{name}", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                           options={"bucket": "2", "write-only": "true", **ENGINES[engine],
                                                    **options})


def rows_of(t: Table) -> list[dict[str, Any]]:
    return sorted(t.read().to_pylist(), key=lambda r: (r["dt"], r["id"]))


def level0_files(t: Table) -> int:
    return sum(1 for s in t.plan() for f in s.files if f.level == 0)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(engine=st.sampled_from(sorted(ENGINES)), commits=st.lists(st.lists(ROWS, min_size=1, max_size=5), min_size=1,
                                                                 max_size=3),
       buffer=st.sampled_from(["1 b", "200 b", "2 kb"]), handles=st.sampled_from(["2", "3", "128"]),
       disk=st.sampled_from([None, "1 b", "4 kb"]))
def test_spilled_writes_equal_in_memory_writes(engine: str, commits: list[list[list[tuple[int, str, int | None]]]],
                                               buffer: str, handles: str, disk: str | None) -> None:
    with tempfile.TemporaryDirectory() as warehouse:
        plain = make(warehouse, "plain", engine, {"write-buffer-size": buffer})
        opts = {"write-buffer-size": buffer, "write-buffer-spillable": "true",
                "local-sort.max-num-file-handles": handles}
        if disk is not None:
            opts["write-buffer-spill.max-disk-size"] = disk
        spilled = make(warehouse, "spilled", engine, opts)
        for calls in commits:
            for t in (plain, spilled):
                w = t.new_write()
                for rows in calls:
                    w.write(batch(rows))
                spill_dir = w._spill.directory if w._spill is not None else None
                t.commit(w.prepare_commit())
                if spill_dir is not None:
                    assert not os.path.exists(spill_dir)
                assert w._spill is None or w._spill.directory is None
        assert rows_of(spilled) == rows_of(plain)
        assert level0_files(spilled) <= level0_files(plain)


def test_spilling_keeps_one_sorted_run_per_bucket_and_abort_removes_spill_files(tmp_path: Any) -> None:
    t = Catalog(str(tmp_path)).create_table("db.t", SCHEMA, primary_keys=["id", "dt"], options={
        "bucket": "1", "write-only": "true", "write-buffer-size": "1 b", "write-buffer-spillable": "true"})
    w = t.new_write()
    for i in range(5):
        w.write(batch([(k, "a", i) for k in range(i, i + 10)]))
    assert w._spill is not None and len(w._spill) == 5
    spill_dir = w._spill.directory
    assert spill_dir is not None and len(os.listdir(spill_dir)) == 5
    t.commit(w.prepare_commit())
    assert not os.path.exists(spill_dir)
    assert level0_files(t) == 1  # five buffers, one merged sorted run
    assert rows_of(t) == [{"id": k, "dt": "a", "v": min(k, 4)} for k in range(14)]

    w = t.new_write()
    w.write(batch([(99, "a", 1)]))
    w.write(batch([(98, "a", 1)]))
    spill_dir = w._spill.directory
    assert spill_dir is not None and os.listdir(spill_dir)
    w.abort()
    assert not os.path.exists(spill_dir)
    assert [r["id"] for r in rows_of(t)] == list(range(14))
