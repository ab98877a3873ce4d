"""Round trips and exactness of the bloom-filter, bitmap and BSI indexes, the container and the options."""

from __future__ import annotations

import datetime
import decimal
import math
import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.errors import CorruptMetadataError, OptionError
from table_engine.format.file_index import (
    BloomFilter64,
    FileIndexEvaluator,
    FileIndexFile,
    FileIndexOptions,
    build_index_bytes,
    validate_file_index_options,
)
from table_engine.format.file_index.bloom_filter import BloomFilterReader, build_bloom_filter
from table_engine.format.file_index.format import EMPTY_INDEX, MAGIC, write_file_index_bytes
from table_engine.format.file_index.roaring import serialized_size
from table_engine.format.file_index.values import ColumnValues, literal_value
from table_engine.predicate import Predicate
from table_engine.types import DataField, parse_type
from tests.budget import examples


def _evaluator(col: pa.Array, type_sql: str, types: dict[str, dict[str, str]]) -> FileIndexEvaluator:
    t = parse_type(type_sql)
    data = build_index_bytes([("c", col, t, types)])
    assert data is not None
    return FileIndexEvaluator(FileIndexFile.parse(data), {"c": t}, len(col))


def _expected_rows(col: pa.Array, p: Predicate) -> list[int]:
    """Rows the engine's row filter keeps for ``p``."""
    t = pa.table({"c": col, "__row": pa.array(range(len(col)), pa.int64())})
    return [int(x) for x in t.filter(p.expression()).column("__row").to_pylist()]


# ---- container -----------------------------------------------------------------------------------------------------

def test_container_layout() -> None:
    data = write_file_index_bytes({"a": {"bloom-filter": b"\x01\x02"}, "bc": {"bitmap": b"\x03", "bsi": None}})
    # magic, version 1, head length = 8+4+4+4 + 3 indexes*8 + 2 columns*4 + 4 + names (3 + 4 + 14 + 8 + 5)
    head = 8 + 4 + 4 + 4 + 3 * 8 + 2 * 4 + 4 + (2 + 1) + (2 + 12) + (2 + 2) + (2 + 6) + (2 + 3)
    assert int.from_bytes(data[:8], "big") == MAGIC == 1493475289347502
    assert int.from_bytes(data[8:12], "big") == 1
    assert int.from_bytes(data[12:16], "big") == head
    assert data[head:] == b"\x01\x02\x03"
    f = FileIndexFile.parse(data)
    assert f.entries == {"a": {"bloom-filter": (head, 2)}, "bc": {"bitmap": (head + 2, 1), "bsi": (-1, 0)}}
    assert f.get("bc", "bsi") is EMPTY_INDEX and f.get("a", "bitmap") is None and f.get("zz", "bsi") is None


def test_container_rejects_garbage() -> None:
    with pytest.raises(CorruptMetadataError):
        FileIndexFile.parse(b"\x00" * 30)
    good = write_file_index_bytes({"a": {"bitmap": b"\x01" * 10}})
    with pytest.raises(CorruptMetadataError):
        FileIndexFile.parse(good[:-5])  # body truncated


# ---- bloom filter --------------------------------------------------------------------------------------------------

def test_bloom_sizing_follows_paimon() -> None:
    bf = BloomFilter64.create(1_000_000, 0.1)
    assert (bf.num_bits, bf.num_hash_functions) == (4792536, 3)
    bf = BloomFilter64.create(100, 0.01)
    assert bf.num_bits % 8 == 0 and bf.num_hash_functions == 7


@pytest.mark.parametrize("fpp", [0.1, 0.01])
def test_bloom_no_false_negatives_and_fpp(fpp: float) -> None:
    items = 2000
    values = pa.array([f"key-{i}" for i in range(items)])
    t = parse_type("STRING")
    r = BloomFilterReader(build_bloom_filter(ColumnValues.from_arrow(values, t), {"items": str(items),
                                                                                 "fpp": str(fpp)}), "string")
    for v in values.to_pylist():
        lit = literal_value(v, t)
        assert lit is not None and r.may_contain(lit)
    probes = 20000
    fp = 0
    for i in range(probes):
        lit = literal_value(f"other-{i}", t)
        assert lit is not None
        fp += r.may_contain(lit)
    assert fp / probes < fpp * 1.6
    assert fp / probes > fpp * 0.4


def test_bloom_numeric_no_false_negatives() -> None:
    vals = np.random.default_rng(3).integers(-(2**62), 2**62, 3000)
    ev = _evaluator(pa.array(vals, pa.int64()), "BIGINT", {"bloom-filter": {"items": "3000"}})
    for v in vals[:500].tolist():
        assert ev.may_match([Predicate("c", "=", v)])
    hits = sum(ev.may_match([Predicate("c", "=", int(v))]) for v in range(10000))
    assert hits < 10000 * 0.2


def test_bloom_only_proves_equality() -> None:
    ev = _evaluator(pa.array([1, 2, 3], pa.int32()), "INT", {"bloom-filter": {"items": "10"}})
    assert ev.candidate_rows([Predicate("c", "<", 0)]) is None
    assert ev.candidate_rows([Predicate("c", "!=", 1)]) is None
    assert ev.candidate_rows([Predicate("c", "in", [None, 99])]) is None  # IN (NULL) matches null rows
    assert ev.candidate_rows([Predicate("c", "=", 2.5)]) is not None  # no INT equals 2.5
    assert not ev.may_match([Predicate("c", "=", 2.5)])


def test_bloom_float_zero_signs() -> None:
    ev = _evaluator(pa.array([-0.0, 1.0], pa.float64()), "DOUBLE", {"bloom-filter": {"items": "10"}})
    assert ev.may_match([Predicate("c", "=", 0.0)])  # Paimon hashes -0.0 and 0.0 apart; SQL equality does not
    ev = _evaluator(pa.array([0.5], pa.float32()), "FLOAT", {"bloom-filter": {"items": "10"}})
    assert ev.candidate_rows([Predicate("c", "=", 0.1)]) is None  # 0.1 is not a FLOAT value: prove nothing


# ---- bitmap and BSI exactness -------------------------------------------------------------------------------------

OPS_BITMAP = ("=", "!=", "in", "not in", "is null", "is not null")
OPS_BSI = OPS_BITMAP + ("<", "<=", ">", ">=")


def _check_exact(col: pa.Array, type_sql: str, index: str, preds: list[Predicate]) -> None:
    ev = _evaluator(col, type_sql, {index: {}})
    for p in preds:
        rows = ev.candidate_rows([p])
        assert rows is not None, p
        assert list(rows) == _expected_rows(col, p), p


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.none() | st.integers(-50, 50), min_size=1, max_size=200), st.integers(-60, 60),
       st.lists(st.none() | st.integers(-60, 60), min_size=1, max_size=4), st.sampled_from(["1", "2"]))
def test_bitmap_int_is_exact(values: list[int | None], lit: int, lits: list[int | None], version: str) -> None:
    col = pa.array(values, pa.int32())
    ev = _evaluator(col, "INT", {"bitmap": {"version": version, "index-block-size": "64b"}})
    preds = [Predicate("c", "=", lit), Predicate("c", "!=", lit), Predicate("c", "in", lits),
             Predicate("c", "not in", lits), Predicate("c", "is null"), Predicate("c", "is not null")]
    for p in preds:
        rows = ev.candidate_rows([p])
        assert rows is not None and list(rows) == _expected_rows(col, p), p


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.none() | st.sampled_from(["", "a", "b", "ab", "ü", "x" * 40]), min_size=1, max_size=100),
       st.sampled_from(["", "a", "zz", "ü", "x" * 40]))
def test_bitmap_string_is_exact(values: list[str | None], lit: str) -> None:
    col = pa.array(values, pa.string())
    _check_exact(col, "STRING", "bitmap", [Predicate("c", op, lit) for op in ("=", "!=")]
                 + [Predicate("c", "in", [lit, "a"]), Predicate("c", "not in", [lit])])


def test_bitmap_floats_follow_arrow_semantics() -> None:
    col = pa.array([0.0, -0.0, float("nan"), 1.5, None], pa.float64())
    ev = _evaluator(col, "DOUBLE", {"bitmap": {}})
    for p in [Predicate("c", "=", 0.0), Predicate("c", "=", -0.0), Predicate("c", "!=", 0.0),
              Predicate("c", "!=", float("nan")), Predicate("c", "not in", [float("nan")]),
              Predicate("c", "in", [1.5]), Predicate("c", "not in", [0.0, None])]:
        rows = ev.candidate_rows([p])
        assert rows is not None and set(_expected_rows(col, p)) <= set(rows), p
    assert not ev.may_match([Predicate("c", "=", 2.0)])


def test_bitmap_boolean_and_timestamps() -> None:
    _check_exact(pa.array([True, None, False, True]), "BOOLEAN", "bitmap",
                 [Predicate("c", "=", True), Predicate("c", "!=", True), Predicate("c", "is null")])
    ts = pa.array([datetime.datetime(2024, 1, 1, 0, 0, 0, 123000), None, datetime.datetime(2023, 1, 1)],
                  pa.timestamp("ms"))
    _check_exact(ts, "TIMESTAMP(3)", "bitmap", [Predicate("c", "=", datetime.datetime(2024, 1, 1, 0, 0, 0, 123000)),
                                               Predicate("c", "!=", datetime.datetime(2023, 1, 1))])


@settings(max_examples=examples(80), deadline=None)
@given(st.lists(st.none() | st.integers(-(2**40), 2**40), min_size=1, max_size=150),
       st.integers(-(2**41), 2**41), st.sampled_from(OPS_BSI))
def test_bsi_bigint_is_exact(values: list[int | None], lit: int, op: str) -> None:
    col = pa.array(values, pa.int64())
    p = Predicate("c", op, [lit, values[0]] if op in ("in", "not in") else lit)
    _check_exact(col, "BIGINT", "bsi", [p])


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.none() | st.integers(-20, 20), min_size=1, max_size=60),
       st.floats(-25, 25, allow_nan=False), st.sampled_from(("=", "!=", "<", "<=", ">", ">=")))
def test_bsi_fractional_literals(values: list[int | None], lit: float, op: str) -> None:
    col = pa.array(values, pa.int32())
    ev = _evaluator(col, "INT", {"bsi": {}})
    rows = ev.candidate_rows([Predicate("c", op, lit)])
    assert rows is not None and list(rows) == _expected_rows(col, Predicate("c", op, lit))


def test_bsi_dates_decimals_and_extremes() -> None:
    d = pa.array([datetime.date(2020, 1, 1), datetime.date(1969, 12, 31), None])
    _check_exact(d, "DATE", "bsi", [Predicate("c", "<", datetime.date(2000, 1, 1)),
                                    Predicate("c", ">=", datetime.date(1969, 12, 31))])
    dec = pa.array([decimal.Decimal("1.25"), decimal.Decimal("-3.50"), None], pa.decimal128(10, 2))
    ev = _evaluator(dec, "DECIMAL(10, 2)", {"bsi": {}})
    for p, expected in [(Predicate("c", ">", decimal.Decimal("1.2")), [0]),
                        (Predicate("c", "=", decimal.Decimal("-3.5")), [1]),
                        (Predicate("c", "<=", 0), [1]), (Predicate("c", "=", decimal.Decimal("1.251")), [])]:
        assert list(ev.candidate_rows([p]) or []) == expected, p
    big = pa.array([2**63 - 1, -(2**63) + 1, 0], pa.int64())
    _check_exact(big, "BIGINT", "bsi", [Predicate("c", ">", 0), Predicate("c", "<", 0), Predicate("c", "=", 0)])
    # Long.MIN_VALUE cannot be stored: the column simply gets no bsi index
    assert build_index_bytes([("c", pa.array([-(2**63)], pa.int64()), parse_type("BIGINT"), {"bsi": {}})]) is None


def test_bsi_nanosecond_timestamps_are_supersets() -> None:
    base = datetime.datetime(2024, 5, 1, 12, 0, 0, 1)
    col = pa.array([pa.scalar(base, pa.timestamp("us")).value * 1000 + 500, None], pa.int64()).cast(
        pa.timestamp("ns"))
    ev = _evaluator(col, "TIMESTAMP(9)", {"bsi": {}, "bitmap": {}})
    for p in [Predicate("c", ">", base), Predicate("c", "!=", base), Predicate("c", "not in", [base]),
              Predicate("c", ">=", base), Predicate("c", "<=", base + datetime.timedelta(microseconds=1))]:
        rows = ev.candidate_rows([p])
        assert rows is None or set(_expected_rows(col, p)) <= set(rows), p


def test_conjunction_intersects_row_sets() -> None:
    a = pa.array([1, 1, 2, 2], pa.int32())
    b = pa.array(["x", "y", "x", "y"])
    data = build_index_bytes([("a", a, parse_type("INT"), {"bitmap": {}}),
                              ("b", b, parse_type("STRING"), {"bitmap": {}})])
    assert data is not None
    ev = FileIndexEvaluator(FileIndexFile.parse(data), {"a": parse_type("INT"), "b": parse_type("STRING")}, 4)
    assert list(ev.candidate_rows([Predicate("a", "=", 1), Predicate("b", "=", "y")]) or []) == [1]
    col = pa.array([1, 5], pa.int32())
    data = build_index_bytes([("a", col, parse_type("INT"), {"bitmap": {}, "bsi": {}})])
    assert data is not None
    ev = FileIndexEvaluator(FileIndexFile.parse(data), {"a": parse_type("INT")}, 2)
    assert not ev.may_match([Predicate("a", ">", 1), Predicate("a", "!=", 5)])


def test_roaring_serialized_size_parses_every_container_kind() -> None:
    from pyroaring import BitMap

    from table_engine.format.file_index.roaring import serialize

    for bm in [BitMap(), BitMap([1]), BitMap(range(0, 100000, 2)), BitMap(range(70000)),
               BitMap([1, 2, 3, 70000, 140000, 210000, 280000]), BitMap(range(0, 300000, 7))]:
        data = serialize(bm)
        assert serialized_size(data + b"\x00" * 5, 0) == len(data)


# ---- options -------------------------------------------------------------------------------------------------------

FIELDS = [DataField(0, "id", parse_type("BIGINT")), DataField(1, "name", parse_type("STRING")),
          DataField(2, "flag", parse_type("BOOLEAN")), DataField(3, "price", parse_type("DECIMAL(10, 2)")),
          DataField(4, "tags", parse_type("ARRAY<STRING>")), DataField(5, "score", parse_type("DOUBLE"))]


def test_options_parse() -> None:
    o = FileIndexOptions.from_options({"file-index.bloom-filter.columns": "id, name",
                                       "file-index.bloom-filter.id.fpp": "0.01", "file-index.bitmap.columns": "name",
                                       "file-index.in-manifest-threshold": "1 kb", "file-index.read.enabled": "false"})
    assert o.columns == {"id": {"bloom-filter": {"fpp": "0.01"}}, "name": {"bitmap": {}, "bloom-filter": {}}}
    assert o.in_manifest_threshold == 1024 and not o.read_enabled
    assert FileIndexOptions.from_options({}).is_empty


@pytest.mark.parametrize("opts, message", [
    ({"file-index.bloom-filter.columns": "nope"}, "'nope'"),
    ({"file-index.bitmap.columns": "id,missing"}, "'missing'"),
    ({"file-index.bloom-filter.columns": "flag"}, "'flag'"),
    ({"file-index.bloom-filter.columns": "price"}, "'price'"),
    ({"file-index.bloom-filter.columns": "tags"}, "'tags'"),
    ({"file-index.bitmap.columns": "price"}, "'price'"),
    ({"file-index.bsi.columns": "name"}, "'name'"),
    ({"file-index.bsi.columns": "score"}, "'score'"),
    ({"file-index.bloom-filter.columns": "id,"}, "empty column"),
    ({"file-index.bloom-filter.id.fpp": "0.1"}, "not declared"),
    ({"file-index.bloom-filter.columns": "id", "file-index.bloom-filter.id.fpp": "2"}, "fpp"),
    ({"file-index.bitmap.columns": "id", "file-index.bitmap.id.version": "3"}, "version"),
])
def test_options_validation(opts: dict[str, str], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        validate_file_index_options(FIELDS, opts)


def test_options_accept_supported_types() -> None:
    validate_file_index_options(FIELDS, {"file-index.bloom-filter.columns": "id,name,score",
                                         "file-index.bitmap.columns": "name,flag,id,score",
                                         "file-index.bsi.columns": "id,price",
                                         "file-index.range-bitmap.columns": "id"})


def test_literal_conversion_is_conservative() -> None:
    t = parse_type("INT")
    assert literal_value("5", t) is None and literal_value(True, t) is None and literal_value(2**40, t) is None
    lit = literal_value(2.5, t)
    assert lit is not None and (lit.value, lit.exact) == (2, False)
    assert literal_value(math.inf, t) is None
    ts = literal_value(datetime.datetime(1970, 1, 1, 0, 0, 1, 500), parse_type("TIMESTAMP(3)"))
    assert ts is not None and (ts.value, ts.exact) == (1000, False)
    tz = datetime.datetime(1970, 1, 1, 1, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))
    ltz = literal_value(tz, parse_type("TIMESTAMP(6) WITH LOCAL TIME ZONE"))
    assert ltz is not None and ltz.value == 0


def test_random_bitmap_versions_agree() -> None:
    r = random.Random(5)
    col = pa.array([r.choice([None, *range(30)]) for _ in range(3000)], pa.int32())
    t = parse_type("INT")
    ev1 = _evaluator(col, "INT", {"bitmap": {"version": "1"}})
    ev2 = _evaluator(col, "INT", {"bitmap": {"version": "2", "index-block-size": "32b"}})
    for v in range(-1, 31):
        p = Predicate("c", "=", v)
        assert ev1.candidate_rows([p]) == ev2.candidate_rows([p])
    assert literal_value(3, t) is not None
    assert pc.sum(pc.is_null(col)).as_py() == len(ev1.candidate_rows([Predicate("c", "is null")]) or [])
