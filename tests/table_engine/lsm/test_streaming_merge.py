"""The streaming k-way merge equals one in-memory sort-and-merge of the same runs, for every merge engine and any
chunking of the runs (chunks of 1-3 rows, so the merge really proceeds cut-off by cut-off), and FileRoller rolls."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine import DataError
from table_engine.lsm.key_value import SEQUENCE_NUMBER, VALUE_KIND
from table_engine.lsm.merge_engines import DeduplicateMerge
from table_engine.lsm.merge_engines.function import MergeFunction, sort_and_merge
from table_engine.lsm.sort import MergeOrder, concat_tables
from table_engine.lsm.streaming_merge import FileRoller, rows_up_to, streaming_merge
from tests.budget import examples
from tests.table_engine.lsm.merge_engines.test_properties import CASE_IDS, CASES, Case, _kv, _merge_function, _records


def chunks_of(t: pa.Table, size: int) -> Iterator[pa.Table]:
    for start in range(0, t.num_rows, size):
        yield t.slice(start, size)


def make_runs(case: Case, fn: MergeFunction, order: MergeOrder, records: list[tuple[int, str, dict[str, Any]]],
              cuts: list[int]) -> list[pa.Table]:
    """Consecutive slices of the records, each merged into a sorted run with one record per key."""
    runs, start = [], 0
    for end in [*cuts, len(records)]:
        if end > start:
            runs.append(sort_and_merge(fn.on_write(_kv(case, records[start:end], start)), order, fn))
            start = end
    return runs


def adds_as_inserts(t: pa.Table) -> list[dict[str, Any]]:
    """The rows, +U written as +I: both are adds, and partial-update keeps a key's lone +U as it is only when no key
    of the batch it merges has several records (a batch-dependent kind; readers and compaction treat both alike)."""
    rows = t.to_pylist()
    for r in rows:
        if r[VALUE_KIND] == 2:
            r[VALUE_KIND] = 0
    return rows


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_streaming_merge_equals_in_memory_merge(case: Case, data: st.DataObject) -> None:
    records = data.draw(_records(case, max_size=30))
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(1, len(records) - 1)), max_size=5))))
    fn = _merge_function(case)
    order = MergeOrder(("k",), case.spec.sequence_fields, case.spec.descending)
    try:
        runs = make_runs(case, fn, order, records, cuts)
        want: pa.Table | None = sort_and_merge(concat_tables(runs), order, fn)
    except DataError:
        want = None
    if want is None:
        return  # the records themselves are rejected; nothing to stream
    sizes = [data.draw(st.integers(1, 3)) for _ in runs]
    pieces = list(streaming_merge([chunks_of(r, n) for r, n in zip(runs, sizes)], order, fn))
    got = concat_tables(pieces) if pieces else want.schema.empty_table()
    assert adds_as_inserts(got) == adds_as_inserts(want)
    keys = got.column("k").to_pylist()
    assert keys == sorted(set(keys))  # key order, one record per key, across pieces


@settings(max_examples=examples(80), deadline=None)
@given(runs=st.lists(st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["", "a", "b", "ab"])), max_size=12),
                     min_size=1, max_size=5),
       size=st.integers(1, 4))
def test_composite_keys_merge_lexicographically(runs: list[list[tuple[int, str]]], size: int) -> None:
    order = MergeOrder(("a", "b"))
    tables, seq = [], 0
    for keys in runs:
        uniq = sorted(set(keys))
        tables.append(pa.table({"a": pa.array([k[0] for k in uniq], pa.int64()),
                                "b": pa.array([k[1] for k in uniq], pa.string()),
                                "v": pa.array([f"r{seq}" for _ in uniq], pa.string()),
                                SEQUENCE_NUMBER: pa.array(range(seq, seq + len(uniq)), pa.int64()),
                                VALUE_KIND: pa.array([0] * len(uniq), pa.int8())}))
        seq += len(uniq)
    fn = DeduplicateMerge()
    want = sort_and_merge(concat_tables(tables), order, fn)
    got = list(streaming_merge([chunks_of(t, size) for t in tables], order, fn))
    assert (concat_tables(got) if got else want.slice(0, 0)).to_pylist() == want.to_pylist()


def test_a_single_run_streams_through_unmerged_and_empty_runs_are_skipped() -> None:
    run = pa.table({"k": pa.array([1, 2, 3], pa.int64()), SEQUENCE_NUMBER: pa.array([5, 6, 7], pa.int64()),
                    VALUE_KIND: pa.array([0, 3, 0], pa.int8())})
    pieces = list(streaming_merge([iter([run.slice(0, 0), run.slice(0, 2), run.slice(2)]), iter([])],
                                  MergeOrder(("k",)), None))
    assert concat_tables(pieces).to_pylist() == run.to_pylist()


def test_rows_up_to_counts_the_prefix_at_or_below_the_cutoff() -> None:
    t = pa.table({"a": pa.array([1, 1, 2, 2, 3], pa.int64()), "b": pa.array(["x", "z", "a", "c", "a"])})
    assert rows_up_to(t, ["a", "b"], [pa.scalar(2, pa.int64()), pa.scalar("b")]) == 3
    assert rows_up_to(t, ["a", "b"], [pa.scalar(0, pa.int64()), pa.scalar("z")]) == 0
    assert rows_up_to(t, ["a"], [pa.scalar(3, pa.int64())]) == 5


def test_file_roller_writes_files_of_about_the_target_size() -> None:
    written: list[pa.Table] = []

    def write(t: pa.Table) -> list[int]:
        written.append(t)
        return [t.num_rows]

    t = pa.table({"x": pa.array(range(1000), pa.int64())})  # 8 bytes per row
    roller: FileRoller[int] = FileRoller(write, target_bytes=800)
    for piece in chunks_of(t, 37):
        roller.add(piece)
    counts = roller.finish()
    assert sum(counts) == 1000 and all(c == 100 for c in counts)
    assert concat_tables(written).column("x").to_pylist() == list(range(1000))
