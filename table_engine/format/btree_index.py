"""BTree global index files (Paimon 1.4+, ``btree-global-index-<uuid>.index``): exact-match lookups.

Layout (Paimon's SST layout, little-endian; what pypaimon's ``BTreeIndexWriter`` and Java's ``BTreeIndexWriter``
write):

* data blocks, each followed by a 5-byte trailer (compression byte: 0 = none, 1 = zstd, 2 = lz4, 3 = lzo; CRC32C);
  then optionally the null bitmap, the bloom filter, then the index block (same trailer), then a 52-byte footer:
  bloom filter (offset u64, size u32, expected entries u64), index block (offset u64, size u32), null bitmap
  (offset u64, size u32), version u32, magic ``0x50425449``.
* a block: entries ``varint key length, key, varint value length, value``, then either (aligned, every entry of
  one size) that size u32 and the byte 0, or every entry's start u32, their count u32 and the byte 1.
* data entries: key = the serialized key (integers little-endian of their width, strings UTF-8), ascending; value =
  varint row count then a varint (long) per row id, local to the index entry's ``_ROW_RANGE_START``.
* index block entries: key = the last key of a data block, value = varint offset and varint size of that block.

:func:`btree_lookup` reads the footer, the index block and only the data blocks that can hold the keys asked for,
and decodes them with numpy (no loop per entry or per row id). Key types: TINYINT, SMALLINT, INT, BIGINT, CHAR,
VARCHAR (:func:`btree_key_supported`); compressed blocks raise :class:`~table_engine.errors.UnsupportedError`
(the caller then reads without the index).
"""

from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import CorruptMetadataError, UnsupportedError
from table_engine.format.global_index_file import open_with_footer
from table_engine.io.base import FileIO
from table_engine.types import DataType

__all__ = ["BTREE_INDEX", "BTreeLookup", "btree_key_kind", "btree_key_supported", "btree_lookup"]

#: the ``_INDEX_TYPE`` of BTree global index files
BTREE_INDEX = "btree"
_FOOTER = 52
_MAGIC = 0x50425449
_TRAILER = 5
_INT_WIDTHS = {"TINYINT": 1, "SMALLINT": 2, "INT": 4, "BIGINT": 8}
_STRINGS = ("CHAR", "VARCHAR", "STRING")


@dataclass(frozen=True)
class BTreeLookup:
    """The local row ids (sorted, int64) whose key is one of the keys asked for, and how many data blocks were
    read to find them."""

    row_ids: np.ndarray
    blocks_read: int


def _root(data_type: DataType) -> str:
    return data_type.root.upper()


def btree_key_kind(data_type: DataType) -> str | None:
    """How keys of ``data_type`` are serialized (types with the same kind write the same bytes): the integer type,
    ``STRING`` for CHAR/VARCHAR, None for types :func:`btree_lookup` does not decode."""
    root = _root(data_type)
    return root if root in _INT_WIDTHS else "STRING" if root in _STRINGS else None


def btree_key_supported(data_type: DataType) -> bool:
    """Whether :func:`btree_lookup` decodes keys of ``data_type``."""
    return btree_key_kind(data_type) is not None


def _varints(buf: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The varints (7 bits a byte, low first) starting at ``pos`` in ``buf``: (values int64, lengths)."""
    if len(pos) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    idx = np.minimum(pos[:, None] + np.arange(10), len(buf) - 1)
    b = buf[idx].astype(np.int64)
    ends = (b & 0x80) == 0
    if not ends.any(axis=1).all():
        raise CorruptMetadataError("btree index: a varint runs past its block")
    length = ends.argmax(axis=1) + 1
    used = np.arange(10) < length[:, None]
    values = (((b & 0x7F) << (7 * np.arange(10))) * used).sum(axis=1)
    return values, length


def _varint_stream(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every varint of a buffer that holds only varints: (values, index of each one's last byte)."""
    ends = np.flatnonzero((buf & 0x80) == 0)
    starts = np.concatenate([[0], ends[:-1] + 1]).astype(np.int64)
    shift = 7 * (np.arange(len(buf), dtype=np.int64) - np.repeat(starts, ends - starts + 1))
    parts = (buf.astype(np.int64) & 0x7F) << shift
    return np.add.reduceat(parts, starts) if len(starts) else np.zeros(0, np.int64), ends


def _gather(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The bytes ``buf[s:s+n]`` of every (start, length), concatenated."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.uint8)
    offsets = np.cumsum(lengths) - lengths
    return buf[np.repeat(starts - offsets, lengths) + np.arange(total)]


@dataclass(frozen=True)
class _Block:
    buf: np.ndarray
    key_start: np.ndarray
    key_len: np.ndarray
    value_start: np.ndarray
    value_len: np.ndarray


def _block(data: bytes, where: str) -> _Block:
    """The entries of one block (trailer removed, uncompressed)."""
    if len(data) < 5:
        raise CorruptMetadataError(f"btree index {where}: a block of {len(data)} bytes")
    buf = np.frombuffer(data, np.uint8)
    if data[-1] == 0:
        size = struct.unpack_from("<I", data, len(data) - 5)[0]
        end = len(data) - 5
        if size <= 0 or end % size:
            raise CorruptMetadataError(f"btree index {where}: aligned entries of {size} bytes in {end} bytes")
        pos = np.arange(0, end, size, dtype=np.int64)
    elif data[-1] == 1:
        count = struct.unpack_from("<I", data, len(data) - 5)[0]
        end = len(data) - 5 - 4 * count
        if end < 0:
            raise CorruptMetadataError(f"btree index {where}: {count} entries do not fit the block")
        pos = np.frombuffer(data, "<u4", count, end).astype(np.int64)
    else:
        raise CorruptMetadataError(f"btree index {where}: unknown block layout {data[-1]}")
    key_len, n1 = _varints(buf[:end], pos)
    key_start = pos + n1
    value_len, n2 = _varints(buf[:end], key_start + key_len)
    return _Block(buf, key_start, key_len, key_start + key_len + n2, value_len)


def _keys(block: _Block, data_type: DataType) -> pa.Array:
    """The block's keys as an Arrow array of the key type (int64 or binary)."""
    root = _root(data_type)
    raw = _gather(block.buf, block.key_start, block.key_len)
    if root in _INT_WIDTHS:
        width = _INT_WIDTHS[root]
        if (block.key_len != width).any():
            raise CorruptMetadataError(f"btree index: {root} keys of other than {width} bytes")
        return pa.array(raw.view(f"<i{width}").astype(np.int64))
    offsets = np.concatenate([[0], np.cumsum(block.key_len)]).astype(np.int64)
    return pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(block.key_len),
                                            [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(raw.tobytes())])


def _wanted(values: pa.Array, data_type: DataType) -> pa.Array:
    """The keys asked for, in the form :func:`_keys` returns (nulls dropped)."""
    values = values.drop_null()
    if _root(data_type) in _INT_WIDTHS:
        return pc.cast(values, pa.int64())
    return pc.cast(pc.cast(values, pa.large_string()), pa.large_binary())


def _read(f: Any, offset: int, size: int, where: str) -> bytes:
    """``size`` bytes at ``offset`` and the block trailer after them, the trailer checked and removed."""
    f.seek(offset)
    data = f.read(size + _TRAILER)
    if len(data) != size + _TRAILER:
        raise CorruptMetadataError(f"btree index {where}: truncated block at {offset}")
    if data[size] != 0:
        raise UnsupportedError(f"btree index {where}: compressed blocks (compression {data[size]}) are not read")
    return bytes(data[:size])


def btree_lookup(file_io: FileIO, path: str, file_size: int, key_type: DataType, values: pa.Array) -> BTreeLookup:
    """The local row ids of the BTree index file at ``path`` whose key equals one of ``values`` (of ``key_type``,
    see :func:`btree_key_supported`); reads only the data blocks whose key range can hold them."""
    if not btree_key_supported(key_type):
        raise UnsupportedError(f"btree index {path}: keys of type {key_type} are not decoded")
    wanted = _wanted(values, key_type)
    with open_with_footer(file_io, path, file_size, _FOOTER, "btree index") as (f, footer):
        if struct.unpack_from("<I", footer, 48)[0] != _MAGIC:
            raise CorruptMetadataError(f"btree index {path}: no BTree footer (file size {file_size})")
        index_offset, index_size = struct.unpack_from("<QI", footer, 20)
        index = _block(_read(f, index_offset, index_size, path), path)
        last_keys = _keys(index, key_type).to_pylist()
        handles, _ = _varint_stream(_gather(index.buf, index.value_start, index.value_len))
        offsets, sizes = handles[0::2], handles[1::2]
        # data block i holds the keys in (last_keys[i-1], last_keys[i]]
        blocks = sorted({i for v in wanted.unique().to_pylist()
                         if (i := bisect.bisect_left(last_keys, v)) < len(last_keys)})
        found: list[np.ndarray] = []
        for i in blocks:
            block = _block(_read(f, int(offsets[i]), int(sizes[i]), path), path)
            hit = np.flatnonzero(pc.is_in(_keys(block, key_type), value_set=wanted).to_numpy(zero_copy_only=False))
            if not len(hit):
                continue
            ints, ends = _varint_stream(_gather(block.buf, block.value_start[hit], block.value_len[hit]))
            # each value: its row count, then the row ids; a value's first varint is the one after the previous
            # value's bytes
            bounds = np.cumsum(block.value_len[hit]) - 1
            value_of = np.searchsorted(bounds, ends)
            first = np.ones(len(ints), bool)
            first[1:] = value_of[1:] != value_of[:-1]
            found.append(ints[~first])
    row_ids = np.unique(np.concatenate(found)) if found else np.zeros(0, np.int64)
    return BTreeLookup(row_ids, len(blocks))
