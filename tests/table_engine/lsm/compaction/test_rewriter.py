"""The rewriter on in-memory files: upgrade vs rewrite, merging, dropping deletes, per-file rewrites."""

from __future__ import annotations

import dataclasses

import pyarrow as pa

from table_engine.lsm.compaction.rewriter import CompactRewriter
from table_engine.lsm.compaction.universal import CompactUnit
from table_engine.lsm.key_value import SEQUENCE_NUMBER, VALUE_KIND
from table_engine.lsm.merge_engines import DeduplicateMerge
from table_engine.lsm.sort import MergeOrder
from tests.table_engine.lsm._files import CODEC, MemoryFiles, kv

MIN_SIZE = 100  # files of at least 100 bytes may be upgraded
MAX_LEVEL = 5


def rewriter(files: MemoryFiles, force: bool = False) -> CompactRewriter:
    return CompactRewriter(CODEC, files.read, files.write, DeduplicateMerge(), MergeOrder(("k",)), MIN_SIZE, MAX_LEVEL,
                           force_rewrite_all=force)


def rows(t: pa.Table) -> list[tuple[int, str | None, int]]:
    return list(zip(t.column("k").to_pylist(), t.column("v").to_pylist(), t.column(VALUE_KIND).to_pylist()))


def test_large_lone_file_is_upgraded_not_rewritten() -> None:
    fs = MemoryFiles()
    big = fs.add(kv([1, 2, 3], ["a", "b", "c"], [0, 1, 2]), size=500)
    result = rewriter(fs).compact(CompactUnit(3, (big,)), drop_delete=False)
    assert result.before == [big]
    assert [(f.file_name, f.level) for f in result.after] == [(big.file_name, 3)]
    assert fs.written == []


def test_overlapping_files_are_merged_newest_wins() -> None:
    fs = MemoryFiles()
    old = fs.add(kv([1, 2, 3], ["a", "b", "c"], [0, 1, 2]), size=500)
    new = fs.add(kv([2, 4], ["B", "d"], [3, 4]), size=500)
    result = rewriter(fs).compact(CompactUnit(2, (new, old)), drop_delete=False)
    assert sorted(f.file_name for f in result.before) == sorted([old.file_name, new.file_name])
    assert len(result.after) == 1 and result.after[0].level == 2
    out = fs.read(result.after[0])
    assert rows(out) == [(1, "a", 0), (2, "B", 0), (3, "c", 0), (4, "d", 0)]
    assert out.column(SEQUENCE_NUMBER).to_pylist() == [0, 3, 2, 4]
    meta = result.after[0]
    assert (meta.min_sequence_number, meta.max_sequence_number, meta.row_count) == (0, 4, 4)


def test_small_files_are_rewritten_with_their_neighbours_large_ones_upgraded() -> None:
    fs = MemoryFiles()
    s1 = fs.add(kv([1, 2], ["a", "b"], [0, 1]), size=10)
    s2 = fs.add(kv([5, 6], ["e", "f"], [2, 3]), size=10)
    big = fs.add(kv([10, 11], ["x", "y"], [4, 5]), size=500)
    s3 = fs.add(kv([20], ["z"], [6]), size=10)
    result = rewriter(fs).compact(CompactUnit(4, (s1, s2, big, s3)), drop_delete=False)
    upgraded = [f for f in result.after if f.file_name == big.file_name]
    assert [f.level for f in upgraded] == [4]
    rewritten = [f for f in result.after if f.file_name != big.file_name]
    # s1 + s2 rewritten together; s3, alone after the large file, is upgraded (nothing to merge with)
    assert len(rewritten) == 2
    merged = next(f for f in rewritten if f in fs.written)
    assert rows(fs.read(merged)) == [(1, "a", 0), (2, "b", 0), (5, "e", 0), (6, "f", 0)]
    assert (s3.file_name, 4) in {(f.file_name, f.level) for f in result.after}


def test_deletes_are_dropped_only_when_asked() -> None:
    fs = MemoryFiles()
    old = fs.add(kv([1, 2, 3], ["a", "b", "c"], [0, 1, 2]), size=500)
    new = fs.add(kv([2, 3], [None, "C"], [3, 4], kinds=[3, 1]), size=500)
    kept = rewriter(fs).compact(CompactUnit(2, (new, old)), drop_delete=False)
    assert rows(fs.read(kept.after[0])) == [(1, "a", 0), (2, None, 3), (3, "C", 1)]
    assert kept.after[0].delete_row_count == 2
    dropped = rewriter(fs).compact(CompactUnit(5, (new, old)), drop_delete=True)
    assert rows(fs.read(dropped.after[0])) == [(1, "a", 0)]
    assert dropped.after[0].delete_row_count == 0


def test_files_with_deletes_are_rewritten_on_their_way_to_the_max_level() -> None:
    fs = MemoryFiles()
    with_deletes = fs.add(kv([1, 2], ["a", None], [0, 1], kinds=[0, 3]), size=500)
    up = rewriter(fs).compact(CompactUnit(3, (with_deletes,)), drop_delete=False)
    assert [(f.file_name, f.level) for f in up.after] == [(with_deletes.file_name, 3)]  # below the max: upgrade
    top = rewriter(fs).compact(CompactUnit(MAX_LEVEL, (with_deletes,)), drop_delete=True)
    assert top.after[0].file_name != with_deletes.file_name
    assert rows(fs.read(top.after[0])) == [(1, "a", 0)]
    unknown = fs.add(kv([7], ["q"], [9]), size=500)
    unknown = dataclasses.replace(unknown, delete_row_count=None)  # an old writer: count unknown
    out = rewriter(fs).compact(CompactUnit(MAX_LEVEL, (unknown,)), drop_delete=True)
    assert out.after[0].file_name != unknown.file_name


def test_a_file_already_at_the_output_level_stays_unless_forced() -> None:
    fs = MemoryFiles()
    top = fs.add(kv([1, 2], ["a", "b"], [0, 1]), level=MAX_LEVEL, size=500)
    assert rewriter(fs).compact(CompactUnit(MAX_LEVEL, (top,)), drop_delete=True).is_empty()
    forced = rewriter(fs, force=True).compact(CompactUnit(MAX_LEVEL, (top,)), drop_delete=True)
    assert forced.before == [top] and forced.after[0].file_name != top.file_name


def test_file_rewrite_units_rewrite_each_file_alone() -> None:
    fs = MemoryFiles()
    a = fs.add(kv([1, 2], ["a", "b"], [0, 1]), level=MAX_LEVEL, size=500)
    b = fs.add(kv([5, 6], ["e", "f"], [2, 3]), level=MAX_LEVEL, size=500)
    result = rewriter(fs).compact(CompactUnit(MAX_LEVEL, (a, b), file_rewrite=True), drop_delete=True)
    assert result.before == [a, b]
    assert [rows(fs.read(f)) for f in result.after] == [[(1, "a", 0), (2, "b", 0)], [(5, "e", 0), (6, "f", 0)]]


def test_everything_deleted_writes_no_file() -> None:
    fs = MemoryFiles()
    old = fs.add(kv([1], ["a"], [0]), size=500)
    gone = fs.add(kv([1], [None], [1], kinds=[3]), size=500)
    result = rewriter(fs).compact(CompactUnit(MAX_LEVEL, (gone, old)), drop_delete=True)
    assert len(result.before) == 2 and result.after == []
