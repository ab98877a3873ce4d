"""Range partitioning by a sort order (table_engine.sort.ranges): the ranges of any rows, cut at any boundaries,
are in order and sorted one by one they are the rows sorted whole; boundaries from a sample cut it evenly."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.core_enums import OrderType
from table_engine.sort.keys import keyed_indices, keyed_sort
from table_engine.sort.ranges import boundaries, key_columns, range_ids, sample

VALUES = st.none() | st.integers(-5, 5)
FLOATS = st.none() | st.sampled_from([-1.5, 0.0, 2.0, math.inf, -math.inf, math.nan])


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(VALUES, FLOATS), max_size=40), st.lists(st.tuples(VALUES, FLOATS), max_size=5),
       st.sampled_from([OrderType.ORDER, OrderType.ZORDER, OrderType.HILBERT]))
def test_ranges_in_order_sorted_one_by_one_are_the_rows_sorted(rows: list[tuple[object, object]],
                                                               cuts: list[tuple[object, object]],
                                                               strategy: OrderType) -> None:
    table = pa.table({"a": pa.array([r[0] for r in rows], pa.int64()),
                      "f": pa.array([r[1] for r in rows], pa.float64())})
    cut = pa.table({"a": pa.array([c[0] for c in cuts], pa.int64()), "f": pa.array([c[1] for c in cuts], pa.float64())})
    keyed, sort_keys = keyed_sort(table, strategy, ["a", "f"])
    bounds_keyed, _ = keyed_sort(cut, strategy, ["a", "f"])
    bounds = key_columns(bounds_keyed, sort_keys)
    bounds = bounds.take(keyed_indices(bounds, sort_keys))
    ids = range_ids(keyed, bounds, sort_keys)
    assert ids.min(initial=0) >= 0 and ids.max(initial=0) <= bounds.num_rows

    def ordered(t: pa.Table) -> list[object]:
        k, keys = keyed_sort(t, strategy, ["a", "f"])
        return [repr(r) for r in t.take(keyed_indices(k, keys)).to_pylist()]  # repr: nan equals nan

    pieces = [ordered(table.filter(pa.array(ids == r))) for r in range(bounds.num_rows + 1)]
    assert [r for p in pieces for r in p] == ordered(table)


@pytest.mark.parametrize("column", [pa.array(range(1000), pa.int64()),  # numbers: keyed by words
                                    pa.array([f"{i:04d}" for i in range(1000)])])  # strings: sorted by Arrow
def test_boundaries_cut_a_sample_evenly_and_a_sample_is_seeded(column: pa.Array) -> None:
    table = pa.table({"a": column})
    keyed, sort_keys = keyed_sort(table, OrderType.ORDER, ["a"])
    cut = boundaries(keyed, sort_keys, 4)
    assert cut.num_rows == 3 and boundaries(keyed, sort_keys, 1).num_rows == 0
    picked = sample(keyed, sort_keys, 0.1, seed=7)
    assert picked.equals(sample(keyed, sort_keys, 0.1, seed=7)) and 50 < picked.num_rows < 150
    assert picked.column_names == [name for name, _, _ in sort_keys]
    ids = range_ids(keyed, cut, sort_keys)
    assert [int((ids == r).sum()) for r in range(4)] == [250, 250, 250, 250]


@pytest.mark.parametrize("strategy", [OrderType.ZORDER, OrderType.HILBERT])
def test_curve_ranges_search_the_key_bytes(strategy: OrderType) -> None:
    table = pa.table({"a": pa.array(range(500), pa.int64()), "b": pa.array(range(500, 0, -1), pa.int64())})
    keyed, sort_keys = keyed_sort(table, strategy, ["a", "b"])
    ids = range_ids(keyed, boundaries(keyed, sort_keys, 5), sort_keys)
    assert [int((ids == r).sum()) for r in range(5)] == [100] * 5
