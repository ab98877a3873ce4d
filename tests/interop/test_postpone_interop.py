"""Postpone bucket tables (``bucket`` = -2) between pypaimon 2.1.0 and the engine.

pypaimon writes a postpone table in three commits (inserts, updates, deletes through ``rowkind.field``; its batch
write builder stages the rows in ``bucket-postpone`` as Avro files): the engine reads nothing before its compaction,
then the rows of the dict model; it expires the older snapshots and pypaimon reads the model. The reverse: the
engine's own postpone table reads empty in pypaimon until the engine compacts it, then as the model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.format.snapshot import CommitKind
from table_engine.store.reading.scan import live_entries
from tests.interop.conftest import PypaimonClient

pytestmark = pytest.mark.interop

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.string()), ("k", pa.string())])
KEYS = ["dt", "id"]
Model = dict[tuple[str, int], str]


def _batch(rows: list[tuple[str, int, str, str]]) -> pa.Table:
    return pa.table({"dt": [r[0] for r in rows], "id": [r[1] for r in rows], "v": [r[2] for r in rows],
                     "k": [r[3] for r in rows]}, schema=SCHEMA)


BATCHES = [
    _batch([(d, i, f"v0-{d}-{i}", "+I") for d in ("a", "b") for i in range(20)]),
    _batch([("a", i, f"v1-{i}", "+U") for i in range(0, 20, 2)] + [("c", i, f"v1-c{i}", "+I") for i in range(5)]),
    _batch([("a", i, "", "-D") for i in range(1, 20, 4)] + [("b", 3, "v2-b3", "+U"), ("a", 0, "v2-a0", "+U")]),
]


def _model(batches: list[pa.Table]) -> Model:
    out: Model = {}
    for b in batches:
        for r in b.to_pylist():
            if r["k"] == "-D":
                out.pop((r["dt"], r["id"]), None)
            else:
                out[(r["dt"], r["id"])] = r["v"]
    return out


def _rows(t: pa.Table) -> Model:
    return {(r["dt"], r["id"]): r["v"] for r in t.to_pylist()}


def test_pypaimon_postpone_table_published_by_engine_compaction(pypaimon: PypaimonClient, tmp_path: Path) -> None:
    options = {"bucket": "-2", "rowkind.field": "k", "postpone.default-bucket-num": "2"}
    pypaimon.write(tmp_path, "db.t", SCHEMA, KEYS, ["dt"], options, BATCHES)
    t = Catalog(str(tmp_path)).get_table("db.t")
    entries = live_entries(t.file_io, t.path, t.latest_snapshot())
    assert entries and {e.bucket for e in entries} == {-2}
    assert all(e.file.file_name.endswith(".avro") for e in entries)
    assert t.read().num_rows == 0  # as pypaimon and Paimon: invisible until compacted
    sid = t.maintenance.compact()
    assert sid is not None and t.snapshot(sid).commit_kind is CommitKind.COMPACT
    expected = _model(BATCHES)
    assert _rows(t.read()) == expected
    assert {e.bucket for e in live_entries(t.file_io, t.path, t.latest_snapshot())} <= {0, 1}
    t.expire_snapshots(retain_min=1, retain_max=1)
    assert [s.id for s in t.snapshots()] == [sid]
    assert _rows(pypaimon.read(tmp_path, "db.t")) == expected


def test_engine_postpone_table_read_by_pypaimon(pypaimon: PypaimonClient, tmp_path: Path) -> None:
    t = Catalog(str(tmp_path)).create_table("db.t", SCHEMA, primary_keys=KEYS, partition_keys=["dt"],
                                            options={"bucket": "-2", "rowkind.field": "k"})
    for b in BATCHES:
        t.write(b)
    before = t.latest_snapshot_id()
    assert t.maintenance.compact() is not None
    expected = _model(BATCHES)
    assert _rows(t.read()) == expected
    results: list[Any] = pypaimon.read_many(tmp_path, "db.t", [{"snapshot": before}, {}])
    assert results[0].num_rows == 0
    assert _rows(results[1]) == expected
