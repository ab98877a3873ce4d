"""Bucket hashing: Murmur3 over BinaryRows, vectorized column hashing, Java bucket arithmetic, pypaimon cross-check."""

from __future__ import annotations

import os
import pickle
import random
import subprocess
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.errors import DataError, UnsupportedError
from table_engine.format.binary_row import encode_binary_row, encode_row
from table_engine.format.bucket import bucket_of, bucket_of_hash, hash_bytes, hash_key_columns
from table_engine.types import DataType, from_arrow_type, parse_type
from tests.budget import examples


def T(sql: str) -> DataType:
    return parse_type(sql)


def scalar_hashes(columns, types):
    rows = zip(*[c.to_pylist() for c in columns])
    return [hash_bytes(encode_binary_row(list(r), types)) for r in rows]


def assert_vectorized_matches_scalar(columns, types):
    got = hash_key_columns(columns, types)
    assert got.dtype == np.int32
    assert got.tolist() == scalar_hashes(columns, types)


# ---- golden values computed by pypaimon 2.1.0 (GenericRowSerializer + _hash_bytes_by_words + _bucket_from_hash) ----

GOLDEN = [
    (["BIGINT"], [10], "0000000100000000000000000a00000000000000", 124495984, [0, 1, 4, 112]),
    (["BIGINT"], [-1], "000000010000000000000000ffffffffffffffff", -821098432, [0, 1, 0, 64]),
    (["BIGINT"], [(1 << 63) - 1], "000000010000000000000000ffffffffffffff7f", -1566569095, [1, 1, 0, 7]),
    (["INT", "STRING"], [7, "abcdefg"], "00000002000000000000000007000000000000006162636465666787", -72569542,
     [0, 1, 3, 70]),
    (["INT", "STRING"], [7, "abcdefgh"], "000000020000000000000000070000000000000008000000180000006162636465666768",
     -231975178, [0, 1, 1, 10]),
    (["STRING"], [""], "0000000100000000000000000000000000000080", 302122119, [1, 0, 5, 7]),
    (["STRING"], ["日本語のテキスト"],
     "0000000100000000000000001800000010000000e697a5e69cace8aa9ee381aee38386e382ade382b9e38388", 238882228,
     [0, 1, 4, 52]),
    (["DATE", "BIGINT"], [date(2024, 1, 1), 42], "0000000200000000000000000b4d0000000000002a00000000000000",
     1582619026, [0, 1, 2, 18]),
    (["DECIMAL(10, 2)"], [Decimal("-12345.67")], "0000000100000000000000007929edffffffffff", 1272263675,
     [1, 2, 4, 123]),
    (["TIMESTAMP(3)"], [datetime(2024, 1, 1, 1, 2, 3, 456000)], "000000010000000000000000c0c48ac28c010000",
     -1508629276, [0, 1, 0, 28]),
    (["TIMESTAMP(6)"], [datetime(1969, 12, 31, 23, 59, 59, 999999)],
     "000000010000000000000000583e0f0010000000ffffffffffffffff", 1236894319, [1, 1, 3, 111]),
    (["DECIMAL(38, 6)"], [Decimal("12345678901234567890.123456")],
     "0000000100000000000000000b000000100000000a364c98227eaa6adcbac00000000000", 1724609869, [1, 1, 3, 77]),
    (["BOOLEAN", "SMALLINT", "TINYINT", "DOUBLE", "FLOAT"], [True, -2, -3, 2.5, -0.75],
     "0000000500000000000000000100000000000000feff000000000000fd000000000000000000000000000440000040bf00000000",
     -1459386240, [0, 0, 4, 0]),
    (["STRING", "INT"], [None, 5], "00000002000100000000000000000000000000000500000000000000", 1401948696,
     [0, 0, 1, 24]),
    (["TIME(0)"], [time(23, 59, 59, 999000)], "000000010000000000000000ff5b260500000000", -370972758, [0, 0, 2, 86]),
    (["BYTES"], [b"\x00\xff" * 5], "0000000100000000000000000a0000001000000000ff00ff00ff00ff00ff000000000000",
     128420663, [1, 2, 0, 55]),
]


@pytest.mark.parametrize(("sqls", "values", "raw", "expected_hash", "buckets"), GOLDEN)
def test_golden_pypaimon_values(sqls, values, raw, expected_hash, buckets):
    types = [T(s) for s in sqls]
    assert encode_row(values, types).hex() == raw
    assert hash_bytes(bytes.fromhex(raw)[4:]) == expected_hash
    arrow_types = [None if v is None else pa.scalar(v).type for v in values]
    columns = [pa.array([v], type=at or pa.string()) for v, at in zip(values, arrow_types)]
    columns = [c if s != "FLOAT" else c.cast(pa.float32()) for c, s in zip(columns, sqls)]
    hashes = hash_key_columns(columns, types)
    assert hashes.tolist() == [expected_hash]
    assert [int(bucket_of(hashes, n)[0]) for n in (2, 3, 7, 128)] == buckets
    assert [bucket_of_hash(expected_hash, n) for n in (2, 3, 7, 128)] == buckets


def test_sample_table_buckets():
    # pypaimon's alltypes sample (PK (id, p), partition p, bucket=2) put ids 1, 2, 4 in bucket 0 and 0, 3 in bucket 1
    hashes = hash_key_columns([pa.array([0, 1, 2, 3, 4], pa.int64())], [T("BIGINT NOT NULL")])
    assert bucket_of(hashes, 2).tolist() == [1, 0, 0, 1, 0]


# ---- Murmur3 and bucket arithmetic -----------------------------------------------------------------------------

def test_hash_bytes_basics():
    # values from pypaimon's _hash_bytes_by_words
    assert hash_bytes(b"") == 142593372
    assert hash_bytes(bytes(8)) == -1670924195  # the empty BinaryRow
    assert hash_bytes(b"abcd") == -396302900
    with pytest.raises(DataError):
        hash_bytes(b"abc")


def test_bucket_of_java_remainder():
    hashes = np.array([-(1 << 31), -7, -1, 0, 1, 7, (1 << 31) - 1], dtype=np.int32)
    for n in (1, 2, 3, 4, 7, 16, 128, 1000):
        java = [abs(int(h) - int(int(h) / n) * n) for h in hashes.tolist()]
        assert bucket_of(hashes, n).tolist() == java
        assert [bucket_of_hash(int(h), n) for h in hashes] == java
    assert bucket_of(hashes, 3).dtype == np.int32
    with pytest.raises(DataError):
        bucket_of(hashes, 0)
    with pytest.raises(DataError):
        bucket_of_hash(1, -1)


# ---- vectorized == scalar --------------------------------------------------------------------------------------

STRINGS = ["", "a", "1234567", "12345678", "123456789012345", "1234567890123456", "ü" * 4, "🙂", "x" * 300, None]


def test_strings_short_long_nulls_and_layout():
    col = pa.array(STRINGS * 3)
    assert_vectorized_matches_scalar([col], [T("STRING")])
    assert_vectorized_matches_scalar([col, pa.array(list(range(30)), pa.int32()), col],
                                     [T("STRING"), T("INT"), T("STRING")])
    assert_vectorized_matches_scalar([col.cast(pa.large_string())], [T("STRING")])
    assert_vectorized_matches_scalar([col.cast(pa.string_view())], [T("STRING")])
    sliced = col.slice(3, 20)
    assert_vectorized_matches_scalar([sliced], [T("VARCHAR(100)")])
    chunked = pa.chunked_array([col.slice(0, 7), col.slice(7)])
    assert_vectorized_matches_scalar([chunked], [T("STRING")])


def test_binary_columns():
    values = [b"", b"\x00", bytes(7), bytes(8), bytes(range(40)), None]
    assert_vectorized_matches_scalar([pa.array(values, pa.binary())], [T("BYTES")])
    assert_vectorized_matches_scalar([pa.array(values, pa.large_binary())], [T("BYTES")])
    fixed = pa.array([b"abcd", None, b"\x00\x00\x00\x01"], pa.binary(4))
    assert_vectorized_matches_scalar([fixed], [T("BINARY(4)")])


def test_fixed_width_types_with_nulls_and_offsets():
    n = 40
    rng = random.Random(7)
    cols = [
        pa.array([rng.choice([True, False, None]) for _ in range(n)], pa.bool_()),
        pa.array([rng.choice([-128, 127, 0, None]) for _ in range(n)], pa.int8()),
        pa.array([rng.choice([-32768, 32767, -1, None]) for _ in range(n)], pa.int16()),
        pa.array([rng.choice([-(1 << 31), 5, None]) for _ in range(n)], pa.int32()),
        pa.array([rng.choice([-(1 << 63), (1 << 63) - 1, None]) for _ in range(n)], pa.int64()),
        pa.array([rng.choice([-0.0, 1.5, float("inf"), float("nan"), None]) for _ in range(n)], pa.float32()),
        pa.array([rng.choice([-0.0, 1e300, float("-inf"), float("nan"), None]) for _ in range(n)], pa.float64()),
        pa.array([rng.choice([date(1, 1, 1), date(2024, 2, 29), None]) for _ in range(n)], pa.date32()),
        pa.array([rng.choice([0, 86_399_999, None]) for _ in range(n)], pa.time32("ms")),
    ]
    types = [T(s) for s in ("BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DATE", "TIME")]
    assert_vectorized_matches_scalar(cols, types)
    assert_vectorized_matches_scalar([c.slice(5, 30) for c in cols], types)
    # widened inputs are cast to the key type
    assert_vectorized_matches_scalar([pa.array([1, None, -3], pa.int32())], [T("BIGINT")])
    assert_vectorized_matches_scalar([pa.array([1, None], pa.time64("us"))], [T("TIME")])


def test_decimals():
    small = [Decimal("-99999999.99"), Decimal("0.00"), Decimal("12.34"), None]
    assert_vectorized_matches_scalar([pa.array(small, pa.decimal128(10, 2))], [T("DECIMAL(10, 2)")])
    big = [Decimal("-128"), Decimal("-129"), Decimal("127"), Decimal("128"), Decimal("0"), Decimal("-1"), None,
           Decimal("9" * 38), Decimal("-" + "9" * 38), Decimal(-(1 << 64)), Decimal((1 << 64) - 1), Decimal(1 << 63)]
    arr = pa.array(big, pa.decimal128(38, 0))
    assert_vectorized_matches_scalar([arr], [T("DECIMAL(38, 0)")])
    assert_vectorized_matches_scalar([arr.slice(2), pa.array(["x" * 9] * 10)], [T("DECIMAL(38, 0)"), T("STRING")])
    assert_vectorized_matches_scalar([pa.array([Decimal("1.5"), None], pa.decimal128(20, 1))],
                                     [T("DECIMAL(20, 1)")])


def test_timestamps_all_units_and_precisions():
    values = [datetime(1969, 12, 31, 23, 59, 59, 999999), datetime(1900, 1, 1, 0, 0, 0, 1), None,
              datetime(2024, 1, 1, 1, 2, 3, 456789), datetime(1970, 1, 1)]
    for unit, precision in (("s", 0), ("ms", 3), ("us", 6), ("us", 3), ("ms", 6)):
        arr = pa.array(values, pa.timestamp("us")).cast(pa.timestamp(unit), safe=False)
        t = T(f"TIMESTAMP({precision})")
        got = hash_key_columns([arr], [t]).tolist()
        assert got == scalar_hashes([arr.cast(pa.timestamp("us"))], [t])
    ltz = pa.array(values, pa.timestamp("us", tz="UTC"))
    assert_vectorized_matches_scalar([ltz], [T("TIMESTAMP(6) WITH LOCAL TIME ZONE")])
    assert_vectorized_matches_scalar([ltz], [T("TIMESTAMP(3) WITH LOCAL TIME ZONE")])


def test_nanosecond_timestamps_keep_nanos():
    ns = pa.array([-1, 1_234_567_891, None], pa.timestamp("ns"))
    got = hash_key_columns([ns], [T("TIMESTAMP(9)")]).tolist()
    # -1 ns = millis -1, nano of milli 999999; 1_234_567_891 ns = millis 1234, nanos 567891
    expected = []
    for millis, nanos in ((-1, 999_999), (1234, 567_891)):
        row = bytearray(8) + ((16 << 32) | nanos).to_bytes(8, "little") + millis.to_bytes(8, "little", signed=True)
        expected.append(hash_bytes(bytes(row)))
    expected.append(hash_bytes(bytes.fromhex("0001000000000000" "0000000010000000" "0000000000000000")))
    assert got == expected


def test_empty_and_bad_input():
    assert hash_key_columns([pa.array([], pa.int64())], [T("BIGINT")]).tolist() == []
    with pytest.raises(DataError):
        hash_key_columns([pa.array([1])], [T("INT"), T("INT")])
    with pytest.raises(DataError):
        hash_key_columns([pa.array([1]), pa.array([1, 2])], [T("INT"), T("INT")])
    with pytest.raises(UnsupportedError):
        hash_key_columns([pa.array([[1]])], [T("ARRAY<INT>")])
    with pytest.raises(DataError):
        hash_key_columns([pa.array([1])], [T("STRING")])
    with pytest.raises(DataError):
        hash_key_columns([pa.array([1])], [T("TIMESTAMP(3)")])
    with pytest.raises(DataError):
        hash_key_columns([pa.array([Decimal("1.234")], pa.decimal128(5, 3))], [T("DECIMAL(5, 1)")])


ARROW_KEY_TYPES = {
    "BOOLEAN": st.booleans(), "TINYINT": st.integers(-128, 127), "INT": st.integers(-(1 << 31), (1 << 31) - 1),
    "BIGINT": st.integers(-(1 << 63), (1 << 63) - 1), "DOUBLE": st.floats(), "FLOAT": st.floats(width=32),
    "STRING": st.text(max_size=24), "BYTES": st.binary(max_size=24), "DATE": st.dates(),
    "DECIMAL(10, 2)": st.decimals(min_value=-(10**8) + 1, max_value=10**8 - 1, places=2),
    "DECIMAL(30, 4)": st.decimals(min_value=-(10**26) + 1, max_value=10**26 - 1, places=4),
    "TIMESTAMP(3)": st.datetimes().map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)),
    "TIMESTAMP(6)": st.datetimes(),
}


@st.composite
def key_columns(draw: st.DrawFn):
    sqls = draw(st.lists(st.sampled_from(sorted(ARROW_KEY_TYPES)), min_size=1, max_size=4))
    n = draw(st.integers(1, 25))
    types = [T(s) for s in sqls]
    from table_engine.types import to_arrow_type

    cols = [pa.array(draw(st.lists(st.none() | ARROW_KEY_TYPES[s], min_size=n, max_size=n)), to_arrow_type(t))
            for s, t in zip(sqls, types)]
    return cols, types


@settings(max_examples=examples(200), deadline=None)
@given(key_columns())
def test_vectorized_matches_scalar_property(case):
    cols, types = case
    assert_vectorized_matches_scalar(cols, types)


# ---- cross-check against pypaimon itself -----------------------------------------------------------------------

PYPAIMON_SCRIPT = r"""
import io, pickle, sys
import pyarrow as pa
from pypaimon import Schema
from pypaimon.schema.table_schema import TableSchema
from pypaimon.table.row.generic_row import GenericRow, GenericRowSerializer
from pypaimon.write.row_key_extractor import FixedBucketRowKeyExtractor, _hash_bytes_by_words

request = pickle.load(sys.stdin.buffer)
out = {}
for case in request["cases"]:
    batch = pa.ipc.open_stream(io.BytesIO(case["ipc"])).read_all().combine_chunks().to_batches()[0]
    keys = case["keys"]
    result = {"bytes": [], "hash": [], "buckets": {}}
    for n in request["bucket_counts"]:
        options = {"bucket": str(n)}
        if case["append"]:
            options["bucket-key"] = ",".join(keys)
        schema = Schema.from_pyarrow_schema(batch.schema, primary_keys=None if case["append"] else keys,
                                            options=options)
        table_schema = TableSchema.from_schema(0, schema)
        extractor = FixedBucketRowKeyExtractor(table_schema)
        result["buckets"][n] = list(extractor._extract_buckets_batch(batch))
    fields = table_schema.logical_bucket_key_fields
    columns = [batch.column(batch.schema.get_field_index(k)) for k in keys]
    for i in range(batch.num_rows):
        data = GenericRowSerializer.to_bytes(GenericRow([c[i].as_py() for c in columns], fields))
        h = _hash_bytes_by_words(data[4:])
        result["bytes"].append(data)
        result["hash"].append(h - (1 << 32) if h >= 1 << 31 else h)
    out[case["name"]] = result
sys.stdout.buffer.write(pickle.dumps(out, protocol=4))
"""

BUCKET_COUNTS = [1, 2, 3, 4, 7, 16, 128]


def _random_string(rng: random.Random) -> str:
    alphabet = "abcXYZ019 -_äöü€日本🙂"
    return "".join(rng.choice(alphabet) for _ in range(rng.choice([0, 1, 3, 6, 7, 8, 9, 12, 15, 16, 17, 40])))


def _interop_cases(rows: int = 300) -> dict[str, tuple[pa.Table, list[str], bool]]:
    rng = random.Random(20240601)
    epoch = datetime(1970, 1, 1)

    def values(gen, nulls: bool = False):
        return [None if nulls and rng.random() < 0.2 else gen() for _ in range(rows)]

    def table(key_fields: dict[str, pa.Array], nullable: bool = False) -> pa.Table:
        fields = [pa.field(k, a.type, nullable=nullable) for k, a in key_fields.items()]
        fields.append(pa.field("v", pa.string()))
        arrays = [*key_fields.values(), pa.array(values(lambda: _random_string(rng), nulls=True))]
        return pa.Table.from_arrays(arrays, schema=pa.schema(fields))

    def big() -> int:
        return rng.randint(-(1 << 63), (1 << 63) - 1)

    def a_date() -> date:
        return date(1970, 1, 1) + timedelta(days=rng.randint(-40000, 40000))

    def a_decimal() -> Decimal:
        return Decimal(rng.randint(-(10**10) + 1, 10**10 - 1)).scaleb(-2)

    def a_millis_ts() -> datetime:
        return epoch + timedelta(milliseconds=rng.randint(-(2**41), 2**42))

    cases: dict[str, tuple[pa.Table, list[str], bool]] = {
        "bigint": (table({"id": pa.array(values(big), pa.int64())}), ["id"], False),
        "int_string": (table({"i": pa.array(values(lambda: rng.randint(-(1 << 31), (1 << 31) - 1)), pa.int32()),
                              "s": pa.array(values(lambda: _random_string(rng)))}), ["i", "s"], False),
        "string_long_short": (table({"s": pa.array(values(lambda: _random_string(rng)))}), ["s"], False),
        "date_bigint": (table({"d": pa.array(values(a_date), pa.date32()), "id": pa.array(values(big), pa.int64())}),
                        ["d", "id"], False),
        "decimal_10_2": (table({"m": pa.array(values(a_decimal), pa.decimal128(10, 2))}), ["m"], False),
        "timestamp_3": (table({"t": pa.array(values(a_millis_ts), pa.timestamp("ms"))}), ["t"], False),
        "bool_small_tiny_double_float": (table({
            "b": pa.array(values(lambda: rng.random() < 0.5), pa.bool_()),
            "sm": pa.array(values(lambda: rng.randint(-32768, 32767)), pa.int16()),
            "ti": pa.array(values(lambda: rng.randint(-128, 127)), pa.int8()),
            "db": pa.array(values(lambda: rng.uniform(-1e12, 1e12)), pa.float64()),
            "fl": pa.array(values(lambda: rng.uniform(-1e6, 1e6)), pa.float32()),
        }), ["b", "sm", "ti", "db", "fl"], False),
        "timestamp_6_decimal_38_bytes_time": (table({
            "t6": pa.array(values(lambda: epoch + timedelta(microseconds=rng.randint(-(2**50), 2**51))),
                           pa.timestamp("us")),
            "m38": pa.array(values(lambda: Decimal(rng.randint(-(10**37), 10**37)).scaleb(-6)), pa.decimal128(38, 6)),
            "by": pa.array(values(lambda: rng.randbytes(rng.choice([0, 5, 7, 8, 13]))), pa.binary()),
            "tm": pa.array(values(lambda: rng.randint(0, 86_399_999)), pa.time32("ms")),
        }), ["t6", "m38", "by", "tm"], False),
        "nullable_bucket_key": (table({
            "i": pa.array(values(lambda: rng.randint(-1000, 1000), nulls=True), pa.int32()),
            "s": pa.array(values(lambda: _random_string(rng), nulls=True)),
        }, nullable=True), ["i", "s"], True),
    }
    return cases


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    data: bytes = sink.getvalue().to_pybytes()
    return data


@pytest.mark.interop
def test_matches_pypaimon():
    python = os.environ.get("PYPAIMON_PYTHON")
    if not python:
        pytest.skip("set PYPAIMON_PYTHON to a python with pypaimon 2.1.0 installed to cross-check against pypaimon")
    cases = _interop_cases()
    request = {"bucket_counts": BUCKET_COUNTS, "cases": [
        {"name": name, "ipc": _ipc(tbl), "keys": keys, "append": append} for name, (tbl, keys, append) in cases.items()
    ]}
    proc = subprocess.run([python, "-c", PYPAIMON_SCRIPT], input=pickle.dumps(request, protocol=4),
                          capture_output=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-4000:]
    results = pickle.loads(proc.stdout)
    for name, (tbl, keys, _append) in cases.items():
        expected = results[name]
        columns = [tbl.column(k) for k in keys]
        types = [from_arrow_type(tbl.schema.field(k).type, tbl.schema.field(k).nullable) for k in keys]
        rows = list(zip(*[c.to_pylist() for c in columns]))
        assert [encode_row(list(r), types) for r in rows] == expected["bytes"], name
        hashes = hash_key_columns(columns, types)
        assert hashes.tolist() == expected["hash"], name
        for n in BUCKET_COUNTS:
            assert bucket_of(hashes, n).tolist() == expected["buckets"][n], (name, n)
    assert sum(t.num_rows for t, _, _ in cases.values()) >= 2000


def test_ltz_values_from_other_zones_hash_like_utc():
    aware = pa.array([datetime(2024, 1, 1, 12, tzinfo=UTC)], pa.timestamp("us", tz="Europe/Berlin"))
    naive = pa.array([datetime(2024, 1, 1, 12)], pa.timestamp("us"))
    t = T("TIMESTAMP(6) WITH LOCAL TIME ZONE")
    assert hash_key_columns([aware], [t]).tolist() == hash_key_columns([naive], [t]).tolist()
    assert hash_key_columns([aware], [t]).tolist() == scalar_hashes([aware], [t])
