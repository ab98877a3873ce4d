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

from table_engine.sort.bits import interleave
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
    t = arr.type
    if is_var_length(t):
        out, _, _ = var_bytes(arr, var_length)
        return out
    if pa.types.is_boolean(t):
        out = np.zeros((len(arr), FIXED_WIDTH), dtype=np.uint8)
        out[:, 0] = np.where(arr.fill_null(False).to_numpy(zero_copy_only=False), 0x81, 0)
        return out
    if pa.types.is_decimal(t):
        unscaled, _ = decimal_unscaled_bytes(arr)
        return np.ascontiguousarray(unscaled[:, :FIXED_WIDTH])
    if pa.types.is_floating(t):
        bits, valid = as_double_bits(arr)
        bits = bits ^ ((bits >> 31) | np.int64(-(1 << 63)))
        return _big_endian(bits.view(np.uint64), valid)
    values, valid = as_int64(arr, column, "zorder")
    return _big_endian(values.view(np.uint64) ^ SIGN, valid)


def _big_endian(values: np.ndarray, valid: np.ndarray) -> U8:
    out = values.astype(">u8").view(np.uint8).reshape(len(values), FIXED_WIDTH).copy()
    out[~valid] = 0
    return out


def z_index(columns: Sequence[tuple[str, pa.Array]], var_length: int) -> U8:
    """The z-order key of each row, an ``(n, width)`` matrix: ``columns`` (name, values) in key order."""
    if var_length <= 0:
        raise ValueError(f"zorder.var-length-contribution must be positive, not {var_length}")
    if not columns:
        raise ValueError("a z-order needs at least one column")
    return interleave([column_bytes(arr, name, var_length) for name, arr in columns])
