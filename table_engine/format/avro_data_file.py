"""Avro data files, as Paimon Java writes and reads them (``AvroSchemaConverter``, ``AvroFileFormat``).

The writer schema is the union of null and a record ``org.apache.paimon.avro.generated.record`` (Paimon's row type
is nullable) with one field per column, named as the column; a nullable type is the union ``["null", T]`` with
default null. BOOLEAN boolean, TINYINT/SMALLINT/INT int, BIGINT long, FLOAT, DOUBLE, CHAR/VARCHAR string,
BINARY/VARBINARY bytes, DATE int (``date``), TIME int (``time-millis``), TIMESTAMP(p) long (``timestamp-millis``
for p <= 3, ``timestamp-micros`` for p <= 6), TIMESTAMP_LTZ(p) long (``local-timestamp-millis`` / ``-micros``),
DECIMAL bytes (``decimal``), ROW a record named ``<parent record name>_<field>``, ARRAY array, MAP with a
CHAR/VARCHAR key an Avro map, any other MAP an array of ``{key, value}`` records with logical type ``map``. Paimon
refuses TIMESTAMP precision > 6 in Avro, and so do we.

Reading decodes blocks with fastavro and builds Arrow arrays from the records; date/time logical types are read as
their integers (the header's schema is rewritten without them: no Python datetime objects, no schema resolution)
and Arrow builds the dates, times and timestamps. See docs/adr/0011-avro-data-files.md for the measured choice.
"""

from __future__ import annotations

import importlib.util
import io
import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import fastavro
import pyarrow as pa

from table_engine.errors import OptionError
from table_engine.format.avro import read_header
from table_engine.format.avro_encoder import encode_container, flat
from table_engine.format.avro_native import encode_header, iter_native, native_blocker, native_table
from table_engine.io.file_io import FileIO

log = logging.getLogger(__name__)

RECORD_NAME = "org.apache.paimon.avro.generated.record"

# file.compression names -> Avro codec names (Paimon: zstd is zstandard at file.compression.zstd-level, others are
# passed to Avro's CodecFactory.fromString; ``avro.codec`` overrides both)
AVRO_CODECS: Mapping[str, str] = {"zstd": "zstandard", "zstandard": "zstandard", "snappy": "snappy",
                                  "deflate": "deflate", "bzip2": "bzip2", "xz": "xz", "none": "null",
                                  "null": "null", "uncompressed": "null"}

_INT_LOGICAL = frozenset({"date", "time-millis", "timestamp-millis", "timestamp-micros", "local-timestamp-millis",
                          "local-timestamp-micros"})


def avro_codec(compression: str, avro_codec_option: str | None = None) -> str:
    """The Avro codec for ``file.compression`` (or ``avro.codec`` when set); an unknown one is an OptionError."""
    key, name = ("avro.codec", avro_codec_option) if avro_codec_option else ("file.compression", compression)
    codec = AVRO_CODECS.get(name.lower())
    if codec is None:
        raise OptionError(f"{key} = {name!r} is not an Avro codec (one of {', '.join(AVRO_CODECS)})")
    if codec == "snappy" and importlib.util.find_spec("cramjam") is None:
        raise OptionError(f"{key} = {name!r}: Avro snappy needs the cramjam package, which is not installed")
    return codec


# ---- schema ------------------------------------------------------------------------------------------------------

def avro_schema(schema: pa.Schema) -> list[Any]:
    """The Avro writer schema Paimon Java derives for the columns of ``schema`` (a nullable record)."""
    return ["null", {"type": "record", "name": RECORD_NAME, "fields": [_avro_field(f, RECORD_NAME) for f in schema]}]


def _avro_field(f: pa.Field, parent: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": f.name, "type": _avro_type(f.type, f.nullable, f"{parent}_{f.name}")}
    if f.nullable:
        out["default"] = None
    return out


def _avro_type(t: pa.DataType, nullable: bool, row_name: str) -> Any:
    base = _avro_base(t, row_name)
    return ["null", base] if nullable else base


_PRIMITIVES: tuple[tuple[Callable[[pa.DataType], bool], str], ...] = (
    (pa.types.is_boolean, "boolean"), (pa.types.is_int8, "int"), (pa.types.is_int16, "int"),
    (pa.types.is_int32, "int"), (pa.types.is_int64, "long"), (pa.types.is_float32, "float"),
    (pa.types.is_float64, "double"), (pa.types.is_string, "string"), (pa.types.is_large_string, "string"),
    (pa.types.is_binary, "bytes"), (pa.types.is_large_binary, "bytes"), (pa.types.is_fixed_size_binary, "bytes"))


def _avro_base(t: pa.DataType, row_name: str) -> Any:  # noqa: PLR0911 - one branch per type
    for is_type, name in _PRIMITIVES:
        if is_type(t):
            return name
    if pa.types.is_date32(t):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_time32(t):
        return {"type": "int", "logicalType": "time-millis"}
    if pa.types.is_timestamp(t):
        unit = _avro_ts_unit(t)
        local = "local-" if t.tz is not None else ""
        return {"type": "long", "logicalType": f"{local}timestamp-{unit}"}
    if pa.types.is_decimal(t):
        return {"type": "bytes", "logicalType": "decimal", "precision": t.precision, "scale": t.scale}
    if pa.types.is_struct(t):
        return {"type": "record", "name": row_name,
                "fields": [_avro_field(t.field(i), row_name) for i in range(t.num_fields)]}
    if pa.types.is_list(t) or pa.types.is_fixed_size_list(t):  # VECTOR<t, n>: an Avro array (of n items)
        return {"type": "array", "items": _avro_type(t.value_type, t.value_field.nullable, row_name)}
    if pa.types.is_map(t):
        kt, vf = t.key_type, t.item_field
        if pa.types.is_string(kt):
            return {"type": "map", "values": _avro_type(vf.type, vf.nullable, row_name)}
        value: dict[str, Any] = {"name": "value", "type": _avro_type(vf.type, vf.nullable, f"{row_name}_value")}
        if vf.nullable:
            value["default"] = None
        entry = {"type": "record", "name": row_name,
                 "fields": [{"name": "key", "type": _avro_type(kt, False, f"{row_name}_key")}, value]}
        return {"type": "array", "logicalType": "map", "items": entry}
    raise OptionError(f"type {t} cannot be written to an Avro data file")


def _avro_ts_unit(t: pa.TimestampType) -> str:
    if t.unit in ("s", "ms"):
        return "millis"
    if t.unit == "us":
        return "micros"
    raise OptionError("file.format = avro: Avro does not support TIMESTAMP with precision > 6 (as in Paimon)")


def _arrow_type(s: Any) -> pa.DataType:
    """The Arrow type of an Avro (writer) schema, as our tables hold it (nullability aside)."""
    if isinstance(s, list):
        branches = [b for b in s if b != "null"]
        if len(branches) != 1:
            raise ValueError(f"unsupported Avro union {s}")
        return _arrow_type(branches[0])
    if isinstance(s, str):
        simple = {"boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
                  "double": pa.float64(), "string": pa.string(), "bytes": pa.binary()}
        if s not in simple:
            raise ValueError(f"unsupported Avro type {s!r}")
        return simple[s]
    kind, logical = s["type"], s.get("logicalType")
    by_logical = _arrow_logical_type(s, logical)
    if by_logical is not None:
        return by_logical
    return _arrow_complex_type(s, kind, logical)


def _arrow_logical_type(s: dict[str, Any], logical: Any) -> pa.DataType | None:
    """The Arrow type of an Avro date, time, timestamp or decimal logical type; None for any other schema."""
    if logical == "date":
        return pa.date32()
    if logical == "time-millis":
        return pa.time32("ms")
    if logical in ("timestamp-millis", "timestamp-micros", "local-timestamp-millis", "local-timestamp-micros"):
        unit = "ms" if logical.endswith("millis") else "us"
        return pa.timestamp(unit, tz="UTC" if logical.startswith("local-") else None)
    if logical == "decimal":
        return pa.decimal128(int(s["precision"]), int(s.get("scale", 0)))
    return None


def _arrow_complex_type(s: dict[str, Any], kind: Any, logical: Any) -> pa.DataType:
    """The Arrow type of an Avro record, array (or array-encoded map), map, fixed or enum; else of its ``type``."""
    if kind == "record":
        return pa.struct([pa.field(f["name"], _arrow_type(f["type"]), nullable=_nullable(f["type"]))
                          for f in s["fields"]])
    if kind == "array" and logical == "map":
        kf, vf = s["items"]["fields"]
        return pa.map_(pa.field("key", _arrow_type(kf["type"]), nullable=False),
                       pa.field("value", _arrow_type(vf["type"]), nullable=_nullable(vf["type"])))
    if kind == "array":
        return pa.list_(pa.field("item", _arrow_type(s["items"]), nullable=_nullable(s["items"])))
    if kind == "map":
        return pa.map_(pa.field("key", pa.string(), nullable=False),
                       pa.field("value", _arrow_type(s["values"]), nullable=_nullable(s["values"])))
    if kind == "fixed":
        return pa.binary()
    if kind == "enum":
        return pa.string()
    return _arrow_type(kind)


def _nullable(s: Any) -> bool:
    return isinstance(s, list) and "null" in s


def _raw_ints(s: Any) -> Any:
    """``s`` without the date/time logical types (read as their ints: Arrow builds dates and timestamps from them)."""
    if isinstance(s, list):
        return [_raw_ints(b) for b in s]
    if isinstance(s, dict):
        if s.get("logicalType") in _INT_LOGICAL:
            return s["type"]
        out = dict(s)
        if "fields" in s:
            out["fields"] = [{**f, "type": _raw_ints(f["type"])} for f in s["fields"]]
        if "items" in s:
            out["items"] = _raw_ints(s["items"])
        if "values" in s:
            out["values"] = _raw_ints(s["values"])
        return out
    return s


# ---- write -------------------------------------------------------------------------------------------------------

def _plain_type(t: pa.DataType) -> pa.DataType:
    """``t`` with dates, times and timestamps as their integers (in the Avro unit), recursively."""
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        return pa.int32()
    if pa.types.is_timestamp(t):
        return pa.int64()
    if pa.types.is_list(t) or pa.types.is_fixed_size_list(t):
        return pa.list_(t.value_field.with_type(_plain_type(t.value_type)))
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(_plain_type(t.key_type)), t.item_field.with_type(_plain_type(t.item_type)))
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(_plain_type(t.field(i).type)) for i in range(t.num_fields)])
    return t


def _to_avro_units(col: pa.ChunkedArray) -> pa.ChunkedArray:
    t = col.type
    if pa.types.is_timestamp(t) and t.unit == "s":
        col = col.cast(pa.timestamp("ms", tz=t.tz))
    plain = _plain_type(col.type)
    return col if plain.equals(col.type) else col.cast(plain)


def _has_map(t: pa.DataType) -> bool:
    if pa.types.is_map(t):
        return True
    if pa.types.is_list(t):
        return _has_map(t.value_type)
    if pa.types.is_struct(t):
        return any(_has_map(t.field(i).type) for i in range(t.num_fields))
    return False


def _avro_value(v: Any, t: pa.DataType) -> Any:
    """A Python value of Arrow type ``t`` as fastavro writes it (maps as dicts or key/value records)."""
    if v is None:
        return None
    if pa.types.is_map(t):
        if pa.types.is_string(t.key_type):
            return {k: _avro_value(x, t.item_type) for k, x in v}
        return [{"key": _avro_value(k, t.key_type), "value": _avro_value(x, t.item_type)} for k, x in v]
    if pa.types.is_list(t):
        return [_avro_value(x, t.value_type) for x in v]
    if pa.types.is_struct(t):
        return {t.field(i).name: _avro_value(v[t.field(i).name], t.field(i).type) for i in range(t.num_fields)}
    return v


def write_avro_data(file_io: FileIO, path: str, table: pa.Table, compression: str = "zstd", level: int = 1,
                    avro_codec_option: str | None = None) -> int:
    """Write ``table`` as one Avro data file (Paimon's writer schema; ``compression`` a ``file.compression`` name,
    ``avro_codec_option`` the table's ``avro.codec``); returns its size."""
    codec = avro_codec(compression, avro_codec_option)
    if flat(table.schema):  # every column primitive: the vectorized encoder
        data = encode_container(table, avro_schema(table.schema), codec, level, record_in_union=True)
        with file_io.open_output(path) as out:
            out.write(data)
        return file_io.file_size(path)
    schema = fastavro.parse_schema(avro_schema(table.schema))
    names = table.column_names
    columns: list[list[Any]] = []
    for col in table.columns:
        plain = _to_avro_units(col)
        values = plain.to_pylist()
        if _has_map(plain.type):
            values = [_avro_value(v, plain.type) for v in values]
        columns.append(values)
    records = [dict(zip(names, row)) for row in zip(*columns)]
    buf = io.BytesIO()
    fastavro.writer(buf, schema, records, codec=codec, codec_compression_level=level if codec == "zstandard" else None)
    with file_io.open_output(path) as out:
        out.write(buf.getvalue())
    return file_io.file_size(path)


# ---- read --------------------------------------------------------------------------------------------------------

def _plain_container(data: bytes, meta: dict[str, bytes], pos: int) -> bytes:
    """The container file with date/time logical types removed from its header's schema (their encoding is the
    plain int/long, so the blocks stay as they are).

    fastavro then reads those values as ints without a reader schema (its fast path: no schema resolution, no
    datetime objects); Arrow builds dates, times and timestamps from the ints."""
    plain = {**meta, "avro.schema": json.dumps(_raw_ints(json.loads(meta["avro.schema"]))).encode()}
    return encode_header(plain) + data[pos:]


def _record_of(schema: Any) -> dict[str, Any]:
    """The record of a data file's writer schema (Paimon Java writes it as the union of null and the record)."""
    if isinstance(schema, list):
        records = [b for b in schema if b != "null"]
        schema = records[0] if len(records) == 1 else None
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise ValueError("the writer schema of an Avro data file is not a record")
    return schema


def _arrow_schema(record: dict[str, Any], columns: Sequence[str] | None) -> pa.Schema:
    """The Arrow schema of ``columns`` (all when None) of an Avro record schema."""
    by_name = {f["name"]: f for f in record["fields"]}
    names = list(columns) if columns is not None else list(by_name)
    missing = [n for n in names if n not in by_name]
    if missing:
        raise ValueError(f"no column {missing[0]!r} in the Avro data file")
    return pa.schema([pa.field(n, _arrow_type(by_name[n]["type"]), nullable=True) for n in names])


def read_avro_data(file_io: FileIO, path: str, columns: Sequence[str] | None = None) -> pa.Table:
    """Read (some columns of) an Avro data file into one table."""
    data, meta, pos, arrow = _open(file_io, path, columns)
    if native_blocker(meta) is None:
        return native_table(data, meta, pos, arrow)
    tables = list(_iter_fastavro(data, meta, pos, arrow, 1 << 62))
    if len(tables) == 1:
        return tables[0]
    return pa.concat_tables(tables)


def iter_avro_data(file_io: FileIO, path: str, columns: Sequence[str] | None, batch_rows: int) -> Iterator[pa.Table]:
    """(Some columns of) an Avro data file in tables of at most ``batch_rows`` rows."""
    data, meta, pos, arrow = _open(file_io, path, columns)
    if native_blocker(meta) is None:
        yield from iter_native(data, meta, pos, arrow, batch_rows)
    else:
        yield from _iter_fastavro(data, meta, pos, arrow, batch_rows)


def _open(file_io: FileIO, path: str, columns: Sequence[str] | None) -> tuple[bytes, dict[str, bytes], int, pa.Schema]:
    """A data file's bytes, header, position after it and the Arrow schema of ``columns``; logs the reader."""
    with file_io.open_input(path) as f:
        data = f.read()
    header = read_header(data)
    if header is None:
        raise ValueError("not an Avro object container file (bad magic)")
    meta, _, pos = header
    pos -= 16  # the sync marker belongs to the header that is rewritten
    arrow = _arrow_schema(_record_of(json.loads(meta["avro.schema"])), columns)
    blocker = native_blocker(meta)
    log.debug("reading %s with %s", path, "DataFusion" if blocker is None else f"fastavro ({blocker})")
    return data, meta, pos, arrow


def _iter_fastavro(data: bytes, meta: dict[str, bytes], pos: int, arrow: pa.Schema,
                   batch_rows: int) -> Iterator[pa.Table]:
    """The fallback: fastavro decodes every column of every row; only those of ``arrow`` become Arrow arrays."""
    batch: list[Any] = []
    emitted = False
    for rec in fastavro.reader(io.BytesIO(_plain_container(data, meta, pos))):
        if rec is None:
            raise ValueError("a null row in an Avro data file")
        batch.append(rec)
        if len(batch) >= batch_rows:
            yield pa.Table.from_pylist(batch, schema=arrow)
            emitted, batch = True, []
    if batch or not emitted:
        yield pa.Table.from_pylist(batch, schema=arrow)


def avro_column_names(file_io: FileIO, path: str) -> list[str]:
    """The top-level column names of an Avro data file (its header only)."""
    with file_io.open_input(path) as f:
        return [fld["name"] for fld in _record_of(fastavro.reader(f).writer_schema)["fields"]]
