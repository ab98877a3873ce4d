"""Vectorized decoding of serialized BinaryRows equals decoding them one by one (``decode_row``)."""

from __future__ import annotations

import datetime
from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.format.binary_row import encode_row
from table_engine.format.binary_row_arrow import decode_rows
from table_engine.types import DataType, parse_type
from tests.budget import examples

UTC = datetime.UTC

_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "BOOLEAN": st.booleans(),
    "TINYINT": st.integers(-128, 127),
    "SMALLINT": st.integers(-2**15, 2**15 - 1),
    "INT": st.integers(-2**31, 2**31 - 1),
    "BIGINT": st.integers(-2**63, 2**63 - 1),
    "FLOAT": st.floats(width=32, allow_nan=False),
    "DOUBLE": st.floats(allow_nan=False),
    "DATE": st.dates(),
    "DECIMAL(18, 4)": st.decimals(min_value=-10**13, max_value=10**13, places=4),
    "DECIMAL(30, 2)": st.decimals(min_value=-10**27, max_value=10**27, places=2),  # not compact: per row
    "TIMESTAMP(3)": st.datetimes(datetime.datetime(1900, 1, 1), datetime.datetime(2200, 1, 1))
    .map(lambda v: v.replace(microsecond=v.microsecond // 1000 * 1000)),
    "TIMESTAMP_LTZ(3)": st.datetimes(datetime.datetime(1900, 1, 1), datetime.datetime(2200, 1, 1))
    .map(lambda v: v.replace(microsecond=v.microsecond // 1000 * 1000, tzinfo=UTC)),
    "TIMESTAMP(0)": st.datetimes(datetime.datetime(1900, 1, 1), datetime.datetime(2200, 1, 1))
    .map(lambda v: v.replace(microsecond=0)),
    "STRING": st.text(st.characters(blacklist_categories=("Cs",)), max_size=20),
    "VARCHAR(5)": st.text(max_size=5),
    "BYTES": st.binary(max_size=12),
}


@st.composite
def rows_of(draw: st.DrawFn) -> tuple[list[DataType], list[list[Any]]]:
    names = draw(st.lists(st.sampled_from(sorted(_VALUES)), min_size=1, max_size=5))
    types = [parse_type(n) for n in names]
    rows = draw(st.lists(st.tuples(*[st.none() | _VALUES[n] for n in names]).map(list), max_size=20))
    return types, rows


@settings(max_examples=examples(300), deadline=None)
@given(rows_of())
def test_decode_rows_equals_decode_row(case: tuple[list[DataType], list[list[Any]]]) -> None:
    types, rows = case
    encoded = [encode_row(r, types) for r in rows]
    columns = decode_rows(encoded, types)
    assert [c.to_pylist() for c in columns] == [[r[i] for r in rows] for i in range(len(types))]


def test_types_and_empty_input() -> None:
    types = [parse_type("DATE"), parse_type("STRING"), parse_type("DECIMAL(10, 2)")]
    assert [c.type for c in decode_rows([], types)] == [pa.date32(), pa.string(), pa.decimal128(10, 2)]
    one = decode_rows([encode_row([datetime.date(2024, 1, 1), "a" * 30, None], types)], types)
    assert [c.type for c in one] == [pa.date32(), pa.string(), pa.decimal128(10, 2)]
    assert [c.to_pylist() for c in one] == [[datetime.date(2024, 1, 1)], ["a" * 30], [None]]
