"""The append compaction picker, without IO: Paimon's fixed-bucket sliding window and full compaction, the unaware
coordinator's packing, deletion vectors, and hypothesis properties (consecutive groups for fixed buckets, group
sizes, no file in two groups)."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.format.data_file_meta import EMPTY_ROW, DataFileMeta, FileSource, SimpleStats
from table_engine.store.compaction.append_pick import (
    FULL_COMPACT_MIN_FILE,
    AppendPickOptions,
    pick_bucketed,
    pick_unaware,
)
from tests.budget import examples

_names = itertools.count()
MB = 1024 * 1024


def f(size: int, seq: int, rows: int = 10, name: str | None = None) -> DataFileMeta:
    """An append file of ``size`` bytes holding sequence numbers ``seq .. seq + rows - 1``."""
    return DataFileMeta(
        file_name=name or f"data-{next(_names)}.parquet", file_size=size, row_count=rows, min_key=EMPTY_ROW,
        max_key=EMPTY_ROW, key_stats=SimpleStats(EMPTY_ROW, EMPTY_ROW, []),
        value_stats=SimpleStats(EMPTY_ROW, EMPTY_ROW, []), min_sequence_number=seq,
        max_sequence_number=seq + rows - 1, schema_id=0, level=0, delete_row_count=0,
        file_source=int(FileSource.APPEND))


def files_of(sizes: list[int]) -> list[DataFileMeta]:
    return [f(s, i * 10) for i, s in enumerate(sizes)]


OPTS = AppendPickOptions(target_file_size=100, compaction_file_size=70, min_file_num=5, open_file_cost=0)


def names(groups: list[tuple[DataFileMeta, ...]]) -> list[list[str]]:
    return [[x.file_name for x in g] for g in groups]


# ---- fixed buckets -------------------------------------------------------------------------------------------------
def test_bucketed_waits_for_min_file_num_small_files() -> None:
    assert pick_bucketed(files_of([1, 1, 1, 1]), OPTS) == []
    fs = files_of([1, 1, 1, 1, 1])
    assert pick_bucketed(fs, OPTS) == [tuple(fs)]


def test_bucketed_groups_are_consecutive_in_sequence_order_whatever_the_input_order() -> None:
    fs = files_of([1] * 12)
    groups = pick_bucketed(list(reversed(fs)), OPTS)
    assert groups == [tuple(fs[0:5]), tuple(fs[5:10])]  # the last two stay until three more arrive


def test_bucketed_window_slides_past_big_files() -> None:
    fs = files_of([200, 1, 1, 1, 1, 1])
    assert pick_bucketed(fs, OPTS) == [tuple(fs[1:])]
    # a big file in the middle breaks the run: the small files before it are too few
    fs = files_of([1, 1, 200, 1, 1, 1])
    assert pick_bucketed(fs, OPTS) == []


def test_bucketed_min_file_num_option() -> None:
    fs = files_of([1, 1, 1])
    assert pick_bucketed(fs, AppendPickOptions(100, 70, min_file_num=3)) == [tuple(fs)]
    assert pick_bucketed(fs, AppendPickOptions(100, 70, min_file_num=4)) == []


def test_bucketed_full_compaction_rewrites_after_the_leading_big_files() -> None:
    fs = files_of([200, 150, 1, 1, 1])
    assert pick_bucketed(fs, OPTS, full=True) == [tuple(fs[2:])]
    # Paimon's rule: small files must outnumber big ones among the rest, and at least 3 files
    fs = files_of([1, 200, 1, 200])
    assert pick_bucketed(fs, OPTS, full=True) == []
    assert pick_bucketed(files_of([1, 1]), OPTS, full=True) == []
    fs = files_of([1] * FULL_COMPACT_MIN_FILE)
    assert pick_bucketed(fs, OPTS, full=True) == [tuple(fs)]


def test_bucketed_full_compaction_with_deletion_vectors_takes_files_with_deleted_rows() -> None:
    opts = AppendPickOptions(100, 70, deletion_vectors=True)
    fs = files_of([200, 200])
    assert pick_bucketed(fs, opts, full=True) == []
    assert pick_bucketed(fs, opts, full=True, deleted={fs[0].file_name: 3}) == [tuple(fs)]
    assert pick_bucketed(fs, opts, full=True, deleted={fs[1].file_name: 3}) == [(fs[1],)]
    one = files_of([1])
    assert pick_bucketed(one, opts, full=True) == []  # nothing deleted: nothing to gain
    assert pick_bucketed(one, opts, full=True, deleted={one[0].file_name: 1}) == [tuple(one)]


# ---- unaware bucket ------------------------------------------------------------------------------------------------
def test_unaware_needs_min_file_num_small_files_and_ignores_big_ones() -> None:
    assert pick_unaware(files_of([1, 1, 1, 1, 500]), OPTS) == []
    fs = files_of([1, 1, 500, 1, 1, 1])
    (group,) = pick_unaware(fs, OPTS)
    assert [x.file_name for x in group] == [x.file_name for x in fs if x.file_size == 1]


def test_unaware_packs_bins_of_twice_the_target_size() -> None:
    fs = files_of([60] * 7)  # each below 70 (target 100 x 0.7): 60+60+60+60 >= 200 closes a bin
    groups = pick_unaware(fs, OPTS)
    assert [len(g) for g in groups] == [4]  # the 3 left over are fewer than compaction.min.file-num
    assert [len(g) for g in pick_unaware(fs, OPTS, full=True)] == [4, 3]


def test_unaware_open_file_cost_counts_per_file() -> None:
    fs = files_of([10, 10])
    opts = AppendPickOptions(100, 70, min_file_num=5, open_file_cost=95)
    assert [len(g) for g in pick_unaware(fs, opts)] == [2]


def test_unaware_group_is_in_sequence_order() -> None:
    fs = [f(5, 0), f(1, 10), f(3, 20), f(2, 30), f(4, 40)]
    (group,) = pick_unaware(fs, OPTS)
    assert [x.min_sequence_number for x in group] == [0, 10, 20, 30, 40]


def test_unaware_deletion_vectors_force_files_over_the_delete_ratio() -> None:
    opts = AppendPickOptions(100, 70, min_file_num=5, deletion_vectors=True, delete_ratio_threshold=0.2)
    big = f(500, 0, rows=10)
    assert pick_unaware([big], opts, deleted={big.file_name: 2}) == []  # 2 of 10 is not above 0.2
    assert pick_unaware([big], opts, deleted={big.file_name: 3}) == [(big,)]
    small = files_of([1, 1])
    # a small file with deleted rows is always compacted; the others still need min-file-num
    assert names(pick_unaware([*small, big], opts, deleted={small[0].file_name: 1})) == [[small[0].file_name]]
    # without deletion vectors enabled the counts are ignored
    assert pick_unaware([big], OPTS, deleted={big.file_name: 9}) == []


# ---- properties ----------------------------------------------------------------------------------------------------
sizes = st.lists(st.integers(min_value=1, max_value=300), min_size=0, max_size=40)
min_nums = st.integers(min_value=1, max_value=8)


@settings(max_examples=examples(300), deadline=None)
@given(sizes, min_nums, st.booleans(), st.data())
def test_bucketed_property(sz: list[int], min_num: int, full: bool, data: st.DataObject) -> None:
    fs = files_of(sz)
    shuffled = data.draw(st.permutations(fs))
    opts = AppendPickOptions(100, 70, min_file_num=min_num, open_file_cost=0)
    groups = pick_bucketed(shuffled, opts, full=full)
    index = {x.file_name: i for i, x in enumerate(fs)}
    picked = [x.file_name for g in groups for x in g]
    assert len(picked) == len(set(picked)), "a file in two groups"
    for g in groups:
        pos = [index[x.file_name] for x in g]
        assert pos == list(range(pos[0], pos[0] + len(pos))), "a group of non-consecutive files"
        if full:
            assert len(g) >= FULL_COMPACT_MIN_FILE
        else:
            assert len(g) == min_num
    if not full:
        # after the last group, no run of min_num files is left whose first min_num - 1 stay below the target size:
        # the sliding window would have picked it
        rest = fs[index[groups[-1][-1].file_name] + 1:] if groups else fs
        for start in range(len(rest) - min_num + 1):
            assert sum(x.file_size for x in rest[start:start + min_num - 1]) >= 100, "a pickable run was left"


@settings(max_examples=examples(300), deadline=None)
@given(sizes, min_nums, st.booleans(), st.booleans(), st.data())
def test_unaware_property(sz: list[int], min_num: int, full: bool, dv: bool, data: st.DataObject) -> None:
    fs = files_of(sz)
    deleted = {x.file_name: data.draw(st.integers(0, x.row_count)) for x in fs if data.draw(st.booleans())}
    deleted = {k: v for k, v in deleted.items() if v}
    opts = AppendPickOptions(100, 70, min_file_num=min_num, open_file_cost=0, deletion_vectors=dv)
    groups = pick_unaware(fs, opts, full=full, deleted=deleted)
    picked = [x.file_name for g in groups for x in g]
    assert len(picked) == len(set(picked)), "a file in two groups"
    for g in groups:
        assert [x.min_sequence_number for x in g] == sorted(x.min_sequence_number for x in g)
        with_dv = dv and any(deleted.get(x.file_name) for x in g)
        if not with_dv:
            closed = len(g) >= 2 and sum(x.file_size for x in g) >= 200  # a bin of twice the target size
            assert closed or len(g) >= (min(min_num, 2) if full else min_num)
        for x in g:  # only small files, or files with too many deleted rows
            assert x.file_size < 70 or (dv and deleted.get(x.file_name, 0) > x.row_count * 0.2)


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.integers(1, 400), min_size=0, max_size=25), st.integers(50, 200),
       st.floats(0.1, 1.0), st.floats(0.0, 1.0), st.integers(2, 6), st.data())
def test_the_table_options_decide_what_is_picked(sz: list[int], target: int, small_ratio: float,
                                                 delete_ratio: float, min_num: int, data: st.DataObject) -> None:
    """compaction.small-file-ratio, compaction.delete-ratio-threshold and compaction.min.file-num, as the table
    options give them (:class:`AppendCompactionSettings`), bound what the picker takes of an unaware bucket."""
    from types import SimpleNamespace

    from table_engine.core_options import CoreOptions
    from table_engine.format.bucket import BucketMode
    from table_engine.store.compaction.append_compact import AppendCompactionSettings

    options = CoreOptions({"target-file-size": f"{target} b", "compaction.small-file-ratio": str(small_ratio),
                           "compaction.delete-ratio-threshold": str(delete_ratio),
                           "compaction.min.file-num": str(min_num), "deletion-vectors.enabled": "true",
                           "source.split.open-file-cost": "0 b"})
    mode = BucketMode.of(False, options.bucket(), False)
    pick = AppendCompactionSettings.of(SimpleNamespace(options=options, bucket_mode=mode)).pick  # type: ignore[arg-type]
    assert (pick.target_file_size, pick.compaction_file_size) == (target, int(target * small_ratio))
    assert (pick.delete_ratio_threshold, pick.min_file_num) == (delete_ratio, min_num)
    fs = files_of(sz)
    deleted = {x.file_name: data.draw(st.integers(1, x.row_count)) for x in fs if data.draw(st.booleans())}
    for g in pick_unaware(fs, pick, deleted=deleted):
        for x in g:
            assert x.file_size < int(target * small_ratio) or deleted.get(x.file_name, 0) > x.row_count * delete_ratio
