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
CHUNK_ROWS = 1 << 16
"""Rows :func:`interleave_words` works on at a time."""
MAX_WORD_COLUMNS = 4
"""The most 64-bit columns :func:`interleave_words` takes (their bits of 16 positions fill a 64-bit word)."""


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


@lru_cache(maxsize=MAX_WORD_COLUMNS)
def _spread16(d: int) -> np.ndarray:
    """For each 16-bit value, its bits placed ``d`` apart, most significant first, in the low ``16 * d`` bits of a
    word (as :func:`_spread` for a byte)."""
    values = np.arange(1 << 16, dtype=np.uint64)
    out = np.zeros(1 << 16, dtype=np.uint64)
    for i in range(16):
        out |= ((values >> np.uint64(15 - i)) & np.uint64(1)) << np.uint64(16 * d - 1 - i * d)
    return out


def interleave_words(values: Sequence[np.ndarray]) -> np.ndarray:
    """:func:`interleave` of 64-bit columns (at most :data:`MAX_WORD_COLUMNS`), given as ``uint64`` numbers whose
    big-endian bytes are the columns' bytes, straight to the key's words: an ``(n, columns)`` matrix of ``uint64``,
    most significant first. 16 bits of every column at a time through a 65,536-entry table: half the lookups of the
    byte-wise interleave, and no byte matrix."""
    d, n = len(values), len(values[0])
    if not 0 < d <= MAX_WORD_COLUMNS:
        raise ValueError(f"interleave_words takes 1 to {MAX_WORD_COLUMNS} columns, not {d}")
    lut, bits = _spread16(d), 16 * d
    words = np.zeros((n, d), dtype=np.uint64)
    rows = min(n, CHUNK_ROWS)
    chunk, part, looked = (np.empty(rows, dtype=np.uint64) for _ in range(3))
    for start in range(0, n, CHUNK_ROWS):  # a chunk's temporaries stay in the caches (and the heap: no page faults)
        stop = min(n, start + CHUNK_ROWS)
        m = stop - start
        out = words[start:stop]
        for k in range(4):  # bits 63-48 of every column, then 47-32, ...
            chunk[:m] = 0
            for c, v in enumerate(values):
                np.right_shift(v[start:stop], np.uint64(48 - 16 * k), out=part[:m])
                np.bitwise_and(part[:m], np.uint64(0xFFFF), out=part[:m])
                np.take(lut, part[:m], out=looked[:m])
                np.right_shift(looked[:m], np.uint64(c), out=looked[:m])
                np.bitwise_or(chunk[:m], looked[:m], out=chunk[:m])
            np.left_shift(chunk[:m], np.uint64(64 - bits), out=chunk[:m])  # the chunk's bits at the top of a word
            word, r = divmod(bits * k, 64)
            out[:, word] |= chunk[:m] >> np.uint64(r)
            if r + bits > 64:
                out[:, word + 1] |= chunk[:m] << np.uint64(64 - r)
    return words


def as_words(matrix: U8) -> np.ndarray:
    """An ``(n, width)`` byte matrix as an ``(n, words)`` matrix of native ``uint64``, most significant first (the
    bytes read big-endian, the last word zero-padded): rows compared word by word compare as their bytes do."""
    n, width = matrix.shape
    if width % 8:
        padded = np.zeros((n, -(-width // 8) * 8), dtype=np.uint8)
        padded[:, :width] = matrix
        matrix = padded
    return np.ascontiguousarray(matrix).view(">u8").astype(np.uint64)
