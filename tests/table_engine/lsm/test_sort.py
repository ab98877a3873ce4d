"""``is_sorted`` (the check that lets already sorted input skip the sort) agrees with a real stable sort."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.lsm.sort import is_sorted, sort_indices, take_sorted
from tests.budget import examples

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


@settings(max_examples=examples(400), deadline=None)
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


_INT_KEY_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint32(), pa.date32(), pa.timestamp("us")]


@settings(max_examples=examples(60), deadline=None)
@given(types=st.lists(st.sampled_from(_INT_KEY_TYPES), min_size=1, max_size=3),
       spans=st.lists(st.sampled_from([1, 2, 7, 1000, 2**31, 2**40, 2**62]), min_size=3, max_size=3),
       rows=st.integers(4096, 6000), seed=st.integers(0, 2**16), with_null=st.booleans())
def test_integer_keys_sort_as_arrow_sorts_them(types, spans, rows, seed, with_null):
    """Large tables of integer-like keys take the packed-key path (one int64 per row, numpy's stable argsort)
    whenever their ranges allow; the order is Arrow's stable multi-key order either way."""
    import numpy as np
    import pyarrow.compute as pc

    rng = np.random.default_rng(seed)
    cols = {}
    for i, t in enumerate(types):
        storage = pa.int32() if t == pa.date32() else pa.int64() if t == pa.timestamp("us") else t
        info = np.iinfo(storage.to_pandas_dtype())
        lo = max(int(info.min), -(spans[i] // 2))
        hi = min(int(info.max), lo + spans[i])
        values = rng.integers(lo, hi, rows, endpoint=True, dtype=np.int64)
        values[:2] = [lo, hi]
        arr = pa.array(values, pa.int64()).cast(storage)
        if with_null and i == len(types) - 1:
            arr = pa.array(arr.to_pylist()[:-1] + [None], storage)
        cols[f"k{i}"] = arr.cast(t) if t != storage else arr
    table = pa.table(cols)
    keys = [(f"k{i}", "ascending") for i in range(len(types))]
    expected = pc.sort_indices(table, sort_keys=[(k, o, "at_start") for k, o in keys])
    assert sort_indices(table, keys).to_pylist() == expected.to_pylist()
