"""Manifest merging and full compaction: reads stay equal to a model, the manifest count stays bounded across many
commits, manifests are ordered by partition with exact partition statistics.

Commits carry metadata of data files that are never written (planning only reads manifests)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.format.binary_row import decode_row, encode_row
from table_engine.format.data_file_meta import EMPTY_ROW, DataFileMeta, SimpleStats
from table_engine.format.manifest import read_manifest
from table_engine.format.manifest_list import ManifestFileMeta
from table_engine.io.paths import manifest_path
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.reading.scan import read_manifest_metas
from table_engine.table import Table
from table_engine.types import parse_type
from tests.budget import examples

SCHEMA = pa.schema([("p", pa.int32()), ("id", pa.int64())])
INT = [parse_type("INT")]
BUCKETS = 2


def _table(path: Path, **options: str) -> Table:
    catalog = Catalog(str(path))
    catalog.create_database("db", ignore_if_exists=True)
    return catalog.create_table("db.t", SCHEMA, partition_keys=["p"],
                                options={"bucket": str(BUCKETS), "bucket-key": "id", **options})


def _file() -> DataFileMeta:
    return DataFileMeta(f"data-{uuid.uuid4()}-0.parquet", 100, 1, EMPTY_ROW, EMPTY_ROW, SimpleStats.EMPTY,
                        SimpleStats.EMPTY, 0, 0, 0, 0)


Cell = tuple[int | None, int]  # (partition value, bucket)


def _commit(t: Table, adds: list[Cell], deletes: list[tuple[Cell, DataFileMeta]]) -> list[tuple[Cell, DataFileMeta]]:
    messages: dict[Cell, CommitMessage] = {}

    def msg(cell: Cell) -> CommitMessage:
        if cell not in messages:
            messages[cell] = CommitMessage(encode_row([cell[0]], INT), cell[1], BUCKETS)
        return messages[cell]

    added = []
    for cell in adds:
        f = _file()
        msg(cell).new_files.append(f)
        added.append((cell, f))
    for cell, f in deletes:
        msg(cell).compact_before.append(f)
    if messages:
        t.new_commit().commit(list(messages.values()))
    return added


def _planned(t: Table, flt: Any = None) -> set[tuple[Cell, str]]:
    return {((s.partition_values[0], s.bucket), f.file_name) for s in t.plan(flt) for f in s.files}


def _metas(t: Table) -> list[ManifestFileMeta]:
    snap = t.latest_snapshot()
    return [] if snap is None else read_manifest_metas(t.file_io, t.path, snap)


def _sort_key(v: int | None) -> tuple[bool, int]:
    return (v is None, v or 0)


def _check_manifests(t: Table) -> None:
    """Each manifest: entries ordered by partition value (nulls last), exact partition stats."""
    for m in _metas(t):
        entries = read_manifest(t.file_io, manifest_path(t.path, m.file_name))
        values = [decode_row(e.partition, INT)[0] for e in entries]
        assert values == sorted(values, key=_sort_key), m.file_name
        present = [v for v in values if v is not None]
        lo = decode_row(m.partition_stats.min_values, INT)[0]
        hi = decode_row(m.partition_stats.max_values, INT)[0]
        assert (lo, hi) == ((min(present), max(present)) if present else (None, None))
        assert m.partition_stats.null_counts == [values.count(None)]


ops = st.lists(st.tuples(st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 6)), st.integers(0, BUCKETS - 1)),
                                  max_size=6),
                         st.lists(st.integers(0, 1000), max_size=3)), min_size=1, max_size=12)


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops, st.sampled_from([("3", "2kb", "4kb"), ("2", "8mb", "16mb"), ("5", "1kb", "1kb")]))
def test_merged_manifests_read_as_the_model(tmp_path_factory: Any, commits: list[tuple[list[Cell], list[int]]],
                                            sizes: tuple[str, str, str]) -> None:
    min_count, target, full = sizes
    t = _table(tmp_path_factory.mktemp("t"), **{"manifest.merge-min-count": min_count,
                                               "manifest.target-file-size": target,
                                               "manifest.full-compaction-threshold-size": full})
    live: list[tuple[Cell, DataFileMeta]] = []
    for adds, picks in commits:
        gone = [live[i % len(live)] for i in dict.fromkeys(picks)] if live else []
        gone = list({f.file_name: (c, f) for c, f in gone}.values())
        live = [x for x in live if x not in gone] + _commit(t, adds, gone)
        t = t.refresh()
        assert _planned(t) == {(c, f.file_name) for c, f in live}
        for p in (None, 0, 3):
            flt = [("p", "is null")] if p is None else [("p", "=", p)]
            assert _planned(t, flt) == {(c, f.file_name) for c, f in live if c[0] == p}
    _check_manifests(t)


def test_manifest_count_stays_bounded_across_many_commits(tmp_path: Path) -> None:
    t = _table(tmp_path, **{"manifest.merge-min-count": "10"})
    counts = []
    for i in range(200):
        _commit(t, [(i % 7, i % BUCKETS)], [])
        counts.append(len(_metas(t)))
    assert max(counts) <= 10
    assert len(_planned(t)) == 200
    _check_manifests(t)


def test_full_compaction_rewrites_manifests_into_disjoint_partition_ranges(tmp_path: Path) -> None:
    t = _table(tmp_path, **{"manifest.merge-min-count": "1000", "manifest.target-file-size": "24kb",
                            "manifest.full-compaction-threshold-size": "30kb"})
    for i in range(12):  # each commit touches every partition: its manifest spans them all
        _commit(t, [(p, i % BUCKETS) for p in range(100)], [])
    live = _planned(t)
    metas = _metas(t)
    assert len(metas) < 12  # full compaction happened
    _check_manifests(t)
    merged = [m for m in metas if m.num_added_files > 100]  # rolled by full compaction (a delta has 100 entries)
    ranges = sorted((decode_row(m.partition_stats.min_values, INT)[0], decode_row(m.partition_stats.max_values,
                                                                                  INT)[0]) for m in merged)
    assert len(ranges) > 1
    for (_, hi), (lo, _) in zip(ranges, ranges[1:]):
        assert hi <= lo  # neighbours share at most a boundary partition
    assert live == _planned(t)
