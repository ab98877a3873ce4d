"""Column values as file indexes see them: Paimon's internal representation of each type, vectorized.

Paimon indexes the *internal* value of a column: ``BinaryString`` bytes for CHAR/VARCHAR, ``byte[]`` for
BINARY/VARBINARY, ``int`` days for DATE, ``int`` millis of day for TIME, epoch millis (precision <= 3) or micros
(precision > 3) for TIMESTAMP / TIMESTAMP_LTZ, the unscaled ``long`` of a DECIMAL (BSI only), IEEE bits for
FLOAT/DOUBLE (``Float.floatToIntBits`` / ``Double.doubleToLongBits``, which canonicalize NaN).

:class:`ColumnValues` holds one Arrow column in that form; :func:`literal_value` converts a predicate literal to the
same domain, telling whether the conversion is exact (a literal between two representable values is floored).
"""

from __future__ import annotations

import datetime
import decimal
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.format.file_index.java_compat import binary_parts
from table_engine.types import DataType

I64 = npt.NDArray[np.int64]

#: value kinds: how the internal value is stored and serialized (Paimon's BitmapTypeVisitor categories)
STRING, BINARY, BOOLEAN, BYTE, SHORT, INT, LONG, FLOAT, DOUBLE, DECIMAL = (
    "string", "binary", "boolean", "byte", "short", "int", "long", "float", "double", "decimal")

_KIND_OF_ROOT = {
    "CHAR": STRING, "VARCHAR": STRING, "BINARY": BINARY, "VARBINARY": BINARY, "BOOLEAN": BOOLEAN,
    "TINYINT": BYTE, "SMALLINT": SHORT, "INT": INT, "DATE": INT, "TIME": INT, "BIGINT": LONG,
    "TIMESTAMP": LONG, "TIMESTAMP_LTZ": LONG, "FLOAT": FLOAT, "DOUBLE": DOUBLE, "DECIMAL": DECIMAL,
}
_RANGE = {BYTE: (-(2**7), 2**7 - 1), SHORT: (-(2**15), 2**15 - 1), INT: (-(2**31), 2**31 - 1),
          LONG: (-(2**63), 2**63 - 1), DECIMAL: (-(2**63), 2**63 - 1)}
INTEGRAL_KINDS = frozenset({BYTE, SHORT, INT, LONG, DECIMAL})
_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_DATE = datetime.date(1970, 1, 1)


def value_kind(t: DataType) -> str | None:
    """The internal value kind of a type (None for ARRAY/MAP/ROW and anything without one)."""
    return _KIND_OF_ROOT.get(t.root)


def timestamp_is_millis(t: DataType) -> bool:
    """Paimon indexes TIMESTAMP(p <= 3) as epoch millis and higher precisions as epoch micros."""
    return (t.precision if t.precision is not None else 6) <= 3


def _combine(col: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        return col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    return col


@dataclass
class ColumnValues:
    """One column's internal values: ``ints`` (integral kinds, booleans, float/double bits) or byte ranges
    (``starts``/``lengths`` into ``data`` for strings and binaries); ``valid`` marks non-null rows."""

    kind: str
    valid: npt.NDArray[np.bool_]
    ints: I64 | None = None
    starts: I64 | None = None
    lengths: I64 | None = None
    data: npt.NDArray[np.uint8] | None = None

    def __len__(self) -> int:
        return len(self.valid)

    @staticmethod
    def from_arrow(col: pa.Array | pa.ChunkedArray, t: DataType) -> ColumnValues:
        arr = _combine(col)
        kind = value_kind(t)
        if kind is None:
            raise ValueError(f"type {t} has no file index representation")
        n = len(arr)
        valid = np.ones(n, np.bool_) if arr.null_count == 0 else \
            np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=np.bool_)
        if kind in (STRING, BINARY):
            if pa.types.is_dictionary(arr.type):
                arr = arr.dictionary_decode()
            starts, lengths, data = binary_parts(arr)
            return ColumnValues(kind, valid, starts=starts, lengths=lengths, data=data)
        return ColumnValues(kind, valid, ints=_internal_ints(arr, t, kind))

    def byte_values(self) -> list[bytes]:
        """Each value's bytes (strings/binaries; empty for nulls)."""
        assert self.starts is not None and self.lengths is not None and self.data is not None
        raw = self.data.tobytes()
        return [raw[s:s + ln] for s, ln in zip(self.starts.tolist(), self.lengths.tolist())]


def _internal_ints(arr: pa.Array, t: DataType, kind: str) -> I64:
    at = arr.type
    if kind == BOOLEAN:
        return np.asarray(pc.fill_null(arr, False).to_numpy(zero_copy_only=False), dtype=np.int64)
    if kind == FLOAT:
        f = np.asarray(pc.fill_null(arr.cast(pa.float32()), 0.0).to_numpy(zero_copy_only=False), dtype=np.float32)
        bits = f.view(np.int32).astype(np.int64)
        bits[np.isnan(f)] = 0x7FC00000  # Float.floatToIntBits
        return bits
    if kind == DOUBLE:
        d = np.asarray(pc.fill_null(arr.cast(pa.float64()), 0.0).to_numpy(zero_copy_only=False), dtype=np.float64)
        bits = d.view(np.int64).copy()
        bits[np.isnan(d)] = 0x7FF8000000000000  # Double.doubleToLongBits
        return bits
    if kind == DECIMAL:
        return _unscaled(arr, t)
    if pa.types.is_timestamp(at):
        per_second = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}[at.unit]
        target = 1000 if timestamp_is_millis(t) else 1_000_000
        v = np.asarray(pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False), dtype=np.int64)
        if per_second <= target:
            return v * (target // per_second)
        return np.floor_divide(v, per_second // target)  # Timestamp.toMicros / getMillisecond floor
    if pa.types.is_time(at):
        unit = at.unit
        v = np.asarray(pc.fill_null(arr.cast(pa.int64() if at.bit_width == 64 else pa.int32()), 0)
                       .to_numpy(zero_copy_only=False), dtype=np.int64)
        return {"s": v * 1000, "ms": v, "us": np.floor_divide(v, 1000), "ns": np.floor_divide(v, 1_000_000)}[unit]
    if pa.types.is_date(at):
        if pa.types.is_date64(at):
            arr = arr.cast(pa.date32())
        return np.asarray(pc.fill_null(arr.cast(pa.int32()), 0).to_numpy(zero_copy_only=False), dtype=np.int64)
    return np.asarray(pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False), dtype=np.int64)


def _unscaled(arr: pa.Array, t: DataType) -> I64:
    """Unscaled values of a decimal column (precision <= 18, so they fit a long)."""
    if not pa.types.is_decimal(arr.type):
        arr = arr.cast(pa.decimal128(t.precision or 18, t.scale or 0))
    out = np.zeros(len(arr), np.int64)
    if len(arr) == 0:
        return out
    if pa.types.is_decimal128(arr.type):
        bufs = arr.buffers()
        words = np.frombuffer(bufs[1], dtype="<i8", count=2 * (len(arr) + arr.offset))[2 * arr.offset:]
        out = words[0::2].copy()  # low 64 bits; exact because |unscaled| < 10**18
    else:
        for i, v in enumerate(arr.to_pylist()):
            if v is not None:
                out[i] = int(v.scaleb(arr.type.scale))
    return out


# ---- literals ------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Literal:
    """A predicate literal in a column's internal domain.

    Integral kinds: ``value`` is ``floor(literal)`` and ``exact`` tells whether the literal is exactly that value.
    FLOAT/DOUBLE: ``value`` is the IEEE bit pattern (exact representations only). Strings/binaries: the bytes.
    """

    value: int | bytes
    exact: bool = True


def literal_value(v: object, t: DataType) -> Literal | None:
    """``v`` as an internal value of a column of type ``t``; None when it cannot be compared safely."""
    kind = value_kind(t)
    if v is None or kind is None:
        return None
    try:
        if kind == STRING:
            return Literal(v.encode("utf-8")) if isinstance(v, str) else None
        if kind == BINARY:
            return Literal(bytes(v)) if isinstance(v, bytes | bytearray | memoryview) else None
        if kind == BOOLEAN:
            return Literal(int(v)) if isinstance(v, bool | np.bool_) else None
        if kind == FLOAT:
            return _float_literal(v, np.float32, np.int32, 0x7FC00000)
        if kind == DOUBLE:
            return _float_literal(v, np.float64, np.int64, 0x7FF8000000000000)
        if t.root in ("DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ"):
            return _temporal_literal(v, t)
        if kind == DECIMAL:
            return _decimal_literal(v, t)
        return _integral_literal(v, kind)
    except (TypeError, ValueError, OverflowError, ArithmeticError):
        return None


def _temporal_literal(v: object, t: DataType) -> Literal | None:
    """``v`` as a DATE (days), TIME (millis) or TIMESTAMP literal; None when it is not of the column's kind."""
    root = t.root
    if root == "DATE":
        if isinstance(v, datetime.date) and not isinstance(v, datetime.datetime):
            return Literal((v - _EPOCH_DATE).days)
        return None
    if root == "TIME":
        if isinstance(v, datetime.time):
            micros = ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
            return Literal(micros // 1000, micros % 1000 == 0)
        return None
    return _timestamp_literal(v, t)


def _float_literal(v: object, ftype: type[np.floating], itype: type[np.integer], nan_bits: int) -> Literal | None:
    if isinstance(v, bool) or not isinstance(v, int | float | np.integer | np.floating):
        return None
    f = ftype(v)
    if math.isnan(float(v)):
        return Literal(nan_bits)
    if float(f) != float(v) or (isinstance(v, int) and int(float(v)) != v):
        return None  # not exactly representable in the column type: let rows be compared for real
    return Literal(int(np.asarray(f).view(itype)))


def _integral_literal(v: object, kind: str) -> Literal | None:
    lo, hi = _RANGE[kind]
    if isinstance(v, bool | np.bool_):
        return None
    if isinstance(v, int | np.integer):
        iv = int(v)
        exact = True
    elif isinstance(v, float | np.floating) and math.isfinite(float(v)):
        iv = math.floor(float(v))
        exact = float(v).is_integer()
    elif isinstance(v, decimal.Decimal) and v.is_finite():
        iv = int(v.to_integral_value(rounding=decimal.ROUND_FLOOR))
        exact = v == iv
    else:
        return None
    if iv < lo or iv > hi:
        return None
    return Literal(iv, exact)


def _decimal_literal(v: object, t: DataType) -> Literal | None:
    if isinstance(v, bool) or not isinstance(v, int | decimal.Decimal | np.integer):
        return None
    d = decimal.Decimal(int(v)) if not isinstance(v, decimal.Decimal) else v
    if not d.is_finite():
        return None
    scaled = d.scaleb(t.scale or 0, context=decimal.Context(prec=100))
    iv = int(scaled.to_integral_value(rounding=decimal.ROUND_FLOOR))
    lo, hi = _RANGE[DECIMAL]
    if iv < lo or iv > hi:
        return None
    return Literal(iv, scaled == iv)


def _timestamp_literal(v: object, t: DataType) -> Literal | None:
    if not isinstance(v, datetime.datetime):
        return None
    if v.tzinfo is not None:
        v = v.astimezone(datetime.UTC).replace(tzinfo=None)
    delta = v - _EPOCH
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    nanos = int(getattr(v, "nanosecond", 0) or 0)
    if timestamp_is_millis(t):
        return Literal(micros // 1000, micros % 1000 == 0 and nanos == 0)
    return Literal(micros, nanos == 0)
