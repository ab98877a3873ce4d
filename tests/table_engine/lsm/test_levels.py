"""Levels from file metadata: run order, update, interval partition, LSM overlap detection."""

from __future__ import annotations

import pytest

from table_engine.errors import CorruptMetadataError
from table_engine.lsm.levels import Levels, interval_partition, overlapping_files
from tests.table_engine.lsm._files import CODEC, meta


def test_level0_is_newest_first_then_one_run_per_level() -> None:
    a = meta(0, 10, seq=(0, 9), name="a")
    b = meta(5, 15, seq=(10, 19), name="b")
    c = meta(0, 3, seq=(20, 29), name="c")
    d = meta(0, 4, level=2, name="d")
    e = meta(5, 9, level=2, name="e")
    f = meta(0, 100, level=5, name="f")
    lv = Levels([a, d, f, b, e, c], 6, CODEC)
    runs = lv.sorted_runs()
    assert [(r.level, [x.file_name for x in r.run.files]) for r in runs] == [
        (0, ["c"]), (0, ["b"]), (0, ["a"]), (2, ["d", "e"]), (5, ["f"])]
    assert lv.max_level == 5 and lv.number_of_levels == 6
    assert lv.number_of_sorted_runs() == 5
    assert lv.non_empty_highest_level() == 5
    assert runs[3].run.total_size == d.file_size + e.file_size


def test_equal_max_sequence_orders_by_file_name() -> None:
    x, y = meta(0, 1, seq=(0, 5), name="y"), meta(0, 1, seq=(0, 5), name="x")
    assert [r.run.files[0].file_name for r in Levels([x, y], 3, CODEC).sorted_runs()] == ["x", "y"]


def test_restored_levels_keep_levels_above_num_levels() -> None:
    lv = Levels([meta(0, 1, level=7)], 3, CODEC)
    assert lv.max_level == 7
    assert Levels([], 3, CODEC).non_empty_highest_level() == -1
    assert Levels([meta(0, 1)], 3, CODEC).non_empty_highest_level() == 0


def test_overlapping_files_in_one_level_are_rejected() -> None:
    with pytest.raises(CorruptMetadataError, match="overlap"):
        Levels([meta(0, 10, level=1, name="p"), meta(10, 20, level=1, name="q")], 3, CODEC)


def test_update_is_pure() -> None:
    a, b = meta(0, 10, seq=(0, 1)), meta(0, 10, seq=(2, 3))
    lv = Levels([a, b], 4, CODEC)
    out = meta(0, 10, level=3, seq=(0, 3))
    new = lv.update([a, b], [out])
    assert [f.file_name for f in lv.all_files()] == [b.file_name, a.file_name]  # unchanged
    assert [(r.level, r.run.files) for r in new.sorted_runs()] == [(3, (out,))]
    # an upgrade: same file, another level
    up = new.update([out], [meta(0, 10, level=1, name=out.file_name)])
    assert [(r.level, r.run.files[0].file_name) for r in up.sorted_runs()] == [(1, out.file_name)]


def test_interval_partition_sections_and_minimal_runs() -> None:
    f1, f2, f3 = meta(0, 5), meta(3, 8), meta(6, 9)     # f1-f2 overlap, f2-f3 overlap, f1-f3 do not
    f4 = meta(20, 30)                                   # alone
    f5, f6 = meta(40, 45), meta(46, 50)                 # adjacent, not overlapping
    sections = interval_partition([f6, f4, f3, f2, f1, f5], CODEC)
    assert len(sections) == 4
    first = sorted([[f.file_name for f in r.files] for r in sections[0]])
    assert first == sorted([[f1.file_name, f3.file_name], [f2.file_name]])
    assert [[f.file_name for f in r.files] for r in sections[1]] == [[f4.file_name]]
    assert [[f.file_name for f in r.files] for r in sections[2]] == [[f5.file_name]]
    assert [[f.file_name for f in r.files] for r in sections[3]] == [[f6.file_name]]


def test_overlapping_files_detects_lsm_conflicts_above_level_0() -> None:
    assert overlapping_files([meta(0, 10), meta(5, 6)], CODEC) is None  # level 0 may overlap
    assert overlapping_files([meta(0, 10, level=2), meta(11, 12, level=2), meta(5, 6, level=3)], CODEC) is None
    a, b = meta(0, 10, level=2), meta(10, 12, level=2)
    assert overlapping_files([a, b], CODEC) == (a, b)
