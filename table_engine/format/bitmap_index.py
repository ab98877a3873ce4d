"""Bitmap global index files (Paimon 1.4+, ``bitmap-global-index-<uuid>.index``): exact-match lookups.

Layout (what pypaimon's ``BitmapIndexWriter`` and Java's ``BitmapGlobalIndexFormat`` write):

* bitmaps: the null rows', the non-null rows' and one per distinct key, each a 64-bit roaring bitmap in the portable
  format (CRoaring's, Java's ``Roaring64NavigableMap.serializePortable``), no trailer;
* dictionary blocks and the index block, each followed by a 5-byte trailer (compression byte: 0 = none; CRC32C); a
  dictionary block: varint entry count, then per entry ``varint key length, key, varlong bitmap offset, varint
  bitmap length``; the index block: the same with each dictionary block's first key, offset and length;
* a 48-byte big-endian footer: null bitmap (offset i64, length i32), non-null bitmap (offset i64, length i32),
  index block (offset i64, length i32), value count i32, version i32 (1), magic ``0x42474958``.

The order of the parts differs (pypaimon writes all bitmaps first, Java interleaves them with the dictionary blocks
and writes the null / non-null bitmaps last) and so does the key order (serialized bytes in pypaimon, the key type's
order in Java): the reader follows only the footer's and the blocks' offsets and reads every dictionary block.
Keys are serialized as for BTree indexes (integers little-endian of their width, strings UTF-8); row ids are local
to the index entry's ``_ROW_RANGE_START``. :func:`bitmap_lookup` reads the footer, the index block, the dictionary
blocks and only the bitmaps of the keys asked for; the records are decoded with numpy (no loop per entry).
Compressed blocks raise :class:`~table_engine.errors.UnsupportedError` (the caller then reads without the index).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import BitMap64

from table_engine.errors import CorruptMetadataError, UnsupportedError
from table_engine.format.btree_index import btree_key_kind
from table_engine.format.global_index_file import open_with_footer
from table_engine.io.base import FileIO
from table_engine.types import DataType

__all__ = ["BITMAP_INDEX", "BitmapLookup", "bitmap_lookup", "bitmap_records", "serialize_keys"]

#: the ``_INDEX_TYPE`` of bitmap global index files
BITMAP_INDEX = "bitmap"
_FOOTER = 48
_MAGIC = 0x42474958
_VERSION = 1
_TRAILER = 5
_INT_WIDTHS = {"TINYINT": 1, "SMALLINT": 2, "INT": 4, "BIGINT": 8}


@dataclass(frozen=True)
class BitmapLookup:
    """The local row ids (sorted, int64) whose key is one of the keys asked for, and how many bitmaps were read."""

    row_ids: np.ndarray
    bitmaps_read: int


@dataclass(frozen=True)
class Records:
    """The records of a dictionary or index block: the keys (large binary), the offsets and lengths they point to."""

    keys: pa.Array
    offsets: np.ndarray
    lengths: np.ndarray


def _varints_at(buf: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The varints (7 bits a byte, low first) starting at every ``pos`` of ``buf``: (values, lengths); a varint
    that does not end within 10 bytes gets length 10 (the caller's chain then leaves the block)."""
    idx = np.minimum(pos[:, None] + np.arange(10), len(buf) - 1)
    b = buf[idx].astype(np.int64)
    ends = (b & 0x80) == 0
    length = np.where(ends.any(axis=1), ends.argmax(axis=1) + 1, 10)
    used = np.arange(10) < length[:, None]
    return (((b & 0x7F) << (7 * np.arange(10))) * used).sum(axis=1), length


def bitmap_records(data: bytes, where: str) -> Records:
    """The records of one block (trailer removed): ``varint count`` then ``varint key length, key, varlong offset,
    varint length`` each. Decoded for every byte position at once, then the chain of record starts is followed by
    pointer doubling (log2(count) numpy steps)."""
    buf = np.frombuffer(data, np.uint8)
    n = len(buf)
    if n == 0:
        raise CorruptMetadataError(f"bitmap index {where}: an empty block")
    pos = np.arange(n, dtype=np.int64)
    value, size = _varints_at(buf, pos)  # the varint that would start at each position
    count, first = int(value[0]), int(size[0])
    klen = np.clip(value, 0, n)  # a garbage position may decode to anything
    off_at = pos + size + klen  # where the bitmap offset would start (unclipped: past n = leaves the block)
    off, n2 = value[np.minimum(off_at, n - 1)], size[np.minimum(off_at, n - 1)]
    len_at = off_at + n2
    length, n3 = value[np.minimum(len_at, n - 1)], size[np.minimum(len_at, n - 1)]
    end = len_at + n3  # where a record starting at each position would end
    nxt = np.append(np.minimum(end, n), n)  # the next record's start, n once it leaves the block
    reach = np.array([first], np.int64)  # after k rounds: the first 2**k record starts
    jump = nxt  # after k rounds: 2**k records ahead
    while (reach < n).sum() < count:
        more = np.union1d(reach, jump[reach])
        if len(more) == len(reach):
            break
        reach, jump = more, jump[jump]
    starts = reach[reach < n][:count]
    if len(starts) != count or (count and (end[starts[-1]] > n or (off[starts] < 0).any()
                                           or (length[starts] < 0).any())):
        raise CorruptMetadataError(f"bitmap index {where}: {count} records do not fit a block of {n} bytes")
    key_start, key_len = starts + size[starts], klen[starts]
    total = int(key_len.sum())
    rel = np.cumsum(key_len) - key_len
    raw = buf[np.repeat(key_start - rel, key_len) + np.arange(total)] if total else np.zeros(0, np.uint8)
    key_offsets = np.concatenate([[0], np.cumsum(key_len)]).astype(np.int64)
    keys = pa.LargeBinaryArray.from_buffers(pa.large_binary(), count,
                                            [None, pa.py_buffer(key_offsets.tobytes()), pa.py_buffer(raw.tobytes())])
    return Records(keys, off[starts], length[starts])


def serialize_keys(values: pa.Array, data_type: DataType) -> pa.Array:
    """The keys asked for serialized as the index stores them (large binary; nulls dropped)."""
    values = values.drop_null()
    root = data_type.root.upper()
    if root in _INT_WIDTHS:
        width = _INT_WIDTHS[root]
        raw = np.asarray(pc.cast(values, pa.int64()).to_numpy(zero_copy_only=False)).astype(f"<i{width}").tobytes()
        offsets = np.arange(len(values) + 1, dtype=np.int64) * width
        return pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(values),
                                                [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(raw)])
    return pc.cast(pc.cast(values, pa.large_string()), pa.large_binary())


def _read(f: Any, offset: int, size: int, where: str, trailer: bool) -> bytes:
    """``size`` bytes at ``offset`` (and the block trailer after them, checked and removed)."""
    f.seek(offset)
    want = size + (_TRAILER if trailer else 0)
    data = f.read(want)
    if size < 0 or len(data) != want:
        raise CorruptMetadataError(f"bitmap index {where}: truncated block at {offset}")
    if trailer and data[size] > 3:
        raise CorruptMetadataError(f"bitmap index {where}: unknown block compression {data[size]} at {offset}")
    if trailer and data[size] != 0:
        raise UnsupportedError(f"bitmap index {where}: compressed blocks (compression {data[size]}) are not read")
    return bytes(data[:size])


def bitmap_lookup(file_io: FileIO, path: str, file_size: int, key_type: DataType, values: pa.Array
                  ) -> BitmapLookup:
    """The local row ids of the bitmap index file at ``path`` whose key equals one of ``values`` (of ``key_type``:
    TINYINT, SMALLINT, INT, BIGINT, CHAR, VARCHAR); reads only the bitmaps of those keys."""
    if btree_key_kind(key_type) is None:
        raise UnsupportedError(f"bitmap index {path}: keys of type {key_type} are not decoded")
    wanted = serialize_keys(values, key_type)
    with open_with_footer(file_io, path, file_size, _FOOTER, "bitmap index") as (f, footer):
        if struct.unpack_from(">i", footer, 44)[0] != _MAGIC:
            raise CorruptMetadataError(f"bitmap index {path}: no bitmap footer (file size {file_size})")
        version = struct.unpack_from(">i", footer, 40)[0]
        if version != _VERSION:
            raise UnsupportedError(f"bitmap index {path}: version {version} is not read")
        index_offset, index_size = struct.unpack_from(">qi", footer, 24)
        index = bitmap_records(_read(f, index_offset, index_size, path, True), path)
        found: list[np.ndarray] = []
        read = 0
        # every dictionary block is read: the writers order keys differently
        for offset, size in zip(index.offsets.tolist(), index.lengths.tolist()):
            block = bitmap_records(_read(f, offset, size, path, True), path)
            hit = np.flatnonzero(pc.is_in(block.keys, value_set=wanted).to_numpy(zero_copy_only=False))
            for i in hit.tolist():
                data = _read(f, int(block.offsets[i]), int(block.lengths[i]), path, False)
                try:
                    bm = BitMap64.deserialize(data)
                except (ValueError, OverflowError) as e:
                    raise CorruptMetadataError(f"bitmap index {path}: a bad bitmap at {block.offsets[i]}") from e
                found.append(np.frombuffer(bm.to_array(), np.uint64).astype(np.int64))
                read += 1
    row_ids = np.unique(np.concatenate(found)) if found else np.zeros(0, np.int64)
    return BitmapLookup(row_ids, read)
