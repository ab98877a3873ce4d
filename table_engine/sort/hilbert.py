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


def hilbert_index(columns: Sequence[tuple[str, pa.Array]]) -> U8:
    """The Hilbert key of each row, an ``(n, 63)`` matrix: ``columns`` (name, values) are the dimensions in order."""
    if len(columns) < 2:
        raise ValueError("Hilbert sort needs at least two columns.")
    x = [column_longs(arr, name).view(np.uint64).copy() for name, arr in columns]
    _transpose(x)
    n, dims = len(x[0]), len(x)
    shifts = np.arange(BITS - 1, -1, -1, dtype=np.uint64)
    bits = np.stack([((xi[:, None] >> shifts[None, :]) & np.uint64(1)).astype(np.uint8) for xi in x], axis=2)
    bits = bits.reshape(n, BITS * dims)  # bit 62 of every dimension, then bit 61, ...
    total = BITS * dims
    fixed = max(-(-(total + 1) // 8), KEY_BYTES)  # room for Java's sign byte
    padded = np.zeros((n, fixed * 8), dtype=np.uint8)
    padded[:, fixed * 8 - total:] = bits
    value = np.packbits(padded, axis=1)  # big-endian, fixed length
    # Java's toByteArray: the minimal two's complement of a non-negative number = bitlength // 8 + 1 bytes
    nonzero = value != 0
    first = np.where(nonzero.any(axis=1), nonzero.argmax(axis=1), fixed)
    top = value[np.arange(n), np.minimum(first, fixed - 1)]
    top_bits = np.where(first < fixed, np.floor(np.log2(np.maximum(top, 1))).astype(np.int64) + 1, 0)
    bitlen = (fixed - 1 - first) * 8 + top_bits
    java_len = bitlen // 8 + 1
    start = np.where(java_len > KEY_BYTES, fixed - java_len, fixed - KEY_BYTES)
    idx = start[:, None] + np.arange(KEY_BYTES)[None, :]
    return np.take_along_axis(value, idx, axis=1)


def _transpose(x: list[np.ndarray]) -> None:
    """Skilling's ``AxestoTranspose`` in place (``HilbertCurve.transposedIndex``), every row at once."""
    n = len(x)
    q = 1 << (BITS - 1)
    while q > 1:
        p = np.uint64(q - 1)
        qq = np.uint64(q)
        for i in range(n):
            has = (x[i] & qq) != 0
            t = (x[0] ^ x[i]) & p
            if i == 0:
                x[0] = np.where(has, x[0] ^ p, x[0])
            else:
                x0 = np.where(has, x[0] ^ p, x[0] ^ t)
                x[i] = np.where(has, x[i], x[i] ^ t)
                x[0] = x0
        q >>= 1
    for i in range(1, n):
        x[i] = x[i] ^ x[i - 1]
    t = np.zeros_like(x[0])
    q = 1 << (BITS - 1)
    while q > 1:
        t = np.where((x[n - 1] & np.uint64(q)) != 0, t ^ np.uint64(q - 1), t)
        q >>= 1
    for i in range(n):
        x[i] = x[i] ^ t
