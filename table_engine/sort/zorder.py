"""Paimon's z-order key (``ZIndexer`` with ``ZOrderByteUtils``): each column as big-endian bytes, 8 for a
fixed-width type and ``zorder.var-length-contribution`` for a string or binary, their bits interleaved round-robin,
most significant first, in the order the columns are given; compared as unsigned bytes.

Paimon's conversions are kept as they are, so that rows land in the order Paimon Java gives them: a null is all zero
bytes (as ``false`` and as the smallest numbers), a float's bits are flipped with Iceberg's ``(l >> 31) | MIN``, a
decimal contributes the first 8 bytes of its unscaled two's complement (not order-preserving beyond them), a string
its first bytes, right-padded.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from table_engine.sort.bits import MAX_WORD_COLUMNS, as_words, interleave, interleave_words
from table_engine.sort.columns import (
    SIGN,
    U8,
    as_double_bits,
    as_int64,
    decimal_unscaled_bytes,
    is_var_length,
    var_bytes,
)

FIXED_WIDTH = 8
"""Bytes of a fixed-width column in the key (Paimon's ``PRIMITIVE_BUFFER_SIZE``)."""


def column_bytes(arr: pa.Array, column: str, var_length: int) -> U8:
    """One column's bytes in the key, an ``(n, width)`` matrix."""
    if is_var_length(arr.type):
        out, _, _ = var_bytes(arr, var_length)
        return out
    return column_number(arr, column).astype(">u8").view(np.uint8).reshape(len(arr), FIXED_WIDTH)


def column_number(arr: pa.Array, column: str) -> np.ndarray:
    """A fixed-width column's 8 key bytes as the ``uint64`` they spell big-endian."""
    t = arr.type
    if pa.types.is_boolean(t):
        flag = arr.fill_null(False).to_numpy(zero_copy_only=False)
        return np.where(flag, np.uint64(0x81 << 56), np.uint64(0))
    if pa.types.is_decimal(t):
        unscaled, _ = decimal_unscaled_bytes(arr)
        return np.ascontiguousarray(unscaled[:, :FIXED_WIDTH]).view(">u8").reshape(len(arr)).astype(np.uint64)
    if pa.types.is_floating(t):
        bits, valid = as_double_bits(arr)
        values = (bits ^ ((bits >> 31) | np.int64(-(1 << 63)))).view(np.uint64)
    else:
        ints, valid = as_int64(arr, column, "zorder")
        values = ints.view(np.uint64) ^ SIGN
    return np.where(valid, values, np.uint64(0))


def z_words(columns: Sequence[tuple[str, pa.Array]], var_length: int) -> np.ndarray:
    """The z-order key of each row as an ``(n, words)`` matrix of ``uint64`` (the key's bytes read big-endian, the
    last word zero-padded): the same order as :func:`z_index`, straight from the columns' numbers when every column
    is fixed-width and there are at most four."""
    if len(columns) <= MAX_WORD_COLUMNS and not any(is_var_length(arr.type) for _, arr in columns):
        return interleave_words([column_number(arr, name) for name, arr in columns])
    return as_words(z_index(columns, var_length))


def z_index(columns: Sequence[tuple[str, pa.Array]], var_length: int) -> U8:
    """The z-order key of each row, an ``(n, width)`` matrix: ``columns`` (name, values) in key order."""
    if var_length <= 0:
        raise ValueError(f"zorder.var-length-contribution must be positive, not {var_length}")
    if not columns:
        raise ValueError("a z-order needs at least one column")
    return interleave([column_bytes(arr, name, var_length) for name, arr in columns])
