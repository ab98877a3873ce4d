"""Bit interleaving of byte columns, vectorized: the round-robin, most-significant-first interleave both curves
use (Paimon's ``ZOrderByteUtils.interleaveBits``; the Hilbert index's bit order), byte by byte through lookup tables
instead of bit by bit."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from table_engine.sort.columns import U8

MAX_LUT_COLUMNS = 8
"""The most columns interleaved through the lookup tables (their bits of one byte position fill a 64-bit word);
more go bit by bit."""


@lru_cache(maxsize=MAX_LUT_COLUMNS)
def _spread(d: int) -> np.ndarray:
    """For each byte value, its 8 bits placed ``d`` apart, most significant first, in the top of a ``d * 8``-bit
    word (bit ``i`` from the left of the byte at position ``i * d`` from the left of the word)."""
    width = d * 8
    out = np.zeros(256, dtype=np.uint64)
    for v in range(256):
        word = 0
        for i in range(8):
            if v >> (7 - i) & 1:
                word |= 1 << (width - 1 - i * d)
        out[v] = word
    return out


def interleave(parts: Sequence[U8]) -> U8:
    """The bits of ``parts`` (one ``(n, width)`` byte matrix per column) interleaved: byte position by byte
    position, bit by bit from the most significant, the columns in order, a column left out once its bytes are used
    up. An ``(n, sum of widths)`` matrix."""
    widths = [p.shape[1] for p in parts]
    n = parts[0].shape[0]
    if len(parts) > MAX_LUT_COLUMNS:
        return _interleave_bits(parts, widths)
    out = np.empty((n, sum(widths)), dtype=np.uint8)
    pos = 0
    for byte in range(max(widths)):
        cols = [p[:, byte] for p, w in zip(parts, widths, strict=True) if w > byte]
        d = len(cols)
        lut = _spread(d)
        word = np.zeros(n, dtype=np.uint64)
        for c, col in enumerate(cols):
            word |= lut[col] >> np.uint64(c)
        out[:, pos:pos + d] = word.astype(">u8").view(np.uint8).reshape(n, 8)[:, 8 - d:]
        pos += d
    return out


def _interleave_bits(parts: Sequence[U8], widths: Sequence[int]) -> U8:
    bits = np.unpackbits(np.concatenate(list(parts), axis=1), axis=1)
    return np.packbits(bits[:, _order(tuple(widths))], axis=1)


@lru_cache(maxsize=64)
def _order(widths: tuple[int, ...]) -> np.ndarray:
    bases = np.concatenate(([0], np.cumsum(widths)[:-1])) * 8
    order = [int(bases[c]) + 8 * byte + bit
             for byte in range(max(widths)) for bit in range(8) for c, w in enumerate(widths) if w > byte]
    return np.asarray(order, dtype=np.int64)
