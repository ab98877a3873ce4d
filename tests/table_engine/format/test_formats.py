"""Data files in Parquet, ORC and Avro: every type round-trips through each format, at file and table level."""

from __future__ import annotations

import datetime
import decimal
import os
from pathlib import Path

import pyarrow as pa
import pytest

from table_engine import Catalog
from table_engine.errors import CorruptMetadataError, DataError, OptionError
from table_engine.format.formats import WriteFormat, file_column_names, format_of, iter_file, read_file, write_file
from table_engine.io.file_io import LocalFileIO

FORMATS = ("parquet", "orc", "avro")

SCHEMA = pa.schema([
    pa.field("id", pa.int64(), nullable=False), ("s", pa.string()), ("d", pa.decimal128(10, 2)),
    ("big", pa.decimal128(30, 5)), ("dt", pa.date32()), ("ts", pa.timestamp("us")), ("ts0", pa.timestamp("s")),
    ("ltz", pa.timestamp("ms", tz="UTC")), ("tm", pa.time32("ms")), ("b", pa.binary()),
    ("arr", pa.list_(pa.int32())), ("m", pa.map_(pa.string(), pa.int64())), ("mi", pa.map_(pa.int32(), pa.string())),
    ("st", pa.struct([("x", pa.int32()), ("y", pa.string()), ("z", pa.list_(pa.timestamp("ms")))])),
    ("f", pa.float32()), ("g", pa.float64()), ("tiny", pa.int8()), ("small", pa.int16()), ("i", pa.int32()),
    ("flag", pa.bool_()),
])


def rows(null_row: bool = True) -> pa.Table:
    """Three rows exercising values, nulls and empties of every type (``null_row``: a null ROW value, which ORC
    files refuse)."""
    return pa.table({
        "id": [1, 2, 3], "s": ["a", None, ""],
        "d": [decimal.Decimal("1.25"), None, decimal.Decimal("-3.50")],
        "big": [decimal.Decimal("1234567890123456789012.12345"), None, decimal.Decimal("-0.00001")],
        "dt": [datetime.date(2020, 1, 1), None, datetime.date(1960, 5, 6)],
        "ts": [datetime.datetime(2020, 1, 1, 1, 2, 3, 456789), None, datetime.datetime(1950, 1, 1)],
        "ts0": [datetime.datetime(2020, 1, 1, 1, 2, 3), None, datetime.datetime(1969, 12, 31, 23, 59, 59)],
        "ltz": [datetime.datetime(2020, 1, 1, 0, 0, 0, 123000, tzinfo=datetime.UTC), None, None],
        "tm": [datetime.time(1, 2, 3, 4000), None, datetime.time(0)], "b": [b"x\x00", None, b""],
        "arr": [[1, None, 3], None, []], "m": [[("k", 1), ("l", None)], None, []],
        "mi": [[(1, "a"), (2, None)], None, []],
        "st": [{"x": 1, "y": "z", "z": [datetime.datetime(2001, 1, 1)]},
               None if null_row else {"x": 2, "y": None, "z": []}, {"x": None, "y": None, "z": None}],
        "f": [1.5, None, -2.0], "g": [1e300, None, float("-inf")], "tiny": [1, None, -128],
        "small": [-32768, None, 7], "i": [2**31 - 1, None, 0], "flag": [True, None, False],
    }, schema=SCHEMA)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_type_round_trips_through_a_file(tmp_path: Path, fmt: str) -> None:
    io = LocalFileIO()
    path = str(tmp_path / f"data-x-0.{fmt}")
    data = rows(null_row=fmt != "orc")
    size = write_file(io, path, data, WriteFormat(fmt))
    assert size == os.path.getsize(path) and format_of(path) == fmt
    assert file_column_names(io, path) == SCHEMA.names
    assert read_file(io, path).cast(SCHEMA).equals(data)
    assert read_file(io, path, ["g", "id"]).cast(pa.schema([SCHEMA.field("g"), SCHEMA.field("id")])).equals(
        data.select(["g", "id"]))
    batches = list(iter_file(io, path, ["id"], 2))
    assert [b.num_rows for b in batches] == [2, 1]


@pytest.mark.parametrize("fmt", ["orc", "avro"])
def test_a_broken_file_is_corrupt_and_names_it(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / f"data-x-0.{fmt}"
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(CorruptMetadataError, match=f"data-x-0.{fmt}"):
        read_file(LocalFileIO(), str(path))


@pytest.mark.parametrize("fmt", ["orc", "avro"])
def test_primary_key_table_in_a_format_writes_reads_and_compacts(tmp_path: Path, fmt: str) -> None:
    catalog = Catalog(str(tmp_path / "wh"))
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "2", "file.format": fmt})
    data = rows(null_row=fmt != "orc")
    t.write(data)
    update = dict.fromkeys(SCHEMA.names)
    update.update(id=2, s="bb", st={"x": None, "y": None, "z": None})
    t.write(pa.Table.from_pylist([update], schema=SCHEMA))
    t.write(pa.Table.from_pylist([{**update, "id": 3}], schema=SCHEMA), row_kinds=["-D"])
    expected = pa.Table.from_pylist([data.to_pylist()[0], update], schema=SCHEMA)
    assert catalog.get_table("db.t").read().sort_by("id").cast(SCHEMA).equals(expected)
    catalog.get_table("db.t").maintenance.compact(full=True)
    assert catalog.get_table("db.t").read().sort_by("id").cast(SCHEMA).equals(expected)
    exts = {p.suffix for p in (tmp_path / "wh").rglob("data-*")}
    assert exts == {f".{fmt}"}


def test_an_unknown_file_format_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    catalog = Catalog(str(tmp_path / "wh"))
    with pytest.raises(OptionError, match="'file.format'.*csv|csv.*file.format"):
        catalog.create_table("db.t", SCHEMA, options={"file.format": "csv"})
    assert not list((tmp_path / "wh").rglob("schema-*"))


def test_an_unknown_codec_for_the_format_is_refused_before_any_file(tmp_path: Path) -> None:
    catalog = Catalog(str(tmp_path / "wh"))
    t = catalog.create_table("db.t", SCHEMA, options={"file.format": "avro", "file.compression": "lz4"})
    with pytest.raises(OptionError, match="file.compression = 'lz4'"):
        t.write(rows())
    assert not list((tmp_path / "wh").rglob("data-*"))


def test_orc_refuses_sub_millisecond_timestamps_before_1970_and_writes_nothing(tmp_path: Path) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("ts", pa.timestamp("us"))])
    catalog = Catalog(str(tmp_path / "wh"))
    t = catalog.create_table("db.t", schema, primary_keys=["id"], options={"bucket": "1", "file.format": "orc"})
    ok = pa.table({"id": [1, 2], "ts": pa.array([-1000, 5], pa.int64()).cast(pa.timestamp("us"))}, schema=schema)
    t.write(ok)  # whole milliseconds before 1970 and anything after are fine
    before = sorted(p.name for p in (tmp_path / "wh").rglob("*"))
    bad = pa.table({"id": [3], "ts": pa.array([-1], pa.int64()).cast(pa.timestamp("us"))}, schema=schema)
    with pytest.raises(DataError, match="column 'ts'"):
        t.write(bad)
    assert sorted(p.name for p in (tmp_path / "wh").rglob("*")) == before
    assert catalog.get_table("db.t").read().sort_by("id").equals(ok.cast(catalog.get_table("db.t").read().schema))


def test_orc_refuses_a_null_row_value_and_writes_nothing(tmp_path: Path) -> None:
    catalog = Catalog(str(tmp_path / "wh"))
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1", "file.format": "orc"})
    with pytest.raises(DataError, match="column 'st': a null ROW"):
        t.write(rows())
    assert not list((tmp_path / "wh").rglob("data-*"))
    t.write(rows(null_row=False))  # a ROW whose fields are null is fine
    assert catalog.get_table("db.t").read().num_rows == 3
