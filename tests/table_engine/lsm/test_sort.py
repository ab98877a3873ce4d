"""``is_sorted`` (the check that lets already sorted input skip the sort) agrees with a real stable sort."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.lsm.sort import is_sorted, sort_indices, take_sorted

_values = {
    "int": st.integers(-3, 3),
    "str": st.sampled_from(["", "a", "ab", "b", "\u00e9", "z"]),
    "float": st.sampled_from([-1.5, 0.0, 2.0, float("nan")]),
}
_types = {"int": pa.int64(), "str": pa.string(), "float": pa.float64()}


@st.composite
def tables(draw: st.DrawFn) -> tuple[pa.Table, list[tuple[str, str]]]:
    kinds = draw(st.lists(st.sampled_from(sorted(_values)), min_size=1, max_size=3))
    n = draw(st.integers(0, 12))
    cols = {}
    for i, k in enumerate(kinds):
        cols[f"c{i}"] = pa.array(draw(st.lists(st.one_of(st.none(), _values[k]) if i == 0 else _values[k],
                                               min_size=n, max_size=n)), _types[k])
    table = pa.table(cols)
    if draw(st.booleans()):  # often hand it input that is sorted already, in chunks
        keys = [(f"c{i}", "ascending") for i in range(len(kinds))]
        ordered = table.take(sort_indices(table, keys))
        table = pa.concat_tables([ordered.slice(0, n // 2), ordered.slice(n // 2)])
    orders = draw(st.lists(st.sampled_from(["ascending", "descending"]), min_size=len(kinds),
                           max_size=len(kinds)))
    return table, [(f"c{i}", o) for i, o in enumerate(orders)]


@settings(max_examples=400, deadline=None)
@given(tables())
def test_is_sorted_says_true_only_when_a_stable_sort_keeps_the_order(case):
    table, keys = case
    identity = sort_indices(table, keys).to_pylist() == list(range(table.num_rows))
    if is_sorted(table, keys):
        assert identity
    # repr: NaN equals NaN there
    assert repr(take_sorted(table, keys).to_pylist()) == repr(table.take(sort_indices(table, keys)).to_pylist())


def test_sorted_chunked_input_is_recognised_without_nulls_or_nan():
    t = pa.concat_tables([pa.table({"g": [0, 0, 1], "k": ["a", "b", "a"]}),
                          pa.table({"g": [1, 1, 2], "k": ["a", "c", "a"]})])
    assert is_sorted(t, [("g", "ascending"), ("k", "ascending")])
    assert not is_sorted(t, [("k", "ascending")])
    assert is_sorted(t, [("g", "ascending")])
    assert not is_sorted(t, [("g", "descending")])
