"""Paimon's Hilbert key (``HilbertIndexer`` over davidmoten's ``HilbertCurve`` with 63 bits per dimension): each
column as a signed 64-bit integer, the point's index on the Hilbert curve (Skilling's transform), written as Java's
``BigInteger.toByteArray`` and left-padded (or cut) to 63 bytes; compared as unsigned bytes. At least two columns.

Paimon's conversions are kept as they are: a null is ``Long.MAX_VALUE`` (as ``true``), a ``TINYINT`` reads unsigned,
a float its raw IEEE bits, a decimal its integer part, a string or binary its first 8 bytes as a big-endian number
(left-padded when shorter, so ``"b"`` sorts before ``"aa"``), and bit 63 of every value is ignored by the curve.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from table_engine.sort.bits import MAX_WORD_COLUMNS, as_words, interleave, interleave_words
from table_engine.sort.columns import (
    I64,
    U8,
    as_double_bits,
    as_int64,
    decimal_long_value,
    is_var_length,
    var_bytes,
)

BITS = 63
"""Bits per dimension (Paimon's ``BITS_NUM``)."""
KEY_BYTES = 63
"""Bytes of the key (``ConvertBinaryUtil.paddingToNByte(index.toByteArray(), 63)``)."""
_NULL = np.int64(np.iinfo(np.int64).max)


def column_longs(arr: pa.Array, column: str) -> I64:
    """One column's values as the curve's coordinates (``HilbertIndexer``'s per-type conversion)."""
    t = arr.type
    if is_var_length(t):
        head, lengths, valid = var_bytes(arr, 8)
        numbers = head.view(">u8").reshape(len(arr)).astype(np.uint64)
        short = np.minimum(lengths, 8)
        shift = ((8 - short) * 8).astype(np.uint64)
        numbers = np.where(short > 0, numbers >> np.minimum(shift, np.uint64(63)), np.uint64(0))
        numbers = np.where(shift >= 64, np.uint64(0), numbers)
        out = numbers.view(np.int64)
    elif pa.types.is_boolean(t):
        valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=np.bool_)
        out = np.where(arr.fill_null(False).to_numpy(zero_copy_only=False), _NULL, np.int64(0)).astype(np.int64)
    elif pa.types.is_decimal(t):
        valid = np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=np.bool_)
        out = decimal_long_value(arr)
    elif pa.types.is_floating(t):
        out, valid = as_double_bits(arr)
    else:
        out, valid = as_int64(arr, column, "hilbert")
        if pa.types.is_int8(t):
            out = out & 0xFF
    return np.where(valid, out, _NULL).astype(np.int64)


CHUNK = 1 << 16
"""Rows transposed at a time: the working set of one chunk's coordinates stays in the CPU's caches."""
_LOW63 = np.uint64((1 << 63) - 1)


def _transposed(columns: Sequence[tuple[str, pa.Array]]) -> np.ndarray:
    """The dimensions' transposed coordinates, ``(dims, n)`` ``uint64`` with bit 63 cleared: the index's bits are
    bit 62 of every dimension, then bit 61, ...: the interleave of these, whose first ``dims`` bits are zeros."""
    if len(columns) < 2:
        raise ValueError("Hilbert sort needs at least two columns.")
    x = np.stack([column_longs(arr, name).view(np.uint64) for name, arr in columns])  # (dims, n)
    for start in range(0, x.shape[1], CHUNK):
        _transpose(x[:, start:start + CHUNK])
    np.bitwise_and(x, _LOW63, out=x)
    return x


def hilbert_value(columns: Sequence[tuple[str, pa.Array]]) -> U8:
    """The index of each row on the curve as a big-endian ``(n, 8 * dims)`` matrix (room for Java's sign byte):
    ``columns`` (name, values) are the dimensions in order."""
    x = _transposed(columns)
    return interleave([row.astype(">u8").view(np.uint8).reshape(len(row), 8) for row in x])


def hilbert_words(columns: Sequence[tuple[str, pa.Array]]) -> np.ndarray:
    """The rows' order on the curve as an ``(n, words)`` matrix of ``uint64`` compared word by word: the index's
    words below 8 dimensions (:func:`hilbert_order`), straight from the coordinates up to four; the key's bytes
    read big-endian, zero-padded, from 8 on."""
    if len(columns) <= MAX_WORD_COLUMNS:
        return interleave_words(list(_transposed(columns)))
    return as_words(hilbert_order(columns))


def hilbert_order(columns: Sequence[tuple[str, pa.Array]]) -> U8:
    """A byte matrix whose unsigned order is that of :func:`hilbert_index`, narrower where it can be: below 8
    dimensions the 63-byte key is the curve's index left-padded with zeros, so the index itself orders the rows the
    same (8 bytes a dimension instead of 63 a row); from 8 on, Java's cut of its bytes to 63 matters, and the key
    is the index."""
    if len(columns) * 8 < KEY_BYTES:
        return hilbert_value(columns)
    return hilbert_index(columns)


def hilbert_index(columns: Sequence[tuple[str, pa.Array]]) -> U8:
    """The Hilbert key of each row, an ``(n, 63)`` matrix: ``columns`` (name, values) are the dimensions in order."""
    value = hilbert_value(columns)
    n, fixed = value.shape
    if fixed < KEY_BYTES:
        value = np.concatenate([np.zeros((n, KEY_BYTES - fixed), dtype=np.uint8), value], axis=1)
        fixed = KEY_BYTES
    # Java's toByteArray: the minimal two's complement of a non-negative number = bitlength // 8 + 1 bytes
    nonzero = value != 0
    first = np.where(nonzero.any(axis=1), nonzero.argmax(axis=1), fixed)
    top = value[np.arange(n), np.minimum(first, fixed - 1)]
    top_bits = np.where(first < fixed, np.floor(np.log2(np.maximum(top, 1))).astype(np.int64) + 1, 0)
    bitlen = (fixed - 1 - first) * 8 + top_bits
    java_len = bitlen // 8 + 1
    start = np.where(java_len > KEY_BYTES, fixed - java_len, fixed - KEY_BYTES)
    out = np.empty((n, KEY_BYTES), dtype=np.uint8)
    for s in np.unique(start):  # a handful of distinct starts: slices, not a gather of n x 63 indexes
        rows = start == s
        out[rows] = value[rows, s:s + KEY_BYTES]
    return out


def _transpose(x: np.ndarray) -> None:
    """Skilling's ``AxestoTranspose`` in place (``HilbertCurve.transposedIndex``) on ``(dims, rows)`` coordinates,
    every row at once, without branches: a row whose bit is set takes ``x0 ^= p``, one whose bit is clear swaps the
    low bits of ``x0`` and ``xi`` where they differ."""
    dims = x.shape[0]
    one = np.uint64(1)
    mask = np.empty(x.shape[1], dtype=np.uint64)
    t = np.empty_like(mask)
    for bit in range(BITS - 1, 0, -1):
        p = np.uint64((1 << bit) - 1)
        for i in range(dims):
            np.right_shift(x[i], np.uint64(bit), out=mask)
            np.bitwise_and(mask, one, out=mask)
            np.negative(mask, out=mask)  # all ones where the bit is set
            if i == 0:
                np.bitwise_and(mask, p, out=t)
                np.bitwise_xor(x[0], t, out=x[0])
                continue
            np.bitwise_xor(x[0], x[i], out=t)
            np.bitwise_and(t, p, out=t)
            np.bitwise_and(t, ~mask, out=t)  # the swap only where the bit is clear
            np.bitwise_xor(x[i], t, out=x[i])
            np.bitwise_or(t, mask & p, out=t)  # ... and x0 ^= p where it is set
            np.bitwise_xor(x[0], t, out=x[0])
    for i in range(1, dims):
        np.bitwise_xor(x[i], x[i - 1], out=x[i])
    t.fill(0)
    for bit in range(BITS - 1, 0, -1):
        np.right_shift(x[dims - 1], np.uint64(bit), out=mask)
        np.bitwise_and(mask, one, out=mask)
        np.negative(mask, out=mask)
        np.bitwise_xor(t, mask & np.uint64((1 << bit) - 1), out=t)
    for i in range(dims):
        np.bitwise_xor(x[i], t, out=x[i])
