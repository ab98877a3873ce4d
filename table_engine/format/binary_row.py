"""Paimon ``BinaryRow`` encoding of Python values (partitions, min/max keys, stats rows in manifests).

Serialized form (what manifests store): 4-byte big-endian arity, then the BinaryRow:

* header + null bitset, ``bitset_width(arity)`` bytes; byte 0 is the RowKind (always 0 = INSERT here), the null flag
  of field ``i`` is bit ``i + 8``;
* one 8-byte little-endian slot per field;
* the variable part, 8-byte aligned, with offsets counted from the start of the BinaryRow.

Layout follows Java Paimon (``AbstractBinaryWriter``/``RowHelper``). One deliberate difference to pypaimon 2.1.0: a
null DECIMAL(p>18) / TIMESTAMP(p>3) still reserves its 16 / 8 zero bytes in the variable part with slot
``offset << 32`` (Java does, pypaimon writes an all-zero slot and no variable bytes). Both forms decode the same.
Likewise DECIMAL(p>18) bytes are Java's minimal ``BigInteger.toByteArray()``; pypaimon adds a byte for negative
powers of two (e.g. -128). Only rows holding such values can hash differently from pypaimon.

Python values are those pyarrow's ``as_py()`` gives: ``bool``, ``int``, ``float``, ``str``, ``bytes``,
``decimal.Decimal``, ``datetime.date``/``time``/``datetime`` (naive = UTC wall clock; aware values are converted to
UTC), ``dict`` for ROW. ARRAY and MAP are not supported. Decoding gives the same kinds of values (TIMESTAMP_LTZ as
aware UTC datetimes); timestamps are truncated to microseconds, as Python datetimes cannot hold nanoseconds.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta
from decimal import ROUND_HALF_UP, Context, Decimal, InvalidOperation
from numbers import Integral
from typing import Any

from table_engine.errors import DataError, UnsupportedError
from table_engine.types import DataType

HEADER_BITS = 8
MAX_INLINE = 7
#: The serialized empty row: arity 0 + one 8-byte header word.
EMPTY_ROW: bytes = bytes(12)

_EPOCH = datetime(1970, 1, 1)
_EPOCH_DAY = date(1970, 1, 1)
_DEC_CTX = Context(prec=100, rounding=ROUND_HALF_UP)
_INT_WIDTH = {"TINYINT": 1, "SMALLINT": 2, "INT": 4, "BIGINT": 8}
_FIXED_ROOTS = frozenset({"BOOLEAN", *_INT_WIDTH, "FLOAT", "DOUBLE", "DATE", "TIME"})
_INLINE_MARK = 0x80 << 56


def bitset_width(arity: int) -> int:
    """Bytes of header + null bitset of a BinaryRow with ``arity`` fields."""
    return ((arity + 63 + HEADER_BITS) // 64) * 8


def is_compact_decimal(precision: int) -> bool:
    """Whether DECIMAL(precision) stores its unscaled value in the 8-byte slot."""
    return precision <= 18


def is_compact_timestamp(precision: int) -> bool:
    """Whether TIMESTAMP(precision) stores epoch millis in the 8-byte slot."""
    return precision <= 3


def round8(n: int) -> int:
    """``n`` rounded up to a multiple of 8."""
    return (n + 7) & ~7


# ---- scalar conversions (shared with bucket hashing) -------------------------------------------------------------

def decimal_unscaled(value: object, precision: int, scale: int) -> int:
    """Unscaled integer of ``value`` at ``scale`` (rounded HALF_UP); DataError if it exceeds ``precision`` digits."""
    try:
        d = value if isinstance(value, Decimal) else Decimal(str(value))
        q = d.quantize(Decimal(1).scaleb(-scale), context=_DEC_CTX)
    except (InvalidOperation, ValueError) as e:
        raise DataError(f"value {value!r} is not a valid DECIMAL({precision}, {scale})") from e
    if not q.is_finite():
        raise DataError(f"value {value!r} is not a finite DECIMAL({precision}, {scale})")
    unscaled = int(q.scaleb(scale, context=_DEC_CTX))
    if unscaled != 0 and len(str(abs(unscaled))) > precision:
        raise DataError(f"value {value!r} does not fit DECIMAL({precision}, {scale})")
    return unscaled


def unscaled_bytes(unscaled: int) -> bytes:
    """Minimal big-endian two's-complement bytes of ``unscaled`` (Java ``BigInteger.toByteArray``)."""
    bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
    return unscaled.to_bytes(bits // 8 + 1, "big", signed=True)


def timestamp_millis_nanos(value: object) -> tuple[int, int]:
    """``(epoch millis, nano of millisecond)`` of a datetime (naive = UTC); keeps ``.nanosecond`` if present."""
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        delta = value - _EPOCH
        micros = (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
        nanos = int(getattr(value, "nanosecond", 0) or 0)
        return micros // 1000, (micros % 1000) * 1000 + nanos
    if isinstance(value, int) and not isinstance(value, bool):
        return value, 0
    raise DataError(f"expected a datetime for a TIMESTAMP value, got {type(value).__name__} {value!r}")


def _date_days(value: object) -> int:
    if isinstance(value, datetime):
        value = value.date()
    if isinstance(value, date):
        return (value - _EPOCH_DAY).days
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise DataError(f"expected a date for a DATE value, got {type(value).__name__} {value!r}")


def _time_millis(value: object) -> int:
    if isinstance(value, time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise DataError(f"expected a time for a TIME value, got {type(value).__name__} {value!r}")


def _var_bytes(value: object, t: DataType) -> bytes:
    if t.is_string:
        if not isinstance(value, str):
            raise DataError(f"expected str for {t}, got {type(value).__name__} {value!r}")
        return value.encode("utf-8")
    if not isinstance(value, bytes | bytearray | memoryview):
        raise DataError(f"expected bytes for {t}, got {type(value).__name__} {value!r}")
    return bytes(value)


def _precision(t: DataType, default: int) -> int:
    return default if t.precision is None else t.precision


# ---- encoding ----------------------------------------------------------------------------------------------------

class _Writer:
    """Builds one BinaryRow: fixed part in ``buf``, variable part appended at ``buf``'s end."""

    def __init__(self, arity: int) -> None:
        self.null_width = bitset_width(arity)
        self.buf = bytearray(self.null_width + 8 * arity)

    def slot(self, pos: int) -> int:
        return self.null_width + 8 * pos

    def set_null(self, pos: int) -> None:
        bit = pos + HEADER_BITS
        self.buf[bit >> 3] |= 1 << (bit & 7)

    def put_slot(self, pos: int, value: int) -> None:
        struct.pack_into("<Q", self.buf, self.slot(pos), value & 0xFFFFFFFFFFFFFFFF)

    def append_var(self, data: bytes, reserve: int) -> int:
        """Append ``data`` zero-padded to ``reserve`` bytes; return its offset."""
        offset = len(self.buf)
        self.buf += data + bytes(reserve - len(data))
        return offset

    def write(self, pos: int, value: object, t: DataType) -> None:
        if value is None:
            self._write_null(pos, t)
            return
        try:
            self._write_value(pos, value, t)
        except (struct.error, OverflowError, TypeError) as e:
            raise DataError(f"value {value!r} cannot be stored as {t}: {e}") from e

    def _write_null(self, pos: int, t: DataType) -> None:
        """Set the null bit; a non-compact DECIMAL or TIMESTAMP still reserves its variable part."""
        root = t.root
        self.set_null(pos)
        if root == "DECIMAL" and not is_compact_decimal(_precision(t, 10)):
            self.put_slot(pos, self.append_var(b"", 16) << 32)
        elif root in ("TIMESTAMP", "TIMESTAMP_LTZ") and not is_compact_timestamp(_precision(t, 6)):
            self.put_slot(pos, self.append_var(b"", 8) << 32)

    def _write_value(self, pos: int, value: object, t: DataType) -> None:
        root = t.root
        if root == "DECIMAL":
            self._write_decimal(pos, value, t)
        elif root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
            self._write_timestamp(pos, value, t)
        elif root in _FIXED_ROOTS:
            self._write_fixed(self.slot(pos), value, t)
        elif t.is_string or t.is_binary:
            self._write_var(pos, _var_bytes(value, t))
        elif root == "ROW":
            nested = encode_binary_row(_row_values(value, t), [f.type for f in t.fields])
            self.put_slot(pos, (self.append_var(nested, len(nested)) << 32) | len(nested))
        else:
            raise UnsupportedError(f"BinaryRow encoding of {t} is not supported")

    def _write_fixed(self, off: int, value: object, t: DataType) -> None:
        """BOOLEAN, the integer types, FLOAT, DOUBLE, DATE and TIME: stored in the 8-byte slot at ``off``."""
        root = t.root
        if root == "BOOLEAN":
            self.buf[off] = 1 if value else 0
        elif root in _INT_WIDTH:
            if isinstance(value, bool) or not isinstance(value, Integral):
                raise DataError(f"expected int for {t}, got {type(value).__name__} {value!r}")
            w = _INT_WIDTH[root]
            self.buf[off:off + w] = int(value).to_bytes(w, "little", signed=True)
        elif root == "FLOAT":
            struct.pack_into("<f", self.buf, off, value)
        elif root == "DOUBLE":
            struct.pack_into("<d", self.buf, off, value)
        elif root == "DATE":
            struct.pack_into("<i", self.buf, off, _date_days(value))
        else:  # TIME
            struct.pack_into("<i", self.buf, off, _time_millis(value))

    def _write_decimal(self, pos: int, value: object, t: DataType) -> None:
        p, s = _precision(t, 10), t.scale or 0
        unscaled = decimal_unscaled(value, p, s)
        if is_compact_decimal(p):
            self.put_slot(pos, unscaled)
        else:
            data = unscaled_bytes(unscaled)
            self.put_slot(pos, (self.append_var(data, 16) << 32) | len(data))

    def _write_timestamp(self, pos: int, value: object, t: DataType) -> None:
        millis, nanos = timestamp_millis_nanos(value)
        if is_compact_timestamp(_precision(t, 6)):
            self.put_slot(pos, millis)
        else:
            offset = self.append_var(struct.pack("<q", millis), 8)
            self.put_slot(pos, (offset << 32) | nanos)

    def _write_var(self, pos: int, data: bytes) -> None:
        """STRING/BINARY bytes: inline in the slot up to 7 bytes, else in the variable part."""
        if len(data) <= MAX_INLINE:
            off = self.slot(pos)
            self.buf[off:off + len(data)] = data
            self.buf[off + 7] = 0x80 | len(data)
        else:
            self.put_slot(pos, (self.append_var(data, round8(len(data))) << 32) | len(data))


def _row_values(value: object, t: DataType) -> list[object]:
    if isinstance(value, Mapping):
        return [value.get(f.name) for f in t.fields]
    if isinstance(value, Sequence) and not isinstance(value, str | bytes) and len(value) == len(t.fields):
        return list(value)
    raise DataError(f"expected a dict or a sequence of {len(t.fields)} values for {t}, got {value!r}")


def encode_binary_row(values: Sequence[object], types: Sequence[DataType]) -> bytes:
    """The BinaryRow bytes of ``values`` without the arity prefix (the bytes ``BinaryRow.hashCode()`` hashes)."""
    if len(values) != len(types):
        raise DataError(f"row has {len(values)} values but {len(types)} types")
    writer = _Writer(len(types))
    for pos, (value, t) in enumerate(zip(values, types)):
        writer.write(pos, value, t)
    return bytes(writer.buf)


def encode_row(values: Sequence[object], types: Sequence[DataType]) -> bytes:
    """The serialized row as manifests store it: 4-byte big-endian arity + BinaryRow."""
    return struct.pack(">i", len(types)) + encode_binary_row(values, types)


# ---- decoding ----------------------------------------------------------------------------------------------------

def _read(data: bytes, start: int, length: int) -> bytes:
    if start < 0 or start + length > len(data):
        raise DataError(f"BinaryRow of {len(data)} bytes has no bytes [{start}, {start + length})")
    return data[start:start + length]


def _decode_field(data: bytes, off: int, t: DataType) -> object:
    root = t.root
    slot = _read(data, off, 8)
    word = int.from_bytes(slot, "little")
    if root in _FIXED_ROOTS:
        return _decode_fixed(slot, t)
    if root == "DECIMAL":
        if is_compact_decimal(_precision(t, 10)):
            unscaled = int.from_bytes(slot, "little", signed=True)
        else:
            unscaled = int.from_bytes(_read(data, word >> 32, word & 0xFFFFFFFF), "big", signed=True)
        return Decimal(unscaled).scaleb(-(t.scale or 0), context=_DEC_CTX)
    if root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return _decode_timestamp(data, slot, word, t)
    if t.is_string or t.is_binary:
        return _decode_var(data, slot, word, t)
    if root == "ROW":
        nested = _read(data, word >> 32, word & 0xFFFFFFFF)
        values = decode_binary_row(nested, [f.type for f in t.fields])
        return {f.name: v for f, v in zip(t.fields, values)}
    raise UnsupportedError(f"BinaryRow decoding of {t} is not supported")


def _decode_fixed(slot: bytes, t: DataType) -> object:
    """BOOLEAN, the integer types, FLOAT, DOUBLE, DATE and TIME from their 8-byte slot."""
    root = t.root
    if root == "BOOLEAN":
        return slot[0] != 0
    if root in _INT_WIDTH:
        return int.from_bytes(slot[:_INT_WIDTH[root]], "little", signed=True)
    if root == "FLOAT":
        return float(struct.unpack_from("<f", slot)[0])
    if root == "DOUBLE":
        return float(struct.unpack_from("<d", slot)[0])
    if root == "DATE":
        return _EPOCH_DAY + timedelta(days=int.from_bytes(slot[:4], "little", signed=True))
    millis = int.from_bytes(slot[:4], "little", signed=True)  # TIME
    if not 0 <= millis < 86_400_000:
        raise DataError(f"TIME value of {millis} ms is outside one day")
    secs, ms = divmod(millis, 1000)
    return time(secs // 3600, secs // 60 % 60, secs % 60, ms * 1000)


def _decode_timestamp(data: bytes, slot: bytes, word: int, t: DataType) -> datetime:
    if is_compact_timestamp(_precision(t, 6)):
        millis, nanos = int.from_bytes(slot, "little", signed=True), 0
    else:
        millis = int.from_bytes(_read(data, word >> 32, 8), "little", signed=True)
        nanos = word & 0xFFFFFFFF
    ts = _EPOCH + timedelta(microseconds=millis * 1000 + nanos // 1000)
    return ts.replace(tzinfo=UTC) if t.root == "TIMESTAMP_LTZ" else ts


def _decode_var(data: bytes, slot: bytes, word: int, t: DataType) -> str | bytes:
    """A STRING/BINARY field: inline in the slot (mark bit set) or in the variable part."""
    if word & _INLINE_MARK:
        length = (word >> 56) & 0x7F
        if length > MAX_INLINE:
            raise DataError(f"inline {t} field of a BinaryRow claims {length} bytes")
        raw = slot[:length]
    else:
        raw = _read(data, word >> 32, word & 0xFFFFFFFF)
    if t.is_string:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise DataError(f"invalid UTF-8 in a {t} field of a BinaryRow") from e
    return raw


def decode_binary_row(data: bytes, types: Sequence[DataType], arity: int | None = None) -> list[Any]:
    """Values of a BinaryRow without arity prefix. ``arity`` (default ``len(types)``) is the stored field count.

    Returns one value per type; types past the stored ``arity`` give None.
    """
    stored = len(types) if arity is None else arity
    if stored < 0:
        raise DataError(f"negative BinaryRow arity {stored}")
    width = bitset_width(stored)
    out: list[Any] = []
    for pos, t in enumerate(types):
        if pos >= stored:
            out.append(None)
            continue
        bit = pos + HEADER_BITS
        if _read(data, bit >> 3, 1)[0] & (1 << (bit & 7)):
            out.append(None)
        else:
            try:
                out.append(_decode_field(data, width + 8 * pos, t))
            except (OverflowError, ValueError) as e:
                if isinstance(e, DataError):
                    raise
                raise DataError(f"field {pos} ({t}) of a BinaryRow cannot be decoded: {e}") from e
    return out


def decode_row(data: bytes, types: Sequence[DataType]) -> list[Any]:
    """Inverse of :func:`encode_row`: values for ``types`` from ``arity prefix + BinaryRow`` bytes.

    A row stored with fewer fields than ``types`` (e.g. the 12-byte empty row, or stats written for fewer columns)
    yields its fields followed by None for the rest; extra stored fields are ignored. Empty ``data`` counts as the
    empty row.
    """
    if not data:
        return [None] * len(types)
    arity = struct.unpack(">i", _read(data, 0, 4))[0]
    return decode_binary_row(data[4:], types, arity)
