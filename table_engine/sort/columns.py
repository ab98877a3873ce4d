"""Columns as the fixed-width values Paimon's sort keys are built from, vectorized over Arrow arrays.

Z-order (:mod:`table_engine.sort.zorder`) turns each column into big-endian bytes whose unsigned order follows the
column's order (Paimon's ``ZIndexer`` / ``ZOrderByteUtils``); Hilbert (:mod:`table_engine.sort.hilbert`) turns each
into a signed 64-bit integer (Paimon's ``HilbertIndexer``). Both reproduce Paimon's conversions, quirks included
(docs/layout.md lists them), so that a table sorted here is laid out as Paimon Java would lay it out.

Every function takes one Arrow array (chunked arrays are combined) and returns a numpy array with one row per value;
nothing loops over rows.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import UnsupportedError

U8 = npt.NDArray[np.uint8]
I64 = npt.NDArray[np.int64]

SIGN = np.uint64(1 << 63)
_NANOS_PER_MS = {"s": 0, "ms": 1, "us": 1000, "ns": 1_000_000}
"""How many units of a time or timestamp unit make a millisecond (0: seconds, multiplied instead)."""


def _contiguous(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        return arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


def is_var_length(t: pa.DataType) -> bool:
    """Paimon's ``isVarType``: CHAR, VARCHAR, BINARY, VARBINARY (a column that gives ``zorder.var-length-contribution``
    bytes to a z-order key rather than 8)."""
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
                or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t))


def unsupported(column: str, t: pa.DataType, strategy: str) -> UnsupportedError:
    """The error of a column whose type ``strategy`` cannot order."""
    return UnsupportedError(f"column {column!r} of type {t} cannot be ordered by {strategy} (Paimon orders numbers, "
                            "decimals, strings, binaries, booleans, dates, times and timestamps)")


def as_int64(arr: pa.Array, column: str, strategy: str) -> tuple[I64, npt.NDArray[np.bool_]]:
    """The integer a fixed-width column stands for (dates in days, times in milliseconds of the day, timestamps in
    epoch milliseconds, rounded down as Paimon's ``Timestamp.getMillisecond``) and its validity; nulls read 0."""
    t = arr.type
    valid = _valid(arr)
    if pa.types.is_integer(t):
        raw, per = arr.cast(pa.int64(), safe=False), 1
    elif pa.types.is_date(t):
        raw, per = arr.cast(pa.date32()).cast(pa.int32()).cast(pa.int64()), 1
    elif pa.types.is_time(t):
        raw, per = arr.cast(pa.int64() if t.bit_width == 64 else pa.int32()).cast(pa.int64()), _NANOS_PER_MS[t.unit]
    elif pa.types.is_timestamp(t):
        raw, per = arr.cast(pa.timestamp(t.unit)).cast(pa.int64()), _NANOS_PER_MS[t.unit]
    else:
        raise unsupported(column, t, strategy)
    values = raw.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    if per == 0:  # seconds
        values = values * 1000
    elif per > 1:
        values = np.floor_divide(values, per)
    return values, valid


def _valid(arr: pa.Array) -> npt.NDArray[np.bool_]:
    if arr.null_count == 0:
        return np.ones(len(arr), dtype=np.bool_)
    return np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=np.bool_)


def as_double_bits(arr: pa.Array) -> tuple[I64, npt.NDArray[np.bool_]]:
    """Java's ``Double.doubleToLongBits`` of each value (a float widened to double first; every NaN the canonical
    ``0x7ff8000000000000``), and the validity."""
    valid = _valid(arr)
    d = arr.cast(pa.float64()).fill_null(0.0).to_numpy(zero_copy_only=False).astype(np.float64, copy=True)
    nan = np.isnan(d)
    bits = d.view(np.int64).copy()
    bits[nan] = 0x7FF8000000000000
    return bits, valid


def var_bytes(arr: pa.Array, width: int) -> tuple[U8, npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """The first ``width`` bytes of each string (UTF-8) or binary value, right-padded with zeros, as an ``(n, width)``
    matrix; each value's byte length; the validity."""
    t = arr.type
    valid = _valid(arr)
    if pa.types.is_fixed_size_binary(t):
        arr = arr.cast(pa.binary())
    elif pa.types.is_string(t):
        arr = arr.cast(pa.binary())
    elif pa.types.is_large_string(t):
        arr = arr.cast(pa.large_binary())
    large = pa.types.is_large_binary(arr.type)
    offsets: npt.NDArray[np.int64] = np.frombuffer(arr.buffers()[1], dtype=np.int64 if large else np.int32)[
        arr.offset:arr.offset + len(arr) + 1].astype(np.int64)
    data_buf = arr.buffers()[2]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, dtype=np.uint8)
    starts = offsets[:-1]
    lengths = offsets[1:] - offsets[:-1]
    lengths[~valid] = 0
    cols = np.arange(width, dtype=np.int64)
    take = cols[None, :] < lengths[:, None]
    idx = np.where(take, starts[:, None] + cols[None, :], 0)
    out = np.zeros((len(arr), width), dtype=np.uint8)
    if data.size:
        out[take] = data[idx[take]]
    return out, lengths, valid


def decimal_unscaled_bytes(arr: pa.Array) -> tuple[U8, npt.NDArray[np.int64]]:
    """Each decimal's unscaled value as Java's ``BigInteger.toByteArray`` writes it (minimal two's complement,
    big-endian), left-aligned in an ``(n, 16)`` matrix padded with zeros, and each one's byte length; nulls are
    length 0."""
    t = arr.type
    if not pa.types.is_decimal128(t):
        arr = arr.cast(pa.decimal128(min(t.precision, 38), t.scale))
    valid = _valid(arr)
    raw = np.frombuffer(arr.buffers()[1], dtype=np.uint8)[arr.offset * 16:(arr.offset + len(arr)) * 16]
    be = raw.reshape(len(arr), 16)[:, ::-1]  # little-endian 128-bit two's complement -> big-endian
    negative = be[:, 0] >= 0x80
    fill = np.where(negative, 0xFF, 0x00).astype(np.uint8)
    # a leading byte is redundant when it equals the sign fill and the next byte's top bit agrees with the sign
    redundant = (be[:, :-1] == fill[:, None]) & ((be[:, 1:] >= 0x80) == negative[:, None])
    lead = np.cumprod(redundant, axis=1).sum(axis=1).astype(np.int64)  # redundant bytes in front, at most 15
    length = 16 - lead
    cols = np.arange(16, dtype=np.int64)
    src = np.minimum(lead[:, None] + cols[None, :], 15)
    out = np.where(cols[None, :] < length[:, None], np.take_along_axis(be, src, axis=1), 0).astype(np.uint8)
    length[~valid] = 0
    out[~valid] = 0
    return out, length


def decimal_long_value(arr: pa.Array) -> I64:
    """Java's ``BigDecimal.longValue()`` of each decimal (the fraction dropped toward zero, the low 64 bits of a
    larger value); nulls read 0."""
    t = arr.type
    if not pa.types.is_decimal128(t):
        arr = arr.cast(pa.decimal128(min(t.precision, 38), t.scale))
        t = arr.type
    raw = np.frombuffer(arr.buffers()[1], dtype=np.uint64)[arr.offset * 2:(arr.offset + len(arr)) * 2]
    pairs = raw.reshape(len(arr), 2)
    if t.scale == 0:
        out = pairs[:, 0].view(np.int64).copy()
    else:
        truncated = pc.cast(pc.round(arr, ndigits=0, round_mode="towards_zero"), pa.decimal128(38, 0), safe=False)
        tr = np.frombuffer(truncated.buffers()[1], dtype=np.uint64)[truncated.offset * 2:
                                                                    (truncated.offset + len(truncated)) * 2]
        out = tr.reshape(len(arr), 2)[:, 0].view(np.int64).copy()
    out[~_valid(arr)] = 0
    return out


def contiguous(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """``arr`` as one array (a chunked array's chunks combined)."""
    return _contiguous(arr)
