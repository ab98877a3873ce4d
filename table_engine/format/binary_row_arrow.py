"""Many serialized BinaryRows (arity prefix + BinaryRow, as manifests store partitions) decoded at once into typed
Arrow columns, vectorized with numpy over the rows: the fixed-length slots, the null bits and the (inline or
variable-part) strings are gathered for all rows in one go.

Fields that have no vectorized reading (DECIMAL(p>18), TIMESTAMP(p>3), TIME, nested types) and rows that are not
laid out for exactly these types fall back to :func:`~table_engine.format.binary_row.decode_row` per row. The
values equal what ``decode_row`` gives (see ``tests/table_engine/format/test_binary_row_arrow.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.format.binary_row import (
    HEADER_BITS,
    bitset_width,
    decode_row,
    is_compact_decimal,
    is_compact_timestamp,
)
from table_engine.types import DataType, to_arrow_type

__all__ = ["decode_rows"]

_NUMPY = {"TINYINT": "<i1", "SMALLINT": "<i2", "INT": "<i4", "BIGINT": "<i8", "FLOAT": "<f4", "DOUBLE": "<f8",
          "DATE": "<i4"}
_U8 = npt.NDArray[np.uint8]
_I64 = npt.NDArray[np.int64]


def _vectorized(t: DataType) -> bool:
    if t.root in _NUMPY or t.root == "BOOLEAN" or t.is_string or t.is_binary:
        return True
    if t.root == "DECIMAL":
        return is_compact_decimal(10 if t.precision is None else t.precision)
    if t.root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        return is_compact_timestamp(6 if t.precision is None else t.precision)
    return False


def _per_row(rows: Sequence[bytes], types: Sequence[DataType]) -> list[pa.Array]:
    decoded = [decode_row(r, types) for r in rows]
    return [pa.array([d[i] for d in decoded], type=to_arrow_type(t)) for i, t in enumerate(types)]


def _gather(data: _U8, starts: _I64, width: int) -> _U8:
    """``width`` bytes from each of ``starts``: an (n, width) array."""
    out: _U8 = data[starts[:, None] + np.arange(width)]
    return out


def _strings(data: _U8, slot_at: _I64, base: _I64, ends: _I64, slot: _U8, nulls: npt.NDArray[np.bool_],
             t: DataType) -> pa.Array | None:
    word = np.ascontiguousarray(slot).view("<u8").ravel()
    inline = (slot[:, 7] & 0x80) != 0
    start = np.where(inline | nulls, slot_at, base + (word >> np.uint64(32)).astype(np.int64))
    length = np.where(inline, (slot[:, 7] & 0x7F).astype(np.int64),
                      (word & np.uint64(0xFFFFFFFF)).astype(np.int64))
    length[nulls] = 0
    if np.any(start + length > ends) or np.any(inline & (length > 7)):
        return None
    offsets = np.concatenate([np.zeros(1, np.int64), np.cumsum(length)])
    if offsets[-1] >= 2**31:
        return None
    index = np.repeat(start - offsets[:-1], length) + np.arange(offsets[-1])
    chars = data[index]
    arrow_type = pa.string() if t.is_string else pa.binary()
    out = pa.Array.from_buffers(arrow_type, len(start), [None, pa.py_buffer(offsets.astype(np.int32)),
                                                         pa.py_buffer(chars.tobytes())])
    try:
        out.validate(full=True)  # UTF-8
    except pa.ArrowInvalid:
        return None
    return out


def _column(data: _U8, slot_at: _I64, base: _I64, ends: _I64, nulls: npt.NDArray[np.bool_],
            t: DataType) -> pa.Array | None:
    slot = _gather(data, slot_at, 8)
    root = t.root
    if root == "BOOLEAN":
        return pa.array(slot[:, 0] != 0, pa.bool_())
    if root in _NUMPY:
        size = np.dtype(_NUMPY[root]).itemsize
        values = np.ascontiguousarray(slot[:, :size]).view(_NUMPY[root]).ravel()
        return pa.array(values, type=to_arrow_type(t))
    word = np.ascontiguousarray(slot).view("<i8").ravel()
    if root == "DECIMAL":
        pairs = np.stack([word, np.where(word < 0, -1, 0)], axis=1)  # int128 little-endian: low, sign-extended high
        return pa.Array.from_buffers(to_arrow_type(t), len(word), [None, pa.py_buffer(pairs.tobytes())])
    if root in ("TIMESTAMP", "TIMESTAMP_LTZ"):
        millis = pa.array(word, pa.timestamp("ms", tz="UTC" if root == "TIMESTAMP_LTZ" else None))
        return millis.cast(to_arrow_type(t), safe=False)
    return _strings(data, slot_at, base, ends, slot, nulls, t)


def decode_rows(rows: Sequence[bytes], types: Sequence[DataType]) -> list[pa.Array]:
    """One typed Arrow array per type, with the values of the serialized rows (as ``decode_row`` decodes them)."""
    n = len(rows)
    arity = len(types)
    if n == 0 or arity == 0:
        return [pa.array([], type=to_arrow_type(t)) for t in types]
    if not all(_vectorized(t) for t in types):
        return _per_row(rows, types)
    binary = pa.array(rows, pa.binary())
    offsets = np.frombuffer(binary.buffers()[1], np.int32, n + 1, binary.offset * 4).astype(np.int64)
    buffer = binary.buffers()[2]
    data: _U8 = np.frombuffer(buffer, np.uint8) if buffer is not None else np.zeros(0, np.uint8)
    starts, ends = offsets[:-1], offsets[1:]
    width = bitset_width(arity)
    if np.any(ends - starts < 4 + width + 8 * arity):
        return _per_row(rows, types)
    stored = np.ascontiguousarray(_gather(data, starts, 4)).view(">i4").ravel()
    if np.any(stored != arity):
        return _per_row(rows, types)
    base = starts + 4
    columns: list[pa.Array] = []
    for pos, t in enumerate(types):
        bit = pos + HEADER_BITS
        nulls = (data[base + (bit >> 3)] & (1 << (bit & 7))) != 0
        column = _column(data, base + width + 8 * pos, base, ends, nulls, t)
        if column is None:
            return _per_row(rows, types)
        if nulls.any():
            column = pc.if_else(pa.array(nulls), pa.scalar(None, column.type), column)
        columns.append(column)
    return columns
