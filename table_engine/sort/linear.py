"""The ``order`` strategy's row order as ``uint64`` words, for columns whose values are numbers: the order Arrow's
multi-column sort gives (ascending, nulls first, NaN after every number, ``-0.0`` equal to ``0.0``, stable), found
by one word sort (:func:`~table_engine.sort.keys.argsort_words`) instead of Arrow's comparisons column by column.

Each column gives one word of its value's order-preserving bits (a signed integer with its sign bit flipped, a
float's bits flipped as in IEEE total order), preceded, when its field is nullable, by a word that is 0 for a null
and 1 for a value (decided by the field, not the values: every batch of a table gets words of one width).
Strings, binaries and decimals have no such word: an ``order`` over them is sorted by Arrow.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from table_engine.sort.columns import SIGN

__all__ = ["has_words", "order_words"]


def _physical(t: pa.DataType) -> pa.DataType | None:
    """The integer type a column's values are stored as, when their order is that integer's (None: not one)."""
    if pa.types.is_integer(t):
        return t
    if pa.types.is_date32(t) or (pa.types.is_time(t) and t.bit_width == 32):
        return pa.int32()
    if pa.types.is_date64(t) or pa.types.is_timestamp(t) or pa.types.is_time(t) or pa.types.is_duration(t):
        return pa.int64()
    return None


def has_words(types: Sequence[pa.DataType]) -> bool:
    """Whether every column of an ``order`` has words (numbers, booleans, dates, times, timestamps)."""
    return all(_physical(t) is not None or pa.types.is_floating(t) or pa.types.is_boolean(t) for t in types)


def order_words(columns: Sequence[tuple[pa.Field, pa.Array]]) -> np.ndarray:
    """The words of ``columns`` (field, values; :func:`has_words` must hold), an ``(n, words)`` ``uint64``
    matrix."""
    out: list[np.ndarray] = []
    for f, arr in columns:
        value = _value(arr)
        if f.nullable:
            valid = np.ones(len(arr), dtype=np.uint64) if not arr.null_count else \
                np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=np.uint64)
            out.append(valid)
            value = np.where(valid.astype(np.bool_), value, np.uint64(0))
        out.append(value)
    return np.stack(out, axis=1)


def _value(arr: pa.Array) -> np.ndarray:
    t = arr.type
    if pa.types.is_boolean(t):
        return np.asarray(arr.fill_null(False).to_numpy(zero_copy_only=False), dtype=np.uint64)
    if pa.types.is_floating(t):
        d = arr.cast(pa.float64()).fill_null(0.0).to_numpy(zero_copy_only=False).astype(np.float64, copy=True)
        d[np.isnan(d)] = np.nan  # one NaN: the canonical quiet one, positive
        d[d == 0] = 0.0  # -0.0 is 0.0
        bits = d.view(np.uint64)
        flipped: np.ndarray = np.where(bits >> np.uint64(63), ~bits, bits | SIGN)
        return flipped
    physical = _physical(t)
    assert physical is not None, t
    ints = arr.view(physical).cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    words: np.ndarray = ints.astype(np.int64, copy=False).view(np.uint64) ^ SIGN
    return words
