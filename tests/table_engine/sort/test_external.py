"""The external sort against an in-memory sort: any buffer size (many spilled runs or none) gives the same order of
keys and the same rows; its spill files are removed."""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.core_enums import OrderType
from table_engine.sort import sort_indices
from table_engine.sort.external import ExternalSorter


def _table(rows: list[tuple[Any, Any, Any]]) -> pa.Table:
    return pa.table({"a": pa.array([r[0] for r in rows], pa.int32()), "f": pa.array([r[1] for r in rows], pa.float64()),
                     "s": pa.array([r[2] for r in rows], pa.string())})


def _key(row: dict[str, Any], cols: list[str]) -> tuple[Any, ...]:
    return tuple(row[c] for c in cols)


@settings(max_examples=60, deadline=None)
@given(batches=st.lists(st.lists(st.tuples(st.none() | st.integers(-5, 5),
                                           st.none() | st.floats(allow_nan=True, width=32) | st.sampled_from([0.0]),
                                           st.none() | st.sampled_from(["", "a", "ab", "b", "zz"])),
                                 min_size=0, max_size=40), min_size=0, max_size=6),
       strategy=st.sampled_from([OrderType.ORDER, OrderType.ZORDER, OrderType.HILBERT]),
       buffer=st.sampled_from([1, 200, 1500, 1 << 30]),
       cols=st.sampled_from([["a", "s"], ["f", "a"], ["s", "f", "a"]]))
def test_the_external_sort_orders_as_the_in_memory_sort(tmp_path_factory: pytest.TempPathFactory,
                                                        batches: list[list[tuple[Any, Any, Any]]],
                                                        strategy: OrderType, buffer: int, cols: list[str]) -> None:
    spill = str(tmp_path_factory.mktemp("spill"))
    tables = [_table(b) for b in batches]
    with ExternalSorter(strategy, cols, buffer, spill_dir=spill) as sorter:
        for t in tables:
            sorter.add(t)
        out = list(sorter.sorted())
    assert not os.listdir(spill)  # the runs are removed
    got = pa.concat_tables(out).to_pylist() if out else []
    everything = pa.concat_tables(tables) if tables else _table([])
    want = everything.take(sort_indices(everything, strategy, cols)).to_pylist()
    # the same rows, and the keys in the same order (rows with equal keys may come in another order)
    assert sorted(map(repr, got)) == sorted(map(repr, want))
    if strategy is OrderType.ORDER:
        assert [repr(_key(r, cols)) for r in got] == [repr(_key(r, cols)) for r in want]
    else:
        from table_engine.sort import sort_key

        keys_got = sort_key(pa.Table.from_pylist(got, schema=everything.schema), strategy, cols).to_pylist() \
            if got else []
        assert keys_got == sorted(keys_got)


def test_a_small_buffer_spills_runs_and_hands_out_chunks() -> None:
    t = pa.table({"a": pa.array(range(100_000, 0, -1), pa.int64()), "b": pa.array(range(100_000), pa.int64())})
    with ExternalSorter(OrderType.ZORDER, ["a", "b"], t.nbytes // 8) as sorter:
        for batch in t.to_batches(max_chunksize=5_000):
            sorter.add(pa.Table.from_batches([batch]))
        chunks = list(sorter.sorted())
        assert sorter.spilled_runs >= 6
    assert len(chunks) > 1 and sum(c.num_rows for c in chunks) == 100_000
    assert max(c.nbytes for c in chunks) < t.nbytes // 2
