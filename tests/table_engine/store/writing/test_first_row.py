"""first-row visibility (Paimon): batch reads skip level 0 of first-row tables, so writers compact with lookup at
every commit -- level 0 is pushed up and a key already stored above is dropped -- and every committed row is
visible at once; ``write-only`` leaves the rows invisible until a dedicated compaction. The changelog
(``changelog-producer`` lookup) holds one ``+I`` per new key and nothing else; ``none`` writes no changelog."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import Catalog
from table_engine.store.context import StoreContext
from table_engine.store.reading.scan import live_entries
from table_engine.table import Table
from tests.budget import examples
from tests.table_engine.store.changelog_support import all_changes, apply_changes, changelogs

SCHEMA = pa.schema([("dt", pa.string()), ("k", pa.int64()), ("v", pa.string())])
Row = dict[str, Any]


def make(tmp_path: Path, partitioned: bool = True, **options: str) -> Table:
    return Catalog(str(tmp_path)).create_table(
        "db.t", SCHEMA, primary_keys=["dt", "k"] if partitioned else ["k"],
        partition_keys=["dt"] if partitioned else [], options={"merge-engine": "first-row", **options})


def rows(t: Table) -> list[Row]:
    return sorted(t.read().to_pylist(), key=lambda r: (r["dt"], r["k"]))


def first_rows(batches: list[list[Row]], key: tuple[str, ...] = ("dt", "k")) -> list[Row]:
    first: dict[tuple[Any, ...], Row] = {}
    for batch in batches:
        for r in batch:
            first.setdefault(tuple(r[c] for c in key), r)
    return sorted(first.values(), key=lambda r: (r["dt"], r["k"]))


def levels_and_rows(t: Table) -> tuple[list[int], int]:
    """Levels of the live data files and their total row count."""
    entries = live_entries(t.file_io, t.path, t.latest_snapshot())
    return sorted(e.file.level for e in entries), sum(e.file.row_count for e in entries)


def batch(commit: int, keys: list[tuple[str, int]]) -> list[Row]:
    return [{"dt": dt, "k": k, "v": f"c{commit}-{i}"} for i, (dt, k) in enumerate(keys)]


def context(t: Table) -> StoreContext:
    return StoreContext(t.file_io, t.path, t.schema, t.options)


def test_batch_scans_of_first_row_tables_skip_level0(tmp_path: Path) -> None:
    first_row = context(make(tmp_path))
    assert first_row.batch_scan_skip_level0()
    assert first_row.need_lookup()
    dedup = context(make(tmp_path / "dedup", **{"merge-engine": "deduplicate"}))
    assert not dedup.batch_scan_skip_level0()
    assert not dedup.need_lookup()


@pytest.mark.parametrize("partitioned", [True, False], ids=["partitioned", "unpartitioned"])
def test_every_commit_is_visible_with_default_options(tmp_path: Path, partitioned: bool) -> None:
    t = make(tmp_path, partitioned)
    key = ("dt", "k") if partitioned else ("k",)
    commits = [batch(0, [("a", 1), ("a", 2), ("b", 1), ("a", 1)]),
               batch(1, [("a", 2), ("a", 3), ("b", 1)]),
               batch(2, [("b", 2), ("a", 3), ("a", 1), ("b", 3)])]
    for i, c in enumerate(commits):
        t.write(pa.Table.from_pylist(c, schema=SCHEMA))
        expected = first_rows(commits[:i + 1], key)
        assert rows(t) == expected
        levels, stored = levels_and_rows(t)
        assert levels and min(levels) > 0  # level 0 was compacted up by the writer
        assert stored == len(expected)  # each key is stored once above level 0


def test_write_only_rows_stay_invisible_until_a_dedicated_compaction(tmp_path: Path) -> None:
    t = make(tmp_path, **{"write-only": "true"})
    t.write(pa.Table.from_pylist(batch(0, [("a", 1), ("b", 2)]), schema=SCHEMA))
    assert levels_and_rows(t)[0] == [0, 0]
    assert t.read().num_rows == 0
    assert t.plan() == []
    sid = t.maintenance.compact()
    assert sid is not None
    assert rows(t) == first_rows([batch(0, [("a", 1), ("b", 2)])])
    t.write(pa.Table.from_pylist(batch(1, [("a", 1), ("a", 3)]), schema=SCHEMA))
    assert rows(t) == first_rows([batch(0, [("a", 1), ("b", 2)])])  # the new key is on level 0 still
    t.maintenance.compact()
    assert rows(t) == first_rows([batch(0, [("a", 1), ("b", 2)]), batch(1, [("a", 1), ("a", 3)])])
    assert min(levels_and_rows(t)[0]) > 0


def test_first_row_splits_skip_level0_and_are_merged(tmp_path: Path) -> None:
    t = make(tmp_path, **{"write-only": "true"})
    t.write(pa.Table.from_pylist(batch(0, [("a", 1), ("a", 2)]), schema=SCHEMA))
    t.maintenance.compact(full=True)
    t.write(pa.Table.from_pylist(batch(1, [("a", 3)]), schema=SCHEMA))
    splits = t.plan()
    assert [(f.level, s.raw) for s in splits for f in s.files] == [(5, False)]


def test_lookup_changelog_has_inserts_of_new_keys_only(tmp_path: Path) -> None:
    t = make(tmp_path, **{"changelog-producer": "lookup", "bucket": "2"})
    commits = [batch(0, [("a", 1), ("a", 2), ("a", 1)]),
               batch(1, [("a", 2), ("a", 3), ("b", 1)]),
               batch(2, [("a", 3), ("a", 1), ("b", 1)])]
    for c in commits:
        t.write(pa.Table.from_pylist(c, schema=SCHEMA))
    t.maintenance.compact(full=True)
    t.write(pa.Table.from_pylist(batch(3, [("a", 1), ("b", 2)]), schema=SCHEMA))
    commits.append(batch(3, [("a", 1), ("b", 2)]))
    changes = all_changes(t)
    assert {c[0] for c in changes} == {"+I"}
    expected = first_rows(commits)
    assert sorted(changes, key=lambda c: (c[1], c[2])) == [("+I", r["dt"], r["k"], r["v"]) for r in expected]
    assert apply_changes(changes, key_width=2) == {(r["dt"], r["k"]): (r["dt"], r["k"], r["v"]) for r in expected}
    assert rows(t) == expected


def test_no_changelog_without_a_producer(tmp_path: Path) -> None:
    t = make(tmp_path)
    t.write(pa.Table.from_pylist(batch(0, [("a", 1)]), schema=SCHEMA))
    t.write(pa.Table.from_pylist(batch(1, [("a", 1), ("a", 2)]), schema=SCHEMA))
    assert changelogs(t) == {}


_KEYS = st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 7))


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(commits=st.lists(st.lists(_KEYS, min_size=1, max_size=8), min_size=1, max_size=5),
       bucket=st.sampled_from(["-1", "2"]), producer=st.sampled_from(["none", "lookup"]),
       tiny_buffer=st.booleans(), full_at=st.integers(-1, 4))
def test_reads_match_a_first_row_model_after_every_commit(
        tmp_path_factory: pytest.TempPathFactory, commits: list[list[tuple[str, int]]], bucket: str, producer: str,
        tiny_buffer: bool, full_at: int) -> None:
    options = {"bucket": bucket, "changelog-producer": producer}
    if tiny_buffer:  # a flush per write call: several level-0 runs per commit
        options["write-buffer-size"] = "1 b"
    t = make(tmp_path_factory.mktemp("wh"), **options)
    written: list[list[Row]] = []
    for i, keys in enumerate(commits):
        b = batch(i, keys)
        written.append(b)
        writer = t.new_write()
        for r in b:
            writer.write(pa.Table.from_pylist([r], schema=SCHEMA))
        t.new_commit().commit(writer.prepare_commit())
        if i == full_at:
            t.maintenance.compact(full=True)
        expected = first_rows(written)
        assert rows(t) == expected
        levels, stored = levels_and_rows(t)
        assert min(levels) > 0 and stored == len(expected)
    if producer == "lookup":
        changes = all_changes(t)
        assert {c[0] for c in changes} == {"+I"}
        assert apply_changes(changes, key_width=2) == {(r["dt"], r["k"]): (r["dt"], r["k"], r["v"])
                                                       for r in first_rows(written)}


def test_overwrite_is_visible_at_once(tmp_path: Path) -> None:
    t = make(tmp_path)
    t.write(pa.Table.from_pylist(batch(0, [("a", 1), ("b", 2)]), schema=SCHEMA))
    t.write(pa.Table.from_pylist(batch(1, [("a", 3), ("a", 3)]), schema=SCHEMA), overwrite=True)
    assert rows(t) == [{"dt": "a", "k": 3, "v": "c1-0"}, {"dt": "b", "k": 2, "v": "c0-1"}]
    t.write(pa.Table.from_pylist(batch(2, [("a", 4)]), schema=SCHEMA), partition={"dt": "a"})
    assert rows(t) == [{"dt": "a", "k": 4, "v": "c2-0"}, {"dt": "b", "k": 2, "v": "c0-1"}]
    assert min(levels_and_rows(t)[0]) > 0


def _stream(t: Table, then_write: pa.Table) -> list[list[tuple[str, int, str]]]:
    scan = t.new_stream_scan()
    out = []

    def read(plan: Any) -> list[tuple[str, int, str]]:
        return [(r["rowkind"], r["k"], r["v"]) for b in scan.read(plan) for r in b.to_pylist()]

    out.append(read(scan.plan()))
    t.write(then_write)
    while (plan := scan.plan()) is not None:
        out.append(read(plan))
    return out


@pytest.mark.parametrize("producer", ["none", "lookup"])
def test_stream_reads_see_level0_and_only_lookup_gives_new_keys_only(tmp_path: Path, producer: str) -> None:
    """As Paimon: the full phase of a stream read includes level 0 (without a producer) and then follows each APPEND
    snapshot's new files, which repeat keys written again; the lookup changelog has the new keys only."""
    t = make(tmp_path, partitioned=False, **{"changelog-producer": producer})
    t.write(pa.Table.from_pylist(batch(0, [("a", 1), ("a", 2)]), schema=SCHEMA))
    got = _stream(t, pa.Table.from_pylist(batch(1, [("a", 1), ("a", 3)]), schema=SCHEMA))
    first = [("+I", 1, "c0-0"), ("+I", 2, "c0-1")]
    if producer == "none":
        assert got == [first, [("+I", 1, "c1-0"), ("+I", 3, "c1-1")]]
    else:
        assert got == [first, [("+I", 3, "c1-1")]]


def test_rows_of_writers_that_compacted_one_bucket_are_visible(tmp_path: Path) -> None:
    """Two writers of one commit compacting the same bucket: their compactions are dropped, so the commit's level 0
    is compacted right after it (else its rows would be invisible)."""
    t = make(tmp_path, partitioned=False, bucket="1")
    t.write(pa.Table.from_pylist(batch(0, [("a", 1)]), schema=SCHEMA))
    w1, w2 = t.new_write(), t.new_write()
    w1.write(pa.Table.from_pylist(batch(1, [("a", 1), ("a", 2)]), schema=SCHEMA))
    w2.write(pa.Table.from_pylist(batch(2, [("a", 3)]), schema=SCHEMA))
    committer = t.new_commit()
    appended = committer.commit(w1.prepare_commit() + w2.prepare_commit())
    assert [bucket for _, bucket in committer.dropped_compactions] == [0]
    assert t.read(snapshot_id=appended).num_rows == 1  # the APPEND snapshot's level 0 is invisible
    w3, w4 = t.new_write(), t.new_write()
    w3.write(pa.Table.from_pylist(batch(3, [("a", 4)]), schema=SCHEMA))
    w4.write(pa.Table.from_pylist(batch(4, [("a", 2), ("a", 5)]), schema=SCHEMA))
    sid = t.commit(w3.prepare_commit() + w4.prepare_commit())
    assert sid is not None and t.snapshot(sid).commit_kind.value == "COMPACT"
    assert [r["k"] for r in rows(t)] == [1, 2, 3, 4, 5]
    assert [r["v"] for r in rows(t)] == ["c0-0", "c1-1", "c2-0", "c3-0", "c4-1"]
    assert min(levels_and_rows(t)[0]) > 0
