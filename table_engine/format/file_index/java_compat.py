"""Java behaviours that Paimon's file-index bytes depend on, reproduced bit for bit (vectorized with numpy).

* ``DataOutput.writeUTF`` / ``readUTF`` (modified UTF-8 with a 2-byte length);
* XXH64 (seed 0), which Paimon's bloom filter uses for strings and bytes (``LongHashFunction.xx()``);
* Thomas Wang's 64-bit integer hash (``FastHash.getLongHash``), with Java's signed shifts;
* ``hashCode()`` of the boxed keys Paimon puts in a ``java.util.HashMap`` (``Integer``, ``Long``, ``Float``,
  ``Double``, ``Boolean``, ``String`` and ``BinaryString``, whose hash is Murmur3 over its UTF-8 bytes, seed 42);
* the iteration order of a ``java.util.HashMap`` filled in a given order, which fixes the order of entries that
  Paimon serializes straight out of hash maps.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pyarrow as pa

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]

__all__ = [
    "binary_parts",
    "java_hashmap_order",
    "java_string_hash",
    "murmur_binary_string_hash",
    "read_utf",
    "thomas_wang_hash",
    "write_utf",
    "xxh64",
]


# ---- modified UTF-8 (DataOutput.writeUTF) -------------------------------------------------------------------------

def write_utf(text: str) -> bytes:
    """``DataOutputStream.writeUTF``: 2-byte big-endian length, then modified UTF-8 (NUL as C0 80, UTF-16 surrogates
    encoded one by one)."""
    out = bytearray()
    for unit in struct.unpack(f"<{len(text.encode('utf-16-le')) // 2}H", text.encode("utf-16-le", "surrogatepass")):
        if 0 < unit < 0x80:
            out.append(unit)
        elif unit < 0x800:
            out += bytes((0xC0 | (unit >> 6), 0x80 | (unit & 0x3F)))
        else:
            out += bytes((0xE0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3F), 0x80 | (unit & 0x3F)))
    if len(out) > 0xFFFF:
        raise ValueError(f"string of {len(out)} encoded bytes is too long for writeUTF")
    return struct.pack(">H", len(out)) + bytes(out)


def read_utf(data: bytes | memoryview, pos: int) -> tuple[str, int]:
    """``DataInputStream.readUTF`` at ``pos``: (string, position after it)."""
    (n,) = struct.unpack_from(">H", data, pos)
    raw = bytes(data[pos + 2:pos + 2 + n])
    if len(raw) != n:
        raise ValueError("truncated modified UTF-8 string")
    units: list[int] = []
    i = 0
    while i < n:
        b = raw[i]
        if b < 0x80:
            units.append(b)
            i += 1
        elif b >> 5 == 0b110:
            units.append(((b & 0x1F) << 6) | (raw[i + 1] & 0x3F))
            i += 2
        elif b >> 4 == 0b1110:
            units.append(((b & 0x0F) << 12) | ((raw[i + 1] & 0x3F) << 6) | (raw[i + 2] & 0x3F))
            i += 3
        else:
            raise ValueError(f"malformed modified UTF-8 byte 0x{b:02x}")
    text = struct.pack(f"<{len(units)}H", *units).decode("utf-16-le", "surrogatepass")
    return text.encode("utf-16", "surrogatepass").decode("utf-16"), pos + 2 + n


# ---- variable-length values as (offsets, bytes) --------------------------------------------------------------------

def binary_parts(arr: pa.Array) -> tuple[I64, I64, npt.NDArray[np.uint8]]:
    """(start, length, data) of each value of a string/binary array (nulls have whatever length Arrow gives them)."""
    at = arr.type
    if pa.types.is_string_view(at) or pa.types.is_binary_view(at):
        arr = arr.cast(pa.large_binary())
        at = arr.type
    large = pa.types.is_large_string(at) or pa.types.is_large_binary(at)
    bufs = arr.buffers()
    n = len(arr)
    otype = np.int64 if large else np.int32
    width = 8 if large else 4
    if bufs[1] is None:
        offsets = np.zeros(n + 1, np.int64)
    else:
        offsets = np.frombuffer(bufs[1], dtype=otype, count=n + 1, offset=arr.offset * width).astype(np.int64)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None and n else np.zeros(0, np.uint8)
    return offsets[:-1], offsets[1:] - offsets[:-1], data


def _gather_le(data: npt.NDArray[np.uint8], pos: I64, width: int) -> U64:
    """Little-endian unsigned words of ``width`` bytes starting at each position (reads past the end as zeros)."""
    padded = np.concatenate([data, np.zeros(8, np.uint8)])
    idx = pos[:, None] + np.arange(width, dtype=np.int64)
    b = padded[idx].astype(np.uint64)
    out = np.zeros(len(pos), np.uint64)
    for k in range(width):
        out |= b[:, k] << np.uint64(8 * k)
    return out


# ---- XXH64 ---------------------------------------------------------------------------------------------------------

_P1 = np.uint64(0x9E3779B185EBCA87)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0x85EBCA77C2B2AE63)
_P5 = np.uint64(0x27D4EB2F165667C5)


def _rotl64(x: U64, r: int) -> U64:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def _xx_round(acc: U64, lane: U64) -> U64:
    acc = acc + lane * _P2
    return _rotl64(acc, 31) * _P1


def _xx_merge(h: U64, v: U64) -> U64:
    h = h ^ _xx_round(np.zeros_like(v), v)
    return h * _P1 + _P4


def xxh64(starts: I64, lengths: I64, data: npt.NDArray[np.uint8]) -> U64:
    """XXH64 (seed 0) of every byte range ``data[start:start+length]``, as unsigned 64-bit values."""
    n = len(starts)
    h = np.empty(n, np.uint64)
    lengths = lengths.astype(np.int64)
    pos = starts.astype(np.int64).copy()
    with np.errstate(over="ignore"):
        big = np.flatnonzero(lengths >= 32)
        small = lengths < 32
        h[small] = _P5
        if len(big):
            v1 = np.full(len(big), _P1 + _P2, np.uint64)
            v2 = np.full(len(big), _P2, np.uint64)
            v3 = np.zeros(len(big), np.uint64)
            v4 = np.full(len(big), np.uint64(0) - _P1, np.uint64)
            stripes = lengths[big] // 32
            bpos = pos[big]
            for s in range(int(stripes.max())):
                m = stripes > s
                p = bpos[m] + 32 * s
                v1[m] = _xx_round(v1[m], _gather_le(data, p, 8))
                v2[m] = _xx_round(v2[m], _gather_le(data, p + 8, 8))
                v3[m] = _xx_round(v3[m], _gather_le(data, p + 16, 8))
                v4[m] = _xx_round(v4[m], _gather_le(data, p + 24, 8))
            acc = _rotl64(v1, 1) + _rotl64(v2, 7) + _rotl64(v3, 12) + _rotl64(v4, 18)
            for v in (v1, v2, v3, v4):
                acc = _xx_merge(acc, v)
            h[big] = acc
            pos[big] += stripes * 32
        h += lengths.astype(np.uint64)
        rem = lengths - (pos - starts)
        for _ in range(3):
            m = rem >= 8
            if not m.any():
                break
            k = _xx_round(np.zeros(int(m.sum()), np.uint64), _gather_le(data, pos[m], 8))
            h[m] = _rotl64(h[m] ^ k, 27) * _P1 + _P4
            pos[m] += 8
            rem[m] -= 8
        m = rem >= 4
        if m.any():
            h[m] = _rotl64(h[m] ^ (_gather_le(data, pos[m], 4) * _P1), 23) * _P2 + _P3
            pos[m] += 4
            rem[m] -= 4
        padded = np.concatenate([data, np.zeros(1, np.uint8)])
        for _ in range(3):
            m = rem >= 1
            if not m.any():
                break
            h[m] = _rotl64(h[m] ^ (padded[pos[m]].astype(np.uint64) * _P5), 11) * _P1
            pos[m] += 1
            rem[m] -= 1
        h ^= h >> np.uint64(33)
        h *= _P2
        h ^= h >> np.uint64(29)
        h *= _P3
        h ^= h >> np.uint64(32)
    return h


# ---- Thomas Wang's long hash ---------------------------------------------------------------------------------------

def thomas_wang_hash(keys: I64) -> I64:
    """``FastHash.getLongHash`` of every value (signed 64-bit arithmetic with wrap-around, arithmetic ``>>``)."""
    k = np.asarray(keys, dtype=np.int64).copy()
    with np.errstate(over="ignore"):
        k = (~k) + (k << np.int64(21))
        k = k ^ (k >> np.int64(24))
        k = (k + (k << np.int64(3))) + (k << np.int64(8))
        k = k ^ (k >> np.int64(14))
        k = (k + (k << np.int64(2))) + (k << np.int64(4))
        k = k ^ (k >> np.int64(28))
        k = k + (k << np.int64(31))
    return np.asarray(k, dtype=np.int64)


# ---- hashCode() of boxed keys --------------------------------------------------------------------------------------

def java_string_hash(text: str) -> int:
    """``String.hashCode`` (over UTF-16 code units) as a signed 32-bit value."""
    h = 0
    data = text.encode("utf-16-le", "surrogatepass")
    for (unit,) in struct.iter_unpack("<H", data):
        h = (31 * h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


_C1 = np.uint32(0xCC9E2D51)
_C2 = np.uint32(0x1B873593)


def _mix_k1(k: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint32]:
    k = k * _C1
    k = (k << np.uint32(15)) | (k >> np.uint32(17))
    return k * _C2


def _mix_h1(h: npt.NDArray[np.uint32], k: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint32]:
    h = h ^ k
    h = (h << np.uint32(13)) | (h >> np.uint32(19))
    return h * np.uint32(5) + np.uint32(0xE6546B64)


def murmur_binary_string_hash(starts: I64, lengths: I64, data: npt.NDArray[np.uint8]) -> I32:
    """``BinaryString.hashCode``: Paimon's Murmur3 (seed 42) over the UTF-8 bytes; 4-byte little-endian words, then
    each remaining byte sign-extended and mixed on its own."""
    n = len(starts)
    h = np.full(n, 42, np.uint32)
    lengths = lengths.astype(np.int64)
    with np.errstate(over="ignore"):
        words = lengths // 4
        for j in range(int(words.max()) if n else 0):
            m = words > j
            w = _gather_le(data, starts[m] + 4 * j, 4).astype(np.uint32)
            h[m] = _mix_h1(h[m], _mix_k1(w))
        padded = np.concatenate([data, np.zeros(1, np.uint8)])
        tail = lengths - words * 4
        for j in range(3):
            m = tail > j
            if not m.any():
                break
            b = padded[starts[m] + words[m] * 4 + j].astype(np.int8).astype(np.int32).astype(np.uint32)
            h[m] = _mix_h1(h[m], _mix_k1(b))
        h ^= lengths.astype(np.uint32)
        h ^= h >> np.uint32(16)
        h *= np.uint32(0x85EBCA6B)
        h ^= h >> np.uint32(13)
        h *= np.uint32(0xC2B2AE35)
        h ^= h >> np.uint32(16)
    return h.view(np.int32)


def long_hash_codes(values: I64) -> I32:
    """``Long.hashCode``: ``(int) (v ^ (v >>> 32))``."""
    u = np.asarray(values, dtype=np.int64).view(np.uint64)
    return (u ^ (u >> np.uint64(32))).astype(np.uint32).view(np.int32)


# ---- java.util.HashMap iteration order -----------------------------------------------------------------------------

_MIN_TREEIFY_CAPACITY = 64


def java_hashmap_order(hash_codes: Sequence[int] | npt.NDArray[np.int32], *, compute_if_absent: bool = False,
                       later_call: bool = False) -> tuple[I64, bool]:
    """Iteration order of a ``java.util.HashMap`` (default capacity 16, load factor 0.75) into which distinct keys
    with these ``hashCode()`` values were inserted in this order.

    Iteration walks bins ``(h ^ h >>> 16) & (capacity - 1)`` in order. ``put`` appends to a bin, resizes right after
    the insert that exceeds the threshold and treeifies a bin reaching 9 nodes; ``computeIfAbsent``
    (``compute_if_absent=True``) prepends, resizes at the start of the *next* call (``later_call``: whether any call,
    for a new or an existing key, follows the last insert) and treeifies a bin reaching 8 nodes. Below capacity 64
    treeifying doubles the table instead. Resizes split bins preserving their order.

    Returns (permutation of ``range(n)``, exact): ``exact`` is False when a bin became a red-black tree, whose node
    order this does not model (the order returned is then still a valid one).
    """
    codes = np.asarray(hash_codes, dtype=np.int64).astype(np.uint32)
    n = len(codes)
    if n == 0:
        return np.zeros(0, np.int64), True
    spread = (codes ^ (codes >> np.uint32(16))).astype(np.int64)
    tree_at = 7 if compute_if_absent else 8  # nodes already in the bin when the new one triggers treeifyBin
    cap, threshold, size, exact = _small_table_inserts(spread, tree_at, compute_if_absent)
    cap, exact = _load_factor_resizes(spread, tree_at, (cap, threshold, size, exact), compute_if_absent, later_call)
    rank = np.arange(n, dtype=np.int64)
    order = np.lexsort((-rank if compute_if_absent else rank, spread & (cap - 1)))
    return order.astype(np.int64), exact


def _small_table_inserts(spread: I64, tree_at: int, compute_if_absent: bool) -> tuple[int, int, int, bool]:
    """Insert by insert while the table is small (a long bin then doubles the table instead of becoming a tree);
    returns (capacity, threshold, keys inserted, exact)."""
    n = len(spread)
    cap, threshold = 16, 12
    exact = True
    size = 0
    while size < n and cap < _MIN_TREEIFY_CAPACITY:
        if compute_if_absent and size > threshold:
            cap, threshold = cap * 2, threshold * 2
        before = int(np.count_nonzero((spread[:size] & (cap - 1)) == (int(spread[size]) & (cap - 1))))
        size += 1
        if before >= tree_at:
            if cap < _MIN_TREEIFY_CAPACITY:
                cap, threshold = cap * 2, threshold * 2
            else:
                exact = False
        if not compute_if_absent and size > threshold:
            cap, threshold = cap * 2, threshold * 2
    return cap, threshold, size, exact


def _load_factor_resizes(spread: I64, tree_at: int, state: tuple[int, int, int, bool], compute_if_absent: bool,
                         later_call: bool) -> tuple[int, bool]:
    """From capacity 64 on only the load factor resizes; a bin reaching the tree size means a tree bin. ``state`` is
    (capacity, threshold, keys inserted, exact) after the small-table inserts; returns the final (capacity, exact)."""
    n = len(spread)
    cap, threshold, size, exact = state
    while True:
        end = min(n, threshold + 1)  # the insert that crosses the threshold still lands in this table
        if end > size:
            counts = np.bincount(spread[:end] & (cap - 1), minlength=cap)
            if int(counts.max()) > tree_at:
                exact = False
            size = end
        elif size and cap >= _MIN_TREEIFY_CAPACITY and exact:
            counts = np.bincount(spread[:size] & (cap - 1), minlength=cap)
            if int(counts.max()) > tree_at:
                exact = False
        if size > threshold and (size < n or not compute_if_absent or later_call):
            cap, threshold = cap * 2, threshold * 2
            continue
        if size >= n:
            break
    return cap, exact
