"""BinaryRow encoding: layouts, real bytes written by pypaimon 2.1.0, round trips, errors."""

from __future__ import annotations

import struct
from datetime import UTC, date, datetime, time, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.errors import DataError, TableEngineError, UnsupportedError
from table_engine.format.binary_row import (
    EMPTY_ROW,
    bitset_width,
    decode_binary_row,
    decode_row,
    encode_binary_row,
    encode_row,
    unscaled_bytes,
)
from table_engine.types import DataField, DataType, parse_type
from tests.budget import examples


def T(sql: str) -> DataType:
    return parse_type(sql)


ALLTYPES = [T(s) for s in (
    "BIGINT NOT NULL", "BOOLEAN", "TINYINT", "SMALLINT", "INT", "FLOAT", "DOUBLE", "DECIMAL(10, 2)", "DECIMAL(38, 6)",
    "STRING", "BYTES", "DATE", "TIME(0)", "TIMESTAMP(6)", "TIMESTAMP(3)", "TIMESTAMP(6) WITH LOCAL TIME ZONE",
)]

# _VALUE_STATS._MIN_VALUES / _MAX_VALUES of a manifest pypaimon 2.1.0 wrote (metadata.stats-mode=full) for a table
# with the ALLTYPES columns and rows (-5, True, -3, -300, -70000, -1.5, -1.25, -1.23, -12345678901234567890.123456,
# 'short', b'\0\1', 1969-12-31, 00:00, 1969-12-31 23:59:59.999999, 1960-01-01 00:00:00.001, 2024-01-01T01:02:03.456789Z)
# and (7, False, 5, 300, None, 2.25, 2.5, 99.99, 0.000001, 'a string longer than seven', b'0123456789abcdef!',
# 2024-02-29, 23:59:59.999, 2024-01-01 01:02:03.456789, 2024-01-01 01:02:03.456, None).
STATS_MIN = bytes.fromhex(
    "000000100000000000000000fbffffffffffffff0000000000000000fd00000000000000d4fe00000000000090eefeff00000000"
    "0000c0bf00000000000000000000f4bf85ffffffffffffff0b000000880000001a000000980000000001000000000082ffffffff"
    "000000000000000000000000583e0f00b80000000134a183b6ffffff080a0c00c0000000f5c9b367dd8155952345400000000000"
    "6120737472696e67206c6f6e676572207468616e20736576656e000000000000ffffffffffffffffc0c48ac28c010000"
)
STATS_MAX = bytes.fromhex(
    "0000001000000000000000000700000000000000010000000000000005000000000000002c0100000000000090eefeff00000000"
    "000010400000000000000000000004400f27000000000000010000008800000073686f72740000851100000098000000464d0000"
    "00000000ff5b260500000000080a0c00b0000000c0c48ac28c010000080a0c00b8000000010000000000000000000000000000"
    "00303132333435363738396162636465662100000000000000c0c48ac28c010000c0c48ac28c010000"
)
STATS_MIN_VALUES = [
    -5, False, -3, -300, -70000, -1.5, -1.25, Decimal("-1.23"), Decimal("-12345678901234567890.123456"),
    "a string longer than seven", b"\x00\x01", date(1969, 12, 31), time(0, 0),
    datetime(1969, 12, 31, 23, 59, 59, 999999), datetime(1960, 1, 1, 0, 0, 0, 1000),
    datetime(2024, 1, 1, 1, 2, 3, 456789, tzinfo=UTC),
]
STATS_MAX_VALUES = [
    7, True, 5, 300, -70000, 2.25, 2.5, Decimal("99.99"), Decimal("0.000001"), "short", b"0123456789abcdef!",
    date(2024, 2, 29), time(23, 59, 59, 999000), datetime(2024, 1, 1, 1, 2, 3, 456789),
    datetime(2024, 1, 1, 1, 2, 3, 456000), datetime(2024, 1, 1, 1, 2, 3, 456789, tzinfo=UTC),
]


# ---- layouts -----------------------------------------------------------------------------------------------------

def test_empty_row_and_bitset_width():
    assert EMPTY_ROW == bytes(12)
    assert encode_row([], []) == EMPTY_ROW
    assert decode_row(EMPTY_ROW, []) == []
    assert [bitset_width(n) for n in (0, 1, 56, 57, 120, 121)] == [8, 8, 8, 16, 16, 24]


def test_documented_examples():
    assert encode_row([10], [T("BIGINT")]).hex() == "00000001" "0000000000000000" "0a00000000000000"
    dt = encode_row(["2024-01-01"], [T("STRING")])
    assert dt.hex() == "00000001" "0000000000000000" "0a00000010000000" "323032342d30312d3031000000000000"
    assert len(dt) == 36


@pytest.mark.parametrize(("raw", "types", "values"), [
    # _PARTITION p='p1' and _MIN_KEY id=0 / id=4 of pypaimon's alltypes sample (PK (id, p), partition p)
    ("0000000100000000000000007031000000000082", ["STRING"], ["p1"]),
    ("0000000100000000000000000000000000000000", ["BIGINT NOT NULL"], [0]),
    ("0000000100000000000000000400000000000000", ["BIGINT NOT NULL"], [4]),
    # app sample (append, stats-mode full): _PARTITION and value stats over (a INT, s STRING, dt STRING)
    ("0000000100000000000000000a00000010000000323032342d30312d3032000000000000", ["STRING"], ["2024-01-02"]),
    ("000000030000000000000000010000000000000078000000000000810a00000020000000323032342d30312d3031000000000000",
     ["INT", "STRING", "STRING"], [1, "x", "2024-01-01"]),
    ("00000003000000000000000003000000000000000a000000200000000a000000300000007a7a7a7a7a7a7a7a7a7a000000000000"
     "323032342d30312d3032000000000000", ["INT", "STRING", "STRING"], [3, "zzzzzzzzzz", "2024-01-02"]),
])
def test_real_pypaimon_rows(raw, types, values):
    data = bytes.fromhex(raw)
    ts = [T(t) for t in types]
    assert decode_row(data, ts) == values
    assert encode_row(values, ts) == data


@pytest.mark.parametrize(("raw", "values"), [(STATS_MIN, STATS_MIN_VALUES), (STATS_MAX, STATS_MAX_VALUES)])
def test_real_pypaimon_stats_all_types(raw, values):
    assert decode_row(raw, ALLTYPES) == values
    assert encode_row(values, ALLTYPES) == raw


def test_inline_and_var_strings():
    seven = encode_binary_row(["abcdefg"], [T("STRING")])
    assert seven[8:] == b"abcdefg\x87" and len(seven) == 16
    eight = encode_binary_row(["abcdefgh"], [T("STRING")])
    assert struct.unpack_from("<Q", eight, 8)[0] == (16 << 32) | 8
    assert eight[16:] == b"abcdefgh" and len(eight) == 24
    nine = encode_binary_row([b"123456789"], [T("BYTES")])
    assert nine[16:] == b"123456789" + bytes(7)
    assert encode_binary_row([""], [T("STRING")])[8:] == bytes(7) + b"\x80"
    # two-byte UTF-8 characters count in bytes: 4 x 'é' = 8 bytes goes to the var part
    assert struct.unpack_from("<Q", encode_binary_row(["éééé"], [T("STRING")]), 8)[0] == (16 << 32) | 8


def test_null_bits_and_slots():
    row = encode_binary_row([None, 1, None], [T("INT"), T("INT"), T("STRING")])
    assert row[1] == 0b101 and row[0] == 0
    assert row[8:16] == bytes(8) and row[24:32] == bytes(8)
    wide = [T("INT")] * 60
    values: list[object] = [None if i % 7 == 0 else i for i in range(60)]
    data = encode_row(values, wide)
    assert len(data) == 4 + 16 + 8 * 60
    assert decode_row(data, wide) == values


def test_null_non_compact_reserves_var_part_like_java():
    row = encode_binary_row([None, None, 1], [T("DECIMAL(20, 2)"), T("TIMESTAMP(6)"), T("INT")])
    assert len(row) == 8 + 24 + 16 + 8
    assert struct.unpack_from("<Q", row, 8)[0] == 32 << 32
    assert struct.unpack_from("<Q", row, 16)[0] == 48 << 32
    assert decode_binary_row(row, [T("DECIMAL(20, 2)"), T("TIMESTAMP(6)"), T("INT")]) == [None, None, 1]
    # pypaimon's form (zero slot, no var bytes) decodes the same
    assert decode_row(bytes.fromhex("00000001" "0001000000000000" "0000000000000000"), [T("DECIMAL(20, 2)")]) == [None]


def test_big_decimal_bytes_are_java_minimal():
    assert unscaled_bytes(0) == b"\x00"
    assert unscaled_bytes(127) == b"\x7f" and unscaled_bytes(128) == b"\x00\x80"
    assert unscaled_bytes(-128) == b"\x80" and unscaled_bytes(-129) == b"\xff\x7f"
    row = encode_binary_row([Decimal("-1.28")], [T("DECIMAL(20, 2)")])
    assert struct.unpack_from("<Q", row, 8)[0] == (16 << 32) | 1
    assert row[16:] == b"\x80" + bytes(15)


def test_numpy_integers_accepted():
    np = pytest.importorskip("numpy")
    assert encode_row([np.int64(-3), np.int8(4)], [T("BIGINT"), T("TINYINT")]) == encode_row([-3, 4], [T("BIGINT"),
                                                                                                T("TINYINT")])


def test_decimal_compact_and_rounding():
    t = T("DECIMAL(10, 2)")
    assert encode_binary_row([Decimal("-12345.67")], [t])[8:] == struct.pack("<q", -1234567)
    assert decode_row(encode_row([Decimal("1.005")], [t]), [t]) == [Decimal("1.01")]  # HALF_UP
    assert decode_row(encode_row([3], [t]), [t]) == [Decimal("3.00")]


def test_timestamp_layouts():
    ts = datetime(2024, 1, 1, 1, 2, 3, 456789)
    millis = 1704070923456
    assert encode_binary_row([ts], [T("TIMESTAMP(3)")])[8:] == struct.pack("<q", millis)
    row = encode_binary_row([ts], [T("TIMESTAMP(9)")])
    assert struct.unpack_from("<Q", row, 8)[0] == (16 << 32) | 789000
    assert row[16:] == struct.pack("<q", millis)
    # aware -> UTC; naive is taken as UTC
    aware = datetime(2024, 1, 1, 3, 2, 3, 456789, tzinfo=timezone(timedelta(hours=2)))
    assert encode_row([aware], [T("TIMESTAMP(6) WITH LOCAL TIME ZONE")]) == encode_row([ts], [T("TIMESTAMP(6)")])
    assert decode_row(encode_row([aware], [T("TIMESTAMP(6) WITH LOCAL TIME ZONE")]),
                      [T("TIMESTAMP(6) WITH LOCAL TIME ZONE")]) == [ts.replace(tzinfo=UTC)]


def test_decode_fewer_stored_fields():
    types = [T("INT"), T("STRING"), T("BIGINT")]
    assert decode_row(EMPTY_ROW, types) == [None, None, None]
    assert decode_row(b"", types) == [None, None, None]
    assert decode_row(encode_row([5], [T("INT")]), types) == [5, None, None]
    assert decode_row(encode_row([5, "x", 9], types), types[:1]) == [5]


def test_nested_row_round_trip():
    rt = DataType("ROW", fields=(DataField(0, "x", T("INT")), DataField(1, "y", T("STRING"))))
    types = [T("INT"), rt]
    for value in ({"x": 1, "y": "a longer string"}, {"x": None, "y": "a"}):
        assert decode_row(encode_row([7, value], types), types) == [7, value]
    assert decode_row(encode_row([7, (1, "b")], types), types) == [7, {"x": 1, "y": "b"}]


# ---- errors ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "sql"), [
    (200, "TINYINT"), (1 << 40, "INT"), ("1", "INT"), (True, "BIGINT"), (1.5, "BIGINT"), (b"x", "STRING"),
    ("x", "BYTES"), (Decimal("123456789.1"), "DECIMAL(10, 2)"), ("abc", "DECIMAL(10, 2)"),
    (Decimal("NaN"), "DECIMAL(5, 0)"),
    ("2024-01-01", "DATE"), ("00:00", "TIME"), ("2024", "TIMESTAMP(3)"), (1e300, "FLOAT"), ("x", "DOUBLE"),
])
def test_bad_values_raise_data_error(value, sql):
    with pytest.raises(DataError):
        encode_row([value], [T(sql)])


def test_unsupported_and_malformed():
    with pytest.raises(UnsupportedError):
        encode_row([[1]], [T("ARRAY<INT>")])
    with pytest.raises(UnsupportedError):
        decode_row(bytes.fromhex("00000001" "0000000000000000" "0100000000000000"), [T("MAP<INT, INT>")])
    assert decode_row(encode_row([None], [T("ARRAY<INT>")]), [T("ARRAY<INT>")]) == [None]
    with pytest.raises(DataError):
        encode_row([1, 2], [T("INT")])
    with pytest.raises(DataError):
        decode_row(encode_row(["a long string value"], [T("STRING")])[:-8], [T("STRING")])
    with pytest.raises(DataError):
        decode_row(bytes.fromhex("00000001" "0000000000000000" "ffffffff"), [T("BIGINT")])
    with pytest.raises(DataError, match="UTF-8"):
        decode_row(bytes.fromhex("00000001" "0000000000000000" "ff00000000000081"), [T("STRING")])
    with pytest.raises(DataError, match="claims"):
        decode_row(bytes.fromhex("00000001" "0000000000000000" "ff00000000000088"), [T("STRING")])
    with pytest.raises(DataError, match="TIME"):
        decode_row(bytes.fromhex("00000001" "0000000000000000" "ffffffff00000000"), [T("TIME")])
    with pytest.raises(TableEngineError):  # far outside datetime's range
        decode_row(bytes.fromhex("00000001" "0000000000000000" "ffffffffffffff7f"), [T("TIMESTAMP(3)")])


# ---- round trips -------------------------------------------------------------------------------------------------

ROUND_TRIPS: list[tuple[str, list[object]]] = [
    ("BOOLEAN", [True, False]),
    ("TINYINT", [-128, 127, 0]),
    ("SMALLINT", [-32768, 32767]),
    ("INT", [-(1 << 31), (1 << 31) - 1]),
    ("BIGINT", [-(1 << 63), (1 << 63) - 1, -1]),
    ("FLOAT", [-1.5, 3.4028234663852886e38, float("inf"), -0.0]),
    ("DOUBLE", [-1e-300, 1.7976931348623157e308, float("-inf")]),
    ("DECIMAL(18, 4)", [Decimal("-99999999999999.9999"), Decimal("0.0000")]),
    ("DECIMAL(38, 10)", [Decimal("-9999999999999999999999999999.9999999999"), Decimal("1E-10"), Decimal("-1.28E-8")]),
    ("DECIMAL(19, 0)", [Decimal("9223372036854775808"), Decimal("-9223372036854775809")]),
    ("STRING", ["", "a", "1234567", "12345678", "ünïcödé ✓", "🙂" * 2, "x" * 1000]),
    ("CHAR(3)", ["abc"]),
    ("BYTES", [b"", b"\x00" * 7, b"\xff" * 8, bytes(range(256))]),
    ("BINARY(4)", [b"\x01\x02\x03\x04"]),
    ("DATE", [date(1, 1, 1), date(1969, 12, 31), date(9999, 12, 31)]),
    ("TIME", [time(0), time(12, 30, 15, 123000), time(23, 59, 59, 999000)]),
    ("TIMESTAMP(0)", [datetime(1900, 1, 1), datetime(2100, 12, 31, 23, 59, 59)]),
    ("TIMESTAMP(3)", [datetime(1969, 12, 31, 23, 59, 59, 999000), datetime(2024, 2, 29, 12, 0, 0, 1000)]),
    ("TIMESTAMP(6)", [datetime(1969, 12, 31, 23, 59, 59, 999999), datetime(1, 1, 1),
                      datetime(9999, 12, 31, 23, 59, 59)]),
    ("TIMESTAMP(9)", [datetime(1960, 6, 1, 0, 0, 0, 1)]),
    ("TIMESTAMP(3) WITH LOCAL TIME ZONE", [datetime(2024, 1, 1, tzinfo=UTC)]),
    ("TIMESTAMP(6) WITH LOCAL TIME ZONE", [datetime(1950, 1, 1, 0, 0, 0, 5, tzinfo=UTC)]),
]


@pytest.mark.parametrize(("sql", "values"), ROUND_TRIPS)
def test_round_trip_each_type(sql, values):
    t = T(sql)
    for v in [*values, None]:
        got = decode_row(encode_row([v], [t]), [t])
        assert got == [v] and type(got[0]) is type(v)
    # all values side by side with the type repeated, plus a null in the middle
    row = [*values, None, values[0]]
    types = [t] * len(row)
    assert decode_row(encode_row(row, types), types) == row


def test_round_trip_every_type_in_one_row():
    types = [T(sql) for sql, _ in ROUND_TRIPS]
    for i in range(3):
        row = [vals[i % len(vals)] for _, vals in ROUND_TRIPS]
        assert decode_row(encode_row(row, types), types) == row
        nulls = [None if j % 2 == i % 2 else v for j, v in enumerate(row)]
        assert decode_row(encode_row(nulls, types), types) == nulls


def _f32(x: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


ATOMS: list[tuple[str, st.SearchStrategy[object]]] = [
    ("BOOLEAN", st.booleans()),
    ("TINYINT", st.integers(-128, 127)),
    ("SMALLINT", st.integers(-(1 << 15), (1 << 15) - 1)),
    ("INT", st.integers(-(1 << 31), (1 << 31) - 1)),
    ("BIGINT", st.integers(-(1 << 63), (1 << 63) - 1)),
    ("FLOAT", st.floats(width=32, allow_nan=False)),
    ("DOUBLE", st.floats(allow_nan=False)),
    ("DECIMAL(12, 3)", st.decimals(min_value=-(10**9) + 1, max_value=10**9 - 1, places=3)),
    ("DECIMAL(38, 5)", st.decimals(min_value=-(10**33) + 1, max_value=10**33 - 1, places=5)),
    ("STRING", st.text(max_size=20)),
    ("BYTES", st.binary(max_size=20)),
    ("DATE", st.dates()),
    ("TIME", st.times().map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000))),
    ("TIMESTAMP(3)", st.datetimes().map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))),
    ("TIMESTAMP(6)", st.datetimes()),
    ("TIMESTAMP(6) WITH LOCAL TIME ZONE", st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30),
                                                       timezones=st.just(UTC))),
]


@st.composite
def typed_rows(draw: st.DrawFn) -> tuple[list[DataType], list[object]]:
    picks = draw(st.lists(st.sampled_from(range(len(ATOMS))), max_size=12))
    types = [T(ATOMS[i][0]) for i in picks]
    values = [draw(st.none() | ATOMS[i][1]) for i in picks]
    return types, values


@settings(max_examples=examples(300), deadline=None)
@given(typed_rows())
def test_round_trip_property(case):
    types, values = case
    data = encode_row(values, types)
    assert len(data) % 8 == 4
    assert struct.unpack(">i", data[:4])[0] == len(types)
    assert encode_binary_row(values, types) == data[4:]
    expected = [_f32(v) if t.root == "FLOAT" and v is not None else v for t, v in zip(types, values)]
    assert decode_row(data, types) == expected
