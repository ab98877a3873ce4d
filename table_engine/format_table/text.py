"""Values as Paimon writes them in csv and json files, and back: the text of each Arrow type, column at a time.

Paimon's ``CsvFormatWriter`` and ``JsonFormatWriter`` render a value with its cast to string (``CastExecutors``):
integers and decimals plainly (``BigDecimal.toPlainString``), booleans ``true``/``false``, floats as Java's
``Double.parseDouble`` reads them (``Infinity``, ``NaN``), DATE ``yyyy-MM-dd``, TIMESTAMP ``yyyy-MM-dd HH:mm:ss``
with the type's fraction digits (``DateTimeUtils.formatTimestamp``), binary as base64. Reading parses the same
text back (``CsvParser.parseField``); a value equal to the null literal is null whatever its type, and a boolean is
``true`` exactly when its text is ``true`` in any case (Java's ``Boolean.parseBoolean``).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import DataError, UnsupportedError


def check_text_type(name: str, t: pa.DataType, fmt: str) -> None:
    """UnsupportedError unless a csv/json file can hold a column of type ``t`` (Paimon's
    ``CsvFileFormat.validateDataType``: primitives only; nested json values are not implemented here)."""
    ok = (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t) or pa.types.is_decimal(t)
          or pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
          or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t) or pa.types.is_date32(t)
          or pa.types.is_timestamp(t) or pa.types.is_time(t))
    if not ok:
        raise UnsupportedError(f"Column {name!r} of type {t} cannot be stored in a {fmt} format table (csv and "
                               "json hold primitive types only; use parquet or orc)")


def _is_stringish(t: pa.DataType) -> bool:
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t))


def _is_binaryish(t: pa.DataType) -> bool:
    return bool(pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t))


def render(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """The Paimon text of every value of ``arr`` (nulls stay null), as a string array."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    if _is_stringish(t):
        return pc.cast(arr, pa.string())
    if _is_binaryish(t):
        return pa.array([None if v is None else base64.b64encode(v).decode("ascii") for v in arr.to_pylist()],
                        pa.string())
    if pa.types.is_floating(t):
        text = pc.cast(arr, pa.string())
        text = pc.if_else(pc.equal(text, "inf"), "Infinity", text)
        text = pc.if_else(pc.equal(text, "-inf"), "-Infinity", text)
        return pc.if_else(pc.equal(text, "nan"), "NaN", text)
    if pa.types.is_timestamp(t):
        if t.tz is not None:  # LTZ: rendered as UTC wall-clock time (Java: the JVM's zone)
            arr = arr.cast(pa.timestamp(t.unit))
        return pc.cast(arr, pa.string())
    return pc.cast(arr, pa.string())


@dataclass
class Parsed:
    """A column parsed from text: its values, and which were malformed (None: none were)."""

    values: pa.Array
    malformed: pa.Array | None


def _parse_binary(text: pa.Array, t: pa.DataType) -> Parsed:
    out: list[bytes | None] = []
    bad: list[bool] = []
    for v in text.to_pylist():
        try:
            out.append(None if v is None else base64.b64decode(v, validate=True))
            bad.append(False)
        except (binascii.Error, ValueError):
            out.append(None)
            bad.append(True)
    return Parsed(pa.array(out, t), pa.array(bad) if any(bad) else None)


def _cast(text: pa.Array, t: pa.DataType) -> pa.Array:
    if pa.types.is_time(t):
        stamp = pc.cast(pc.binary_join_element_wise("1970-01-01 ", text, ""), pa.timestamp("ns"))
        return pc.cast(pc.cast(stamp, pa.time64("ns")), t)
    if pa.types.is_timestamp(t) and t.tz is not None:
        return pc.cast(pc.cast(text, pa.timestamp(t.unit)), t)
    if pa.types.is_decimal(t):
        return pc.cast(pc.cast(text, pa.decimal128(38, t.scale) if t.precision <= 38 else pa.decimal256(76, t.scale)),
                       t)
    return pc.cast(text, t)


def parse(text: pa.Array | pa.ChunkedArray, t: pa.DataType, null_literal: str | None) -> Parsed:
    """Parse Paimon text into type ``t``: vectorized, and value by value only when some value is malformed (to
    find which). ``null_literal``: the text that is null (csv), or None (json: only a json null is null)."""
    if isinstance(text, pa.ChunkedArray):
        text = text.combine_chunks()
    text = pc.cast(text, pa.string())
    if null_literal is not None:
        text = pc.if_else(pc.equal(text, null_literal), pa.scalar(None, pa.string()), text)
    if _is_stringish(t):
        return Parsed(pc.cast(text, t), None)
    if pa.types.is_boolean(t):
        return Parsed(pc.equal(pc.utf8_lower(text), "true"), None)
    if _is_binaryish(t):
        return _parse_binary(text, t)
    try:
        return Parsed(_cast(text, t), None)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    values: list[object] = []
    bad: list[bool] = []
    for v in text.to_pylist():  # error path only: which values do not parse
        if v is None:
            values.append(None)
            bad.append(False)
            continue
        try:
            values.append(_cast(pa.array([v]), t)[0].as_py())
            bad.append(False)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            values.append(None)
            bad.append(True)
    return Parsed(pa.array(values, t), pa.array(bad))


def first_malformed(text: pa.Array | pa.ChunkedArray, malformed: pa.Array) -> str:
    """The first malformed value's text (for an error message)."""
    index = pc.index(malformed, True).as_py()
    return str(text[index].as_py())


def raise_malformed(path: str, column: str, t: pa.DataType, value: str) -> None:
    """The DataError of a value that does not parse (``csv.mode`` = ``failfast``)."""
    raise DataError(f"{path}: value {value!r} of column {column!r} does not parse as {t}")
