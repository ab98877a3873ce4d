"""Roaring bitmaps as Paimon's ``RoaringBitmap32`` writes them: run-optimized, in the portable serialization format.

pyroaring (CRoaring) and Java's RoaringBitmap share the portable format and the same ``runOptimize`` rules (convert
a container to runs when the run encoding is strictly smaller), so serialized bytes match Java's.
"""

from __future__ import annotations

import struct

import numpy as np
import numpy.typing as npt
from pyroaring import BitMap

from table_engine.errors import CorruptMetadataError

__all__ = ["bitmap_of", "deserialize_at", "serialize", "serialized_size"]

_SERIAL_COOKIE_NO_RUNCONTAINER = 12346
_SERIAL_COOKIE = 12347
_NO_OFFSET_THRESHOLD = 4
_ARRAY_MAX = 4096


def bitmap_of(positions: npt.NDArray[np.integer] | list[int]) -> BitMap:
    """A roaring bitmap of row positions."""
    return BitMap(np.asarray(positions, dtype=np.uint32))


def serialize(bitmap: BitMap) -> bytes:
    """``RoaringBitmap32.serialize``: run-optimize, then the portable format."""
    bm = BitMap(bitmap)
    bm.run_optimize()
    return bytes(bm.serialize())


def serialized_size(buf: bytes | memoryview, pos: int) -> int:
    """Byte size of the portable-format bitmap starting at ``pos`` (read from its header)."""
    try:
        (cookie,) = struct.unpack_from("<I", buf, pos)
        p = pos + 4
        run_flags = b""
        if cookie & 0xFFFF == _SERIAL_COOKIE:
            size = (cookie >> 16) + 1
            run_flags = bytes(buf[p:p + (size + 7) // 8])
            p += (size + 7) // 8
            has_offsets = size >= _NO_OFFSET_THRESHOLD
        elif cookie == _SERIAL_COOKIE_NO_RUNCONTAINER:
            (size,) = struct.unpack_from("<I", buf, p)
            p += 4
            has_offsets = True
        else:
            raise CorruptMetadataError(f"not a serialized roaring bitmap (cookie {cookie})")
        header = struct.unpack_from(f"<{2 * size}H", buf, p)
        p += 4 * size
        if has_offsets:
            p += 4 * size
        for i in range(size):
            card = header[2 * i + 1] + 1
            if run_flags and run_flags[i // 8] >> (i % 8) & 1:
                (runs,) = struct.unpack_from("<H", buf, p)
                p += 2 + 4 * runs
            elif card > _ARRAY_MAX:
                p += 8192
            else:
                p += 2 * card
        if p > len(buf):
            raise CorruptMetadataError("serialized roaring bitmap is truncated")
        return int(p - pos)
    except struct.error as e:
        raise CorruptMetadataError(f"serialized roaring bitmap is truncated: {e}") from e


def deserialize_at(buf: bytes, pos: int, length: int = -1) -> tuple[BitMap, int]:
    """The bitmap at ``pos`` (``length`` bytes, or as many as its header says) and the position after it."""
    if length < 0:
        length = serialized_size(buf, pos)
    try:
        return BitMap.deserialize(buf[pos:pos + length]), pos + length
    except (ValueError, OSError) as e:
        raise CorruptMetadataError(f"cannot deserialize a roaring bitmap: {e}") from e
