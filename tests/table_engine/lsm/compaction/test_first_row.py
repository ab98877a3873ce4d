"""First-row lookup compaction on in-memory files: a new key already stored above the output level is dropped, a key
whose older record is in the compacted section is kept, level-0 files are upgraded only to the max level."""

from __future__ import annotations

import pyarrow as pa

from table_engine.lsm.compaction.first_row import FirstRowLookup
from table_engine.lsm.compaction.rewriter import CompactRewriter
from table_engine.lsm.compaction.universal import CompactUnit
from table_engine.lsm.levels import Levels
from table_engine.lsm.merge_engines.config import MergeConfig
from table_engine.lsm.merge_engines.first_row import FirstRowMerge
from table_engine.lsm.sort import MergeOrder
from table_engine.types import DataField, DataType
from tests.table_engine.lsm._files import CODEC, MemoryFiles, kv

MIN_SIZE = 100
NUM_LEVELS = 6
MAX_LEVEL = NUM_LEVELS - 1
CONFIG = MergeConfig("first-row", "t", ("k",), (DataField(1, "v", DataType("STRING")),), (), False)


def compact(fs: MemoryFiles, levels: Levels, unit: CompactUnit) -> list[tuple[int, str]]:
    """Run ``unit`` with first-row lookup; the (key, value) rows of the new files, in key order."""
    lookup = FirstRowLookup(levels, fs.read, ["k"], CODEC)
    rw = CompactRewriter(CODEC, fs.read, fs.write, FirstRowMerge(CONFIG), MergeOrder(("k",)), MIN_SIZE, MAX_LEVEL,
                         lookup=lookup)
    result = rw.compact(unit, drop_delete=True)
    out: list[tuple[int, str]] = []
    for f in result.after:
        t = fs.read(f)
        out += zip(t.column("k").to_pylist(), t.column("v").to_pylist())
    return sorted(out)


def test_new_keys_stored_above_the_output_level_are_dropped() -> None:
    fs = MemoryFiles()
    top = fs.add(kv([1, 3, 5], ["a", "c", "e"], [0, 1, 2]), level=MAX_LEVEL, size=500)
    l0 = fs.add(kv([1, 2, 5, 6], ["A", "b", "E", "f"], [3, 4, 5, 6]), size=10)
    levels = Levels([top, l0], NUM_LEVELS, CODEC)
    assert compact(fs, levels, CompactUnit(3, (l0,))) == [(2, "b"), (6, "f")]


def test_a_key_with_an_older_record_in_the_section_keeps_that_record() -> None:
    fs = MemoryFiles()
    top = fs.add(kv([9], ["z"], [0]), level=MAX_LEVEL, size=500)
    l2 = fs.add(kv([1, 2], ["a", "b"], [1, 2]), level=2, size=10)
    l0 = fs.add(kv([1, 3, 9], ["A", "c", "Z"], [3, 4, 5]), size=10)
    levels = Levels([top, l2, l0], NUM_LEVELS, CODEC)
    assert compact(fs, levels, CompactUnit(2, (l0, l2))) == [(1, "a"), (2, "b"), (3, "c")]


def test_lookup_stops_at_the_lowest_level_holding_the_key_and_prunes_by_key_range() -> None:
    fs = MemoryFiles()
    reads: list[str] = []
    l4 = fs.add(kv([10, 11], ["x", "y"], [0, 1]), level=4, size=500)
    l5 = fs.add(kv([1, 2], ["a", "b"], [2, 3]), level=5, size=500)
    levels = Levels([l4, l5], NUM_LEVELS, CODEC)

    def read_keys(f: object) -> pa.Table:
        reads.append(f.file_name)  # type: ignore[attr-defined]
        return fs.read(f)  # type: ignore[arg-type]

    lookup = FirstRowLookup(levels, read_keys, ["k"], CODEC)
    found = lookup.contained_above(1, pa.table({"k": pa.array([2, 7, 11], pa.int32())}))
    assert found.tolist() == [True, False, True]
    assert reads == [l4.file_name, l5.file_name]
    reads.clear()
    assert lookup.contained_above(1, pa.table({"k": pa.array([10], pa.int32())})).tolist() == [True]
    assert reads == [l4.file_name]  # found in level 4; level 5 (keys 1..2) is never read


def test_level0_files_are_upgraded_only_to_the_max_level() -> None:
    fs = MemoryFiles()
    big = fs.add(kv([1, 2], ["a", "b"], [0, 1]), size=500)
    levels = Levels([big], NUM_LEVELS, CODEC)
    lookup = FirstRowLookup(levels, fs.read, ["k"], CODEC)
    assert lookup.upgrade(MAX_LEVEL, big) is True
    assert lookup.upgrade(3, big) is False
    # a large lone level-0 file going to level 3 is rewritten, with its keys looked up above level 3
    top = fs.add(kv([2], ["B"], [2]), level=MAX_LEVEL, size=500)
    levels = Levels([big, top], NUM_LEVELS, CODEC)
    assert compact(fs, levels, CompactUnit(3, (big,))) == [(1, "a")]
