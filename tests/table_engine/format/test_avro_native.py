"""Avro data files read by DataFusion: the same tables as the fastavro path for random data of every type, the
fallback taken for what DataFusion cannot read, other root unions, a null root datum refused, bounded batches."""

from __future__ import annotations

import datetime
import decimal
import io
import json
import logging
import os
import struct
import zlib
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_engine.errors import CorruptMetadataError
from table_engine.format import avro_data_file, avro_native
from table_engine.format.avro import encode_long, read_header, read_long
from table_engine.format.formats import WriteFormat, iter_file, read_file, write_file
from table_engine.io.file_io import LocalFileIO
from tests.budget import examples
from tests.table_engine.format.test_formats import SCHEMA, rows

_FILE_IO = LocalFileIO()


def _both(path: str, columns: list[str] | None = None) -> tuple[pa.Table, pa.Table]:
    """(DataFusion's table, fastavro's table) of one file."""
    data = Path(path).read_bytes()
    header = read_header(data)
    assert header is not None
    meta, _, pos = header
    arrow = avro_data_file._arrow_schema(avro_data_file._record_of(json.loads(meta["avro.schema"])), columns)
    native = avro_native.native_table(data, meta, pos - 16, arrow)
    slow = pa.concat_tables(avro_data_file._iter_fastavro(data, meta, pos - 16, arrow, 1 << 62))
    return native, slow


def _ints(bits: int) -> st.SearchStrategy[int | None]:
    return st.none() | st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


def _decimal(precision: int, scale: int) -> st.SearchStrategy[decimal.Decimal | None]:
    return st.none() | st.decimals(places=scale, allow_nan=False, allow_infinity=False,
                                   min_value=-(10 ** (precision - scale)) + 1, max_value=10 ** (precision - scale) - 1)


_DT = st.datetimes(datetime.datetime(1900, 1, 1), datetime.datetime(2200, 1, 1))
_TEXT = st.text(max_size=6)
_ROW = st.fixed_dictionaries({
    "id": st.integers(-(2**63), 2**63 - 1), "s": st.none() | _TEXT, "d": _decimal(10, 2), "big": _decimal(30, 5),
    "dt": st.none() | st.dates(), "ts": st.none() | _DT,
    "ts0": st.none() | _DT.map(lambda d: d.replace(microsecond=0)),
    "ltz": st.none() | _DT.map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000, tzinfo=datetime.UTC)),
    "tm": st.none() | st.times().map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000)),
    "b": st.none() | st.binary(max_size=6), "arr": st.none() | st.lists(_ints(32), max_size=3),
    "m": st.none() | st.dictionaries(_TEXT, _ints(64), max_size=3).map(lambda d: list(d.items())),
    "mi": st.none() | st.dictionaries(st.integers(-5, 5), st.none() | _TEXT, max_size=3).map(lambda d: list(d.items())),
    "st": st.none() | st.fixed_dictionaries({"x": _ints(32), "y": st.none() | _TEXT,
                                             "z": st.none() | st.lists(st.none() | _DT.map(
                                                 lambda d: d.replace(microsecond=0)), max_size=2)}),
    "f": st.none() | st.floats(width=32, allow_nan=False), "g": st.none() | st.floats(allow_nan=False),
    "tiny": _ints(8), "small": _ints(16), "i": _ints(32), "flag": st.none() | st.booleans(),
})


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.lists(_ROW, max_size=25), cols=st.none() | st.lists(st.sampled_from(SCHEMA.names), unique=True))
def test_datafusion_and_fastavro_read_the_same_table_of_every_type(tmp_path: Path, data: list[dict[str, Any]],
                                                                   cols: list[str] | None) -> None:
    path = str(tmp_path / "data-h-0.avro")
    table = pa.Table.from_pylist(data, schema=SCHEMA)
    Path(path).unlink(missing_ok=True)
    write_file(_FILE_IO, path, table, WriteFormat("avro"))
    native, slow = _both(path, cols)
    assert native.equals(slow)
    assert read_file(_FILE_IO, path, cols).equals(native)
    if cols is None:
        assert native.cast(SCHEMA).equals(table)


def test_every_type_and_projection_through_datafusion(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = str(tmp_path / "data-x-0.avro")
    write_file(_FILE_IO, path, rows(), WriteFormat("avro"))
    with caplog.at_level(logging.DEBUG, logger=avro_data_file.__name__):
        assert read_file(_FILE_IO, path).cast(SCHEMA).equals(rows())
    assert "with DataFusion" in caplog.text
    native, slow = _both(path, ["st", "mi", "id"])
    assert native.equals(slow) and native.column_names == ["st", "mi", "id"]


def test_a_codec_datafusion_lacks_falls_back_to_fastavro(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "data-x-0.avro")
    write_file(_FILE_IO, path, rows(), WriteFormat("avro"))
    monkeypatch.setattr(avro_native, "NATIVE_CODECS", avro_native.NATIVE_CODECS - {"zstandard"})
    with caplog.at_level(logging.DEBUG, logger=avro_data_file.__name__):
        assert read_file(_FILE_IO, path).cast(SCHEMA).equals(rows())
        assert [b.num_rows for b in iter_file(_FILE_IO, path, ["id"], 2)] == [2, 1]
    assert "with fastavro (codec 'zstandard')" in caplog.text and "DataFusion" not in caplog.text


def _container(schema: Any, records: list[Any], codec: str = "null") -> bytes:
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), records, codec=codec, sync_marker=b"S" * 16)
    return buf.getvalue()


_RECORD = {"type": "record", "name": "r", "fields": [{"name": "a", "type": "long"},
                                                    {"name": "b", "type": ["null", "string"], "default": None}]}


@pytest.mark.parametrize("root", [["null", _RECORD], [_RECORD, "null"], _RECORD])
def test_other_root_schemas_read_natively(tmp_path: Path, root: Any) -> None:
    path = tmp_path / "data-r-0.avro"
    path.write_bytes(_container(root, [{"a": 1, "b": "x"}, {"a": -2, "b": None}]))
    assert read_file(_FILE_IO, str(path)).to_pylist() == [{"a": 1, "b": "x"}, {"a": -2, "b": None}]
    assert read_file(_FILE_IO, str(path), ["b"]).to_pylist() == [{"b": "x"}, {"b": None}]


def test_a_null_root_datum_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "data-n-0.avro"
    path.write_bytes(_container(["null", _RECORD], [{"a": 1, "b": "x"}, None, {"a": 3, "b": None}]))
    with pytest.raises(CorruptMetadataError, match="data-n-0.avro"):
        read_file(_FILE_IO, str(path))


def test_snappy_which_fastavro_cannot_read_here_reads_natively(tmp_path: Path) -> None:
    plain = _container(_RECORD, [{"a": i, "b": str(i)} for i in range(5)])
    header = read_header(plain)
    assert header is not None
    meta, sync, pos = header
    count, p = read_long(plain, pos)
    size, p = read_long(plain, p)
    block = plain[p:p + size]
    body = pa.compress(block, codec="snappy", asbytes=True) + struct.pack(">I", zlib.crc32(block))
    snappy = (avro_native.encode_header({**meta, "avro.codec": b"snappy"}) + sync + encode_long(count)
              + encode_long(len(body)) + body + sync)
    path = tmp_path / "data-s-0.avro"
    path.write_bytes(snappy)
    assert read_file(_FILE_IO, str(path)).column("a").to_pylist() == list(range(5))


def test_iteration_is_bounded_across_datafusion_batches(tmp_path: Path) -> None:
    path = str(tmp_path / "data-b-0.avro")
    n = 150_000
    write_file(_FILE_IO, path, pa.table({"id": pa.array(range(n), pa.int64()), "v": pa.array(range(n), pa.int32())}),
               WriteFormat("avro"))
    batches = list(iter_file(_FILE_IO, path, ["v"], 40_000))
    assert [b.num_rows for b in batches] == [40_000, 40_000, 40_000, 30_000]
    assert pa.concat_tables(batches).column("v").to_pylist() == list(range(n))
    empty = str(tmp_path / "data-e-0.avro")
    write_file(_FILE_IO, empty, pa.table({"id": pa.array([], pa.int64())}), WriteFormat("avro"))
    assert [b.num_rows for b in iter_file(_FILE_IO, empty, None, 10)] == [0]
    assert read_file(_FILE_IO, empty).num_rows == 0


def test_a_big_file_is_decoded_in_pieces_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "data-p-0.avro")
    n = 300_000  # the writer's blocks hold ~1 MiB: several blocks
    table = pa.table({"id": pa.array(range(n), pa.int64()), "s": pa.array([str(i) for i in range(n)])})
    write_file(_FILE_IO, path, table, WriteFormat("avro"))
    data = Path(path).read_bytes()
    header = read_header(data)
    assert header is not None
    monkeypatch.setattr(avro_native, "SPLIT_BYTES", len(data) // 8)
    monkeypatch.setattr(avro_native.os, "cpu_count", lambda: 4)
    pieces = avro_native._pieces(data, header[2] - 16)
    assert len(pieces) > 1 and pieces[0][0] == header[2] and pieces[-1][1] == len(data)
    assert all(a[1] == b[0] for a, b in zip(pieces, pieces[1:], strict=False))
    assert read_file(_FILE_IO, path).equals(table)
    assert read_file(_FILE_IO, path, ["s"]).equals(table.select(["s"]))


def test_a_child_forked_after_datafusion_started_reads_with_fastavro(tmp_path: Path) -> None:
    path = str(tmp_path / "data-f-0.avro")
    write_file(_FILE_IO, path, rows(), WriteFormat("avro"))
    assert read_file(_FILE_IO, path).cast(SCHEMA).equals(rows())  # DataFusion's runtime runs in this process
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # DataFusion's runtime threads are gone here: a native read would hang
        ok = False
        try:
            ok = (avro_native.native_blocker({}) is not None
                  and read_file(_FILE_IO, path).cast(SCHEMA).equals(rows()))
        finally:
            os.write(write_end, b"1" if ok else b"0")
            os._exit(0)
    os.close(write_end)
    assert os.read(read_end, 1) == b"1"
    os.waitpid(pid, 0)
    assert avro_native.native_blocker({}) is None  # the parent keeps its runtime
