"""The sort keys against Paimon's own test vectors and against a row-by-row model of Paimon Java's ``ZIndexer`` and
``HilbertIndexer`` (written here from their description, one value at a time)."""

from __future__ import annotations

import datetime as dt
import decimal
import itertools
import math
import random
import struct
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.core_enums import OrderType
from table_engine.errors import SchemaError, UnsupportedError
from table_engine.sort import sort_indices, sort_key
from table_engine.sort.bits import as_words, interleave_words
from table_engine.sort.bits import interleave as byte_interleave
from table_engine.sort.keys import argsort_words, key_words

MIN64, MASK64 = 1 << 63, (1 << 64) - 1


# ---- the model: one value at a time, as Paimon Java ------------------------------------------------------------
def _long(v: int) -> int:
    return ((v & MASK64) ^ MIN64) & MASK64


def _double_bits(d: float) -> int:
    return 0x7FF8000000000000 if math.isnan(d) else struct.unpack(">q", struct.pack(">d", d))[0]


def _java_bytes(v: int) -> bytes:
    """BigInteger.toByteArray."""
    n = (v.bit_length() if v >= 0 else (~v).bit_length()) // 8 + 1
    return v.to_bytes(n, "big", signed=True)


def z_bytes(v: Any, t: pa.DataType, width: int) -> bytes:
    if pa.types.is_string(t) or pa.types.is_binary(t):
        raw = b"" if v is None else (v.encode() if isinstance(v, str) else v)
        return raw[:width].ljust(width, b"\0")
    if v is None:
        return bytes(8)
    if pa.types.is_boolean(t):
        return (b"\x81" if v else b"\0") + bytes(7)
    if pa.types.is_floating(t):
        bits = _double_bits(float(v))
        bits ^= (bits >> 31) | -MIN64
        return (bits & MASK64).to_bytes(8, "big")
    if pa.types.is_decimal(t):
        unscaled = int(v.scaleb(t.scale).to_integral_value())
        return _java_bytes(unscaled)[:8].ljust(8, b"\0")
    return _long(_number(v, t)).to_bytes(8, "big")


def _number(v: Any, t: pa.DataType) -> int:
    """An integer, date (days) or timestamp (epoch milliseconds, rounded down) as Paimon's long."""
    if pa.types.is_timestamp(t):
        return math.floor((v - dt.datetime(1970, 1, 1)) / dt.timedelta(milliseconds=1))
    if pa.types.is_date(t):
        return (v - dt.date(1970, 1, 1)).days
    return int(v)


def interleave(cols: list[bytes]) -> bytes:
    total = sum(map(len, cols))
    out = bytearray(total)
    col = src = out_byte = 0
    bit, out_bit = 7, 7
    while out_byte < total:
        out[out_byte] |= ((cols[col][src] >> bit) & 1) << out_bit
        out_bit -= 1
        if out_bit < 0:
            out_byte, out_bit = out_byte + 1, 7
            if out_byte == total:
                break
        while True:
            col += 1
            if col == len(cols):
                col, bit = 0, bit - 1
                if bit < 0:
                    src, bit = src + 1, 7
            if len(cols[col]) > src:
                break
    return bytes(out)


def h_long(v: Any, t: pa.DataType) -> int:
    if v is None:
        return (1 << 63) - 1
    if pa.types.is_string(t) or pa.types.is_binary(t):
        raw = v.encode() if isinstance(v, str) else v
        raw = raw[:8] if len(raw) > 8 else raw.rjust(8, b"\0")
        return int.from_bytes(raw, "big", signed=True)
    if pa.types.is_boolean(t):
        return (1 << 63) - 1 if v else 0
    if pa.types.is_floating(t):
        return _double_bits(float(v))
    if pa.types.is_decimal(t):
        return int(v)
    if pa.types.is_int8(t):
        return v & 0xFF
    return _number(v, t)


def h_key(point: list[int]) -> bytes:
    x = [p & MASK64 for p in point]
    n, q = len(x), 1 << 62
    while q > 1:
        p = q - 1
        for i in range(n):
            if x[i] & q:
                x[0] ^= p
            else:
                t = (x[0] ^ x[i]) & p
                x[0] ^= t
                x[i] ^= t
        q >>= 1
    for i in range(1, n):
        x[i] ^= x[i - 1]
    t, q = 0, 1 << 62
    while q > 1:
        if x[n - 1] & q:
            t ^= q - 1
        q >>= 1
    x = [v ^ t for v in x]
    index = 0
    for b in range(62, -1, -1):
        for v in x:
            index = (index << 1) | ((v >> b) & 1)
    raw = _java_bytes(index)
    return raw[:63] if len(raw) >= 63 else raw.rjust(63, b"\0")


# ---- Paimon's own vectors ----------------------------------------------------------------------------------------
GRID = pa.table({"a": pa.array([a for a, _ in itertools.product(range(3), repeat=2)], pa.int32()),
                 "b": pa.array([b for _, b in itertools.product(range(3), repeat=2)], pa.int32())})


@pytest.mark.parametrize(("strategy", "expected"), [
    (OrderType.ZORDER, [(0, 0), (0, 1), (1, 0), (1, 1), (0, 2), (1, 2), (2, 0), (2, 1), (2, 2)]),
    (OrderType.HILBERT, [(0, 0), (0, 1), (1, 1), (1, 0), (2, 0), (2, 1), (2, 2), (1, 2), (0, 2)]),
    (OrderType.ORDER, sorted(itertools.product(range(3), repeat=2))),
])
def test_the_order_of_paimons_spark_test(strategy: OrderType, expected: list[tuple[int, int]]) -> None:
    """CompactProcedureTestBase "sort compact": a table of all pairs of 0..2, sorted by (a, b)."""
    rows = GRID.take(sort_indices(GRID, strategy, ["a", "b"]))
    assert list(zip(rows["a"].to_pylist(), rows["b"].to_pylist(), strict=True)) == expected


def test_the_zorder_of_paimons_clustering_test() -> None:
    t = pa.table({"a": pa.array([0, 1, 2, 3, 3, 3, 3], pa.int32()), "b": pa.array([3, 3, 3, 0, 1, 2, 3], pa.int32())})
    rows = t.take(sort_indices(t, OrderType.ZORDER, ["a", "b"]))
    assert list(zip(rows["a"].to_pylist(), rows["b"].to_pylist(), strict=True)) == [
        (0, 3), (1, 3), (3, 0), (3, 1), (2, 3), (3, 2), (3, 3)]


# ---- against the model -------------------------------------------------------------------------------------------
COLUMN_TYPES: list[tuple[pa.DataType, st.SearchStrategy[Any]]] = [
    (pa.int8(), st.integers(-128, 127)),
    (pa.int32(), st.integers(-(2 ** 31), 2 ** 31 - 1)),
    (pa.int64(), st.integers(-(2 ** 63), 2 ** 63 - 1)),
    (pa.float64(), st.floats(allow_nan=True, allow_infinity=True)),
    (pa.float32(), st.floats(width=32, allow_nan=False)),
    (pa.string(), st.text(max_size=12)),
    (pa.binary(), st.binary(max_size=12)),
    (pa.bool_(), st.booleans()),
    (pa.decimal128(20, 3), st.decimals(min_value=-10 ** 16, max_value=10 ** 16, places=3, allow_nan=False)),
    (pa.date32(), st.dates()),
    (pa.timestamp("us"), st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1))),
]


@st.composite
def tables(draw: st.DrawFn, min_columns: int = 1) -> tuple[pa.Table, list[pa.DataType]]:
    picked = draw(st.lists(st.sampled_from(range(len(COLUMN_TYPES))), min_size=min_columns, max_size=4))
    n = draw(st.integers(0, 12))
    columns, types = {}, []
    for i, k in enumerate(picked):
        t, values = COLUMN_TYPES[k]
        columns[f"c{i}"] = pa.array(draw(st.lists(st.none() | values, min_size=n, max_size=n)), type=t)
        types.append(t)
    return pa.table(columns), types


@settings(max_examples=150, deadline=None)
@given(tables(), st.integers(1, 10))
def test_zorder_keys_are_paimons(data: tuple[pa.Table, list[pa.DataType]], width: int) -> None:
    table, types = data
    names = table.column_names
    keys = sort_key(table, OrderType.ZORDER, names, width).to_pylist()
    for r, row in enumerate(table.to_pylist()):
        assert keys[r] == interleave([z_bytes(row[c], t, width) for c, t in zip(names, types, strict=True)]), row


@settings(max_examples=150, deadline=None)
@given(tables(min_columns=2))
def test_hilbert_keys_are_paimons(data: tuple[pa.Table, list[pa.DataType]]) -> None:
    table, types = data
    names = table.column_names
    keys = sort_key(table, OrderType.HILBERT, names).to_pylist()
    for r, row in enumerate(table.to_pylist()):
        assert keys[r] == h_key([h_long(row[c], t) for c, t in zip(names, types, strict=True)]), row


@settings(max_examples=100, deadline=None)
@given(tables())
def test_order_is_ascending_nulls_first_and_stable(data: tuple[pa.Table, list[pa.DataType]]) -> None:
    table, _ = data
    names = table.column_names
    idx = sort_indices(table, OrderType.ORDER, names).to_pylist()
    rows = table.to_pylist()

    def key(i: int) -> tuple[Any, ...]:
        return tuple((0, 0) if rows[i][c] is None else (1, _nan_last(rows[i][c])) for c in names) + (i,)

    assert idx == sorted(range(len(rows)), key=key)


def _nan_last(v: Any) -> Any:
    """NaN after every number, infinity included (Spark's order)."""
    if isinstance(v, float):
        return (1, 0.0) if math.isnan(v) else (0, v)
    return v


def test_a_decimal_keeps_javas_first_eight_unscaled_bytes() -> None:
    t = pa.table({"d": pa.array([decimal.Decimal("1.00"), decimal.Decimal("-1.00"), decimal.Decimal("2.56")],
                                pa.decimal128(10, 2))})
    assert sort_key(t, OrderType.ZORDER, ["d"]).to_pylist() == [
        b"\x64" + bytes(7), b"\x9c" + bytes(7), b"\x01\x00" + bytes(6)]  # 100, -100, 256: minimal, left-aligned


# ---- refusals ----------------------------------------------------------------------------------------------------
def test_refusals_name_the_problem() -> None:
    t = pa.table({"a": pa.array([1], pa.int32()), "l": pa.array([[1]], pa.list_(pa.int32()))})
    with pytest.raises(SchemaError, match=r"Can't find column 'x'"):
        sort_indices(t, OrderType.ZORDER, ["x"])
    with pytest.raises(SchemaError, match="order column could not be empty"):
        sort_indices(t, OrderType.ORDER, [])
    with pytest.raises(SchemaError, match="Hilbert sort needs at least two columns"):
        sort_indices(t, OrderType.HILBERT, ["a"])
    with pytest.raises(UnsupportedError, match=r"column 'l' of type list<item: int32> cannot be ordered by zorder"):
        sort_indices(t, OrderType.ZORDER, ["a", "l"])
    with pytest.raises(UnsupportedError, match="order strategy 'none'"):
        sort_indices(t, OrderType.NONE, ["a"])


def test_more_columns_than_the_lookup_tables_take_interleave_bit_by_bit() -> None:
    t = pa.table({f"c{i}": pa.array([i * 37 - 100, None, 2 ** 40 + i], pa.int64()) for i in range(10)})
    t = t.append_column("s", pa.array(["abc", "", None]))
    keys = sort_key(t, OrderType.ZORDER, t.column_names, 3).to_pylist()
    for r, row in enumerate(t.to_pylist()):
        assert keys[r] == interleave([z_bytes(v, t.schema.field(c).type, 3) for c, v in row.items()])


@settings(max_examples=150, deadline=None)
@given(tables(min_columns=2), st.sampled_from([OrderType.ZORDER, OrderType.HILBERT]))
def test_a_curves_row_order_is_that_of_paimons_keys(data: tuple[pa.Table, list[pa.DataType]],
                                                     strategy: OrderType) -> None:
    table, _ = data
    names = table.column_names
    keys = sort_key(table, strategy, names).to_pylist()
    assert sort_indices(table, strategy, names).to_pylist() == sorted(range(len(keys)), key=lambda i: (keys[i], i))


@pytest.mark.parametrize("dims", [7, 8, 9])
def test_a_hilbert_order_of_many_columns_is_that_of_paimons_keys(dims: int) -> None:
    """From 8 dimensions Java cuts the index's bytes to 63: the order follows the cut key, not the index."""
    rng = random.Random(dims)
    table = pa.table({f"c{i}": pa.array([rng.choice([None, rng.randrange(-2 ** 63, 2 ** 63), rng.randrange(4)])
                                        for _ in range(300)], pa.int64()) for i in range(dims)})
    keys = sort_key(table, OrderType.HILBERT, table.column_names).to_pylist()
    assert sort_indices(table, OrderType.HILBERT, table.column_names).to_pylist() == \
        sorted(range(len(keys)), key=lambda i: (keys[i], i))


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 4).flatmap(lambda k: st.lists(
    st.lists(st.sampled_from([0, 1, 2, 1 << 40, (1 << 63) + 5, (1 << 64) - 1]) | st.integers(0, (1 << 64) - 1),
             min_size=k, max_size=k), max_size=60)), st.integers(0, 63))
def test_argsort_words_is_a_stable_word_by_word_sort(rows: list[list[int]], shift: int) -> None:
    k = len(rows[0]) if rows else 1
    words = np.array(rows, dtype=np.uint64).reshape(len(rows), k) >> np.uint64(shift)  # a shared prefix of zeros
    expected = np.lexsort(tuple(words[:, i] for i in range(k - 1, -1, -1))) if len(rows) else np.arange(0)
    assert argsort_words(words).tolist() == expected.tolist()


def test_key_words_pad_and_read_big_endian() -> None:
    keys = pa.array([b"\x00\x01\x02", b"\xff\x00\x00"], pa.binary(3))
    assert key_words(keys).tolist() == [[0x0001020000000000], [0xFF00000000000000]]
    assert key_words(keys.slice(1)).tolist() == [[0xFF00000000000000]]


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 4).flatmap(lambda d: st.lists(st.lists(st.integers(0, (1 << 64) - 1), min_size=d, max_size=d),
                                                     min_size=1, max_size=30)))
def test_the_word_interleave_is_the_byte_interleave(rows: list[list[int]]) -> None:
    values = np.array(rows, dtype=np.uint64).T
    as_bytes = [v.astype(">u8").view(np.uint8).reshape(len(v), 8) for v in values]
    assert interleave_words(list(values)).tolist() == as_words(byte_interleave(as_bytes)).tolist()


NUMBER_COLUMNS = [
    (pa.int8(), st.integers(-128, 127)), (pa.int64(), st.integers(-2 ** 63, 2 ** 63 - 1)),
    (pa.uint64(), st.integers(0, 2 ** 63 - 1)), (pa.bool_(), st.booleans()),
    (pa.float64(), st.floats(allow_nan=True) | st.sampled_from([-0.0, 0.0, math.nan, -math.inf])),
    (pa.float32(), st.floats(width=32, allow_nan=True)), (pa.date32(), st.dates()),
    (pa.timestamp("ns"), st.integers(-2 ** 62, 2 ** 62)), (pa.time64("us"), st.integers(0, 86_400 * 10 ** 6 - 1)),
]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(range(len(NUMBER_COLUMNS))), min_size=1, max_size=3).flatmap(
    lambda picked: st.tuples(st.just(picked), st.integers(0, 25))).flatmap(
    lambda pn: st.tuples(st.just(pn[0]), *(st.lists(st.none() | NUMBER_COLUMNS[k][1], min_size=pn[1], max_size=pn[1])
                                            for k in pn[0]))))
def test_an_order_of_numbers_by_words_is_arrows_order(data: tuple[Any, ...]) -> None:
    """Numbers take the word sort; it orders exactly as Arrow's sort of the columns (nulls first, NaN last, -0.0
    equal to 0.0, stable), which strings and decimals still take."""
    picked, *values = data
    table = pa.table({f"c{i}": pa.array(v, NUMBER_COLUMNS[k][0]) for i, (k, v) in enumerate(zip(picked, values,
                                                                                                strict=True))})
    names = table.column_names
    keys = []
    flagged = table
    for i, c in enumerate(names):
        if pa.types.is_floating(table.schema.field(c).type):
            flagged = flagged.append_column(f"nan{i}", pc.is_nan(table.column(c)))
            keys.append((f"nan{i}", "ascending", "at_start"))
        keys.append((c, "ascending", "at_start"))
    arrow = pc.sort_indices(flagged, sort_keys=keys).to_pylist()
    assert sort_indices(table, OrderType.ORDER, names).to_pylist() == arrow
