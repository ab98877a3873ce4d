"""Paimon's ``bitmap`` file index (``BitmapFileIndex``): a dictionary from each distinct value to the roaring bitmap
of the rows holding it, plus a bitmap of the null rows. Exact for ``=``, ``!=``, ``IN``, ``NOT IN``, ``IS NULL``
and ``IS NOT NULL``.

Version 1 (``BitmapFileIndexMeta``), integers big-endian::

    version (1 byte) | row count (4 bytes int) | non-null value bitmap number (4 bytes int)
    has null value (1 byte) | null value offset (4 bytes int, if has null value)
    value 1 | offset 1 | value 2 | offset 2 | ...                                   (HEAD)
    serialized bitmaps                                                              (BODY)

Version 2 (``BitmapFileIndexMetaV2``, Paimon's default) adds the null bitmap length after the null offset and
replaces the flat dictionary by index blocks: the values sorted (``Comparator`` of the type), cut into blocks of at
most ``index-block-size`` (16 kb) bytes; the head lists (first value, block offset) per block and the body offset,
each block lists (value, offset, length). Offsets are relative to the body start. An offset ``< 0`` means the value
occurs in one row only, at row ``-1 - offset`` (no bitmap is stored); length ``-1`` means "not recorded".

Values are written with ``DataOutput``: strings as int length + UTF-8 bytes, TINYINT 1 byte, SMALLINT 2, INT/DATE/
TIME 4, BIGINT/TIMESTAMP 8 (millis for precision <= 3, else micros), FLOAT/DOUBLE as IEEE bits, BOOLEAN 1 byte.
Paimon serializes the dictionary in the iteration order of a ``java.util.HashMap`` filled in row order; this
module reproduces that order (see :func:`~table_engine.format.file_index.java_compat.java_hashmap_order`), so
the bytes are identical to Java's.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
from pyroaring import BitMap

from table_engine.errors import CorruptMetadataError, OptionError
from table_engine.format.file_index.java_compat import (
    java_hashmap_order,
    long_hash_codes,
    murmur_binary_string_hash,
)
from table_engine.format.file_index.roaring import bitmap_of, deserialize_at, serialize
from table_engine.format.file_index.values import (
    BINARY,
    BOOLEAN,
    BYTE,
    DECIMAL,
    DOUBLE,
    FLOAT,
    INT,
    LONG,
    SHORT,
    STRING,
    ColumnValues,
    Literal,
    value_kind,
)
from table_engine.options import parse_memory_size
from table_engine.types import DataType

__all__ = ["BITMAP", "BitmapIndexReader", "bitmap_supported", "build_bitmap"]

BITMAP = "bitmap"
VERSION_1 = 1
VERSION_2 = 2
DEFAULT_BLOCK_SIZE = 16 * 1024
_FIXED_SIZE = {BOOLEAN: 1, BYTE: 1, SHORT: 2, INT: 4, LONG: 8, FLOAT: 4, DOUBLE: 8}
_FMT = {BOOLEAN: ">b", BYTE: ">b", SHORT: ">h", INT: ">i", LONG: ">q", FLOAT: ">i", DOUBLE: ">q"}

Key = bytes | int


def bitmap_supported(t: DataType) -> str | None:
    """Why a bitmap index cannot index a column of type ``t``, or None if it can."""
    kind = value_kind(t)
    if kind is None or kind in (BINARY, DECIMAL):
        return f"bitmap does not support type {t.sql()}"
    return None


def bitmap_options(props: Mapping[str, str]) -> tuple[int, int]:
    """(version, index block size) from the per-column options ``version`` and ``index-block-size``."""
    try:
        version = int(props.get("version", VERSION_2))
    except ValueError:
        raise OptionError(f"bitmap version {props.get('version')!r} is not an integer") from None
    if version not in (VERSION_1, VERSION_2):
        raise OptionError(f"bitmap version must be 1 or 2, got {version}")
    block = parse_memory_size(props.get("index-block-size", "16kb"), key="index-block-size")
    if block <= 0:
        raise OptionError(f"bitmap index-block-size must be positive, got {block}")
    return version, block


# ---- values ------------------------------------------------------------------------------------------------------

def _write_value(kind: str, key: Key) -> bytes:
    if kind == STRING:
        assert isinstance(key, bytes)
        return struct.pack(">i", len(key)) + key
    assert isinstance(key, int)
    return struct.pack(_FMT[kind], key)


def _value_size(kind: str, key: Key) -> int:
    if kind == STRING:
        assert isinstance(key, bytes)
        return 4 + len(key)
    return _FIXED_SIZE[kind]


def _read_value(kind: str, data: bytes, pos: int) -> tuple[Key, int]:
    if kind == STRING:
        (n,) = struct.unpack_from(">i", data, pos)
        if n < 0 or pos + 4 + n > len(data):
            raise CorruptMetadataError("bitmap index value runs past the index")
        return data[pos + 4:pos + 4 + n], pos + 4 + n
    fmt = _FMT[kind]
    (v,) = struct.unpack_from(fmt, data, pos)
    return int(v), pos + _FIXED_SIZE[kind]


def _sort_key(kind: str, key: Key) -> Any:
    """Order of Paimon's V2 comparator (``BinaryString.compareTo`` = unsigned bytes; ``Float.compare`` etc.)."""
    if kind in (FLOAT, DOUBLE):
        assert isinstance(key, int)
        f = float(np.array([key], np.int32 if kind == FLOAT else np.int64).view(
            np.float32 if kind == FLOAT else np.float64)[0])
        return (1, 0.0, key) if math.isnan(f) else (0, f, key)
    return key


def _hash_codes(kind: str, keys: list[Key]) -> npt.NDArray[np.int32]:
    """``hashCode()`` of the boxed keys (BinaryString, Byte, Short, Integer, Long, Float, Double, Boolean)."""
    if kind == STRING:
        lengths = np.array([len(k) if isinstance(k, bytes) else 0 for k in keys], np.int64)
        starts = np.zeros(len(keys), np.int64)
        if len(keys) > 1:
            np.cumsum(lengths[:-1], out=starts[1:])
        data = np.frombuffer(b"".join(k for k in keys if isinstance(k, bytes)), np.uint8)
        return murmur_binary_string_hash(starts, lengths, data)
    ints = np.array(keys, np.int64)
    if kind == BOOLEAN:
        return np.where(ints != 0, 1231, 1237).astype(np.int32)
    if kind in (LONG, DOUBLE):
        return long_hash_codes(ints)
    return ints.astype(np.int32)


# ---- writing -----------------------------------------------------------------------------------------------------

def _distinct(values: ColumnValues) -> tuple[list[Key], list[npt.NDArray[np.int64]]]:
    """Distinct non-null values in first-occurrence order and the (ascending) rows of each."""
    rows = np.flatnonzero(values.valid)
    if len(rows) == 0:
        return [], []
    if values.kind == STRING:
        assert values.starts is not None and values.lengths is not None and values.data is not None
        starts, lengths = values.starts[rows], values.lengths[rows]
        offsets = np.zeros(len(rows) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        idx = np.repeat(starts - offsets[:-1], lengths) + np.arange(int(offsets[-1]), dtype=np.int64)
        data = values.data[idx] if len(idx) else np.zeros(0, np.uint8)
        arr: pa.Array = pa.Array.from_buffers(pa.large_binary(), len(rows),
                                              [None, pa.py_buffer(offsets), pa.py_buffer(data.tobytes())])
    else:
        assert values.ints is not None
        arr = pa.array(values.ints[rows], pa.int64())
    enc = pc.dictionary_encode(arr)  # dictionary in first-occurrence order
    codes = np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    keys: list[Key] = list(enc.dictionary.to_pylist())
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes, minlength=len(keys))
    bounds = np.concatenate([[0], np.cumsum(counts)])
    sorted_rows = rows[order]
    return keys, [sorted_rows[bounds[i]:bounds[i + 1]] for i in range(len(keys))]


@dataclass
class _Entry:
    key: Key
    offset: int
    length: int


def build_bitmap(values: ColumnValues, props: Mapping[str, str]) -> bytes:
    """Serialize the bitmap index of a column exactly as Paimon's ``BitmapFileIndex.Writer`` does."""
    version, block_limit = bitmap_options(props)
    kind = values.kind
    row_count = len(values)
    keys, positions = _distinct(values)
    null_rows = np.flatnonzero(~values.valid)
    null_bytes = serialize(bitmap_of(null_rows))
    # Paimon fills a HashMap with computeIfAbsent once per non-null row
    later_call = bool(keys) and int(positions[-1][0]) < int(np.flatnonzero(values.valid)[-1])
    order, _exact = java_hashmap_order(_hash_codes(kind, keys), compute_if_absent=True, later_call=later_call)
    body = bytearray()
    if len(null_rows) > 1:
        body += null_bytes
    entries: list[_Entry] = []
    for i in order.tolist():
        rows = positions[i]
        if len(rows) == 1:
            entries.append(_Entry(keys[i], -1 - int(rows[0]), -1))
        else:
            data = serialize(bitmap_of(rows))
            entries.append(_Entry(keys[i], len(body), len(data)))
            body += data
    has_null = len(null_rows) > 0
    null_offset = -1 - int(null_rows[0]) if len(null_rows) == 1 else 0
    out = bytearray(struct.pack(">biib", version, row_count, len(keys), has_null))
    if version == VERSION_1:
        if has_null:
            out += struct.pack(">i", null_offset)
        for e in entries:
            out += _write_value(kind, e.key) + struct.pack(">i", e.offset)
    else:
        if has_null:
            out += struct.pack(">ii", null_offset, len(null_bytes))
        out += _v2_index(kind, entries, block_limit)
    return bytes(out + body)


def _v2_index(kind: str, entries: list[_Entry], block_limit: int) -> bytes:
    """The V2 head tail: block count, (first value, offset) per block, body offset, then the blocks."""
    ordered = sorted(entries, key=lambda e: _sort_key(kind, e.key))
    blocks: list[list[_Entry]] = []
    block_bytes: list[int] = []
    for e in ordered:
        size = 8 + _value_size(kind, e.key)
        if blocks and block_bytes[-1] + size <= block_limit:
            blocks[-1].append(e)
            block_bytes[-1] += size
            continue
        if 4 + size > block_limit:
            raise OptionError(f"bitmap index-block-size {block_limit} cannot hold a single value")
        blocks.append([e])
        block_bytes.append(4 + size)
    out = bytearray(struct.pack(">i", len(blocks)))
    offset = 0
    for block, nbytes in zip(blocks, block_bytes):
        out += _write_value(kind, block[0].key) + struct.pack(">i", offset)
        offset += nbytes
    out += struct.pack(">i", offset)
    for block in blocks:
        out += struct.pack(">i", len(block))
        for e in block:
            out += _write_value(kind, e.key) + struct.pack(">ii", e.offset, e.length)
    return bytes(out)


# ---- reading -----------------------------------------------------------------------------------------------------

class BitmapIndexReader:
    """Row bitmaps of values, from a V1 or V2 bitmap index."""

    def __init__(self, data: bytes, kind: str) -> None:
        self.data = data
        self.kind = kind
        try:
            self._parse()
        except (struct.error, IndexError) as e:
            raise CorruptMetadataError(f"cannot parse bitmap file index: {e}") from e

    def _parse(self) -> None:
        d, kind = self.data, self.kind
        version = d[0]
        if version not in (VERSION_1, VERSION_2):
            raise CorruptMetadataError(f"bitmap file index version {version} is not supported")
        self.row_count, n, has_null = struct.unpack_from(">iib", d, 1)
        pos = 10
        self.null_offset: int | None = None
        self.null_length = -1
        self.entries: dict[Key, tuple[int, int]] = {}
        if version == VERSION_1:
            if has_null:
                (self.null_offset,) = struct.unpack_from(">i", d, pos)
                pos += 4
            listed: list[tuple[Key, int]] = []
            for _ in range(n):
                key, pos = _read_value(kind, d, pos)
                (off,) = struct.unpack_from(">i", d, pos)
                pos += 4
                listed.append((key, off))
            self.body_start = pos
            stored = sorted({off for _, off in listed if off >= 0} | (
                {self.null_offset} if self.null_offset is not None and self.null_offset >= 0 else set()))
            ends = dict(zip(stored, stored[1:]))
            for key, off in listed:
                self.entries[key] = (off, ends[off] - off if off in ends else -1)
            if self.null_offset is not None and self.null_offset >= 0 and self.null_offset in ends:
                self.null_length = ends[self.null_offset] - self.null_offset
        else:
            if has_null:
                self.null_offset, self.null_length = struct.unpack_from(">ii", d, pos)
                pos += 8
            (n_blocks,) = struct.unpack_from(">i", d, pos)
            pos += 4
            for _ in range(n_blocks):
                _key, pos = _read_value(kind, d, pos)
                pos += 4
            (blocks_size,) = struct.unpack_from(">i", d, pos)
            pos += 4
            index_start = pos
            self.body_start = index_start + blocks_size
            p = index_start
            for _ in range(n_blocks):
                (count,) = struct.unpack_from(">i", d, p)
                p += 4
                for _ in range(count):
                    key, p = _read_value(kind, d, p)
                    off, length = struct.unpack_from(">ii", d, p)
                    p += 8
                    self.entries[key] = (off, length)
        self.has_null = bool(has_null)

    def _bitmap(self, offset: int, length: int) -> BitMap:
        if offset < 0:
            return BitMap([-1 - offset])
        bm, _ = deserialize_at(self.data, self.body_start + offset, length)
        return bm

    def rows_of(self, key: Key) -> BitMap:
        loc = self.entries.get(key)
        if loc is None:
            return BitMap()
        return self._bitmap(*loc)

    def null_rows(self) -> BitMap:
        if not self.has_null or self.null_offset is None:
            return BitMap()
        return self._bitmap(self.null_offset, self.null_length)

    def all_rows(self) -> BitMap:
        bm = BitMap()
        if self.row_count:
            bm.add_range(0, self.row_count)
        return bm

    def equal_rows(self, lit: Literal) -> BitMap:
        """Rows that may equal ``lit`` (SQL/Arrow equality: 0.0 and -0.0 are equal, which Paimon's keys are not)."""
        if not lit.exact:
            return BitMap()
        rows = self.rows_of(lit.value)
        if isinstance(lit.value, int):
            if self.kind == FLOAT and lit.value & 0x7FFFFFFF == 0:
                rows |= self.rows_of(_wrap(lit.value ^ 0x80000000, 32))
            elif self.kind == DOUBLE and lit.value & ((1 << 63) - 1) == 0:
                rows |= self.rows_of(_wrap(lit.value ^ (1 << 63), 64))
        return rows


def _wrap(v: int, bits: int) -> int:
    half = 1 << (bits - 1)
    return ((v + half) % (1 << bits)) - half
