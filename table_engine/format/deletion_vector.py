"""Deletion-vector index files (``index/index-<uuid>-<n>``, index type ``DELETION_VECTORS``).

A deletion vector (DV) marks rows of one data file as deleted, by 0-based row position. A DV index file holds the
vectors of several data files of one (partition, bucket):

* byte 0: version ``1``;
* per data file, in file-name order, a block: ``int32 BE size`` | bitmap data (``size`` bytes) | ``int32 BE CRC32``
  of the bitmap data. The bitmap data is either

  - 32-bit (Paimon's ``BitmapDeletionVector``): ``int32 BE magic 1581511376`` + a RoaringBitmap in the portable
    serialization (cookie ``3a30``/``3b30``), or
  - 64-bit (``Bitmap64DeletionVector``, ``deletion-vectors.bitmap64``): ``int32 LE magic 1681511377`` + the
    portable 64-bit layout (``int64 LE`` count of 32-bit bitmaps, then per bitmap ``int32 LE`` high key + a portable
    32-bit RoaringBitmap).

The index manifest locates each block: ``DeletionVectorMeta(f0=data file, f1=offset of the size field, f2=size,
_CARDINALITY=deleted rows)``; the entry's ``_ROW_COUNT`` is the number of data files with a vector.

In memory a DV is a ``pyroaring.BitMap`` (row positions of a file always fit in 32 bits).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from pyroaring import BitMap

from table_engine.errors import CorruptMetadataError, UnsupportedError
from table_engine.format.index_manifest import DeletionVectorMeta
from table_engine.io.file_io import FileIO

__all__ = [
    "DV_INDEX_VERSION",
    "MAGIC_BITMAP32",
    "MAGIC_BITMAP64",
    "DeletionVectorIndex",
    "decode_deletion_vector",
    "encode_deletion_vector",
    "encode_dv_index",
    "keep_mask",
    "read_dv_index",
    "write_dv_index",
]

DV_INDEX_VERSION = 1
MAGIC_BITMAP32 = 1581511376
MAGIC_BITMAP64 = 1681511377
_BE_I4 = struct.Struct(">i")
_BE_U4 = struct.Struct(">I")
_LE_I4 = struct.Struct("<i")
_LE_I8 = struct.Struct("<q")


@dataclass(frozen=True, slots=True)
class DeletionVectorIndex:
    """What writing a DV index file produced: its size and where each data file's vector lies in it."""

    file_size: int
    ranges: list[DeletionVectorMeta]


def _bitmap_data(bitmap: BitMap, bitmap64: bool) -> bytes:
    if not bitmap64:
        return _BE_U4.pack(MAGIC_BITMAP32) + bitmap.serialize()
    # one 32-bit bitmap under high key 0: positions of one file never exceed 2^32
    return _LE_I4.pack(MAGIC_BITMAP64) + _LE_I8.pack(1) + _LE_I4.pack(0) + bitmap.serialize()


def encode_deletion_vector(bitmap: BitMap, bitmap64: bool = False) -> bytes:
    """One block: ``size`` | magic + bitmap | CRC32 (of magic + bitmap)."""
    data = _bitmap_data(bitmap, bitmap64)
    return _BE_I4.pack(len(data)) + data + _BE_U4.pack(zlib.crc32(data) & 0xFFFFFFFF)


def decode_deletion_vector(block: bytes | memoryview, where: str = "deletion vector") -> BitMap:
    """The bitmap of one block (as located by a ``DeletionVectorMeta``: from its size field on)."""
    view = memoryview(block)
    if len(view) < 8:
        raise CorruptMetadataError(f"{where}: block of {len(view)} bytes is too short")
    (size,) = _BE_I4.unpack_from(view, 0)
    if size < 4 or 4 + size + 4 > len(view):
        raise CorruptMetadataError(f"{where}: bitmap size {size} does not fit the {len(view)}-byte block")
    data = view[4:4 + size]
    (crc,) = _BE_U4.unpack_from(view, 4 + size)
    if zlib.crc32(data) & 0xFFFFFFFF != crc:
        raise CorruptMetadataError(f"{where}: CRC32 mismatch (stored {crc:#010x})")
    (magic_be,) = _BE_U4.unpack_from(data, 0)
    (magic_le,) = _LE_I4.unpack_from(data, 0)
    try:
        if magic_be == MAGIC_BITMAP32:
            return BitMap.deserialize(bytes(data[4:]))
        if magic_le == MAGIC_BITMAP64:
            return _decode_bitmap64(data[4:], where)
    except (ValueError, OverflowError) as e:
        raise CorruptMetadataError(f"{where}: cannot decode the RoaringBitmap: {e}") from e
    raise CorruptMetadataError(f"{where}: unknown deletion vector magic number {magic_be}")


def _decode_bitmap64(data: memoryview, where: str) -> BitMap:
    (count,) = _LE_I8.unpack_from(data, 0)
    pos = 8
    out = BitMap()
    for _ in range(count):
        (key,) = _LE_I4.unpack_from(data, pos)
        pos += 4
        part = BitMap.deserialize(bytes(data[pos:]))
        pos += len(part.serialize())  # the portable size of what was just read
        if key != 0 and len(part):
            raise UnsupportedError(f"{where}: row positions beyond 2^32 (64-bit key {key}) are not supported")
        out |= part
    return out


def encode_dv_index(dvs: Mapping[str, BitMap], bitmap64: bool = False) -> tuple[bytes, list[DeletionVectorMeta]]:
    """File content and ranges for ``dvs`` (data file name -> deleted positions); empty vectors are left out."""
    parts = [bytes([DV_INDEX_VERSION])]
    ranges: list[DeletionVectorMeta] = []
    offset = 1
    for name in sorted(dvs):
        bitmap = dvs[name]
        if not len(bitmap):
            continue
        block = encode_deletion_vector(bitmap, bitmap64)
        ranges.append(DeletionVectorMeta(name, offset, len(block) - 8, len(bitmap)))
        parts.append(block)
        offset += len(block)
    return b"".join(parts), ranges


def write_dv_index(file_io: FileIO, path: str, dvs: Mapping[str, BitMap], bitmap64: bool = False
                   ) -> DeletionVectorIndex:
    """Write a new DV index file at ``path``."""
    data, ranges = encode_dv_index(dvs, bitmap64)
    file_io.write_bytes(path, data)
    return DeletionVectorIndex(len(data), ranges)


def read_dv_index(file_io: FileIO, path: str, ranges: Sequence[DeletionVectorMeta]) -> dict[str, BitMap]:
    """The vectors of ``ranges`` (from the index manifest) in the DV index file at ``path``."""
    data = file_io.read_referenced(path, "deletion vector index file")
    if not data or data[0] != DV_INDEX_VERSION:
        raise CorruptMetadataError(f"deletion vector index {path}: unsupported version byte "
                                   f"{data[0] if data else 'none'} (expected {DV_INDEX_VERSION})")
    out: dict[str, BitMap] = {}
    for r in ranges:
        end = r.offset + 4 + r.length + 4
        if r.offset < 1 or end > len(data):
            raise CorruptMetadataError(f"deletion vector of {r.data_file_name} at [{r.offset}, {end}) lies outside "
                                       f"{path} ({len(data)} bytes)")
        block = memoryview(data)[r.offset:end]
        (size,) = _BE_I4.unpack_from(block, 0)
        if size != r.length:
            raise CorruptMetadataError(f"deletion vector of {r.data_file_name} in {path}: size {size} in the file, "
                                       f"{r.length} in the index manifest")
        bitmap = decode_deletion_vector(block, f"deletion vector of {r.data_file_name} in {path}")
        if r.cardinality is not None and len(bitmap) != r.cardinality:
            raise CorruptMetadataError(f"deletion vector of {r.data_file_name} in {path}: {len(bitmap)} rows, "
                                       f"cardinality {r.cardinality} in the index manifest")
        out[r.data_file_name] = bitmap
    return out


def keep_mask(bitmap: BitMap, num_rows: int, where: str = "data file") -> npt.NDArray[np.bool_]:
    """Boolean mask of the rows a vector keeps (False at deleted positions), vectorized."""
    mask = np.ones(num_rows, dtype=np.bool_)
    if len(bitmap):
        positions = np.frombuffer(bitmap.to_array(), dtype=np.uint32)
        if int(positions[-1]) >= num_rows:
            raise CorruptMetadataError(f"deletion vector of {where} deletes row {int(positions[-1])} but the file has "
                                       f"{num_rows} rows")
        mask[positions] = False
    return mask
