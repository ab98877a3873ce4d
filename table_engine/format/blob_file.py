"""Paimon's ``.blob`` files (BLOB columns, Paimon 1.4) and the ``BlobDescriptor`` that points into them.

A ``.blob`` file holds the values of one BLOB column of a data-evolution table, one record per row::

    record   = magic (u32 LE 1481511375) | bytes of the value | record length (u64 LE) | CRC-32 (u32 LE)
    file     = record ... | index | index length (u32 LE) | version (u8, 1)
    index    = the record lengths, delta- then zigzag-varint-encoded (-1: null, -2: placeholder, no record)

The record length counts the whole record (value + 16 bytes); the CRC-32 covers magic, value and length. A
:class:`BlobDescriptor` (``uri``, ``offset``, ``length``) names one value inside such a file (version 2 serialized
form: version u8, magic u64 ``BLOBDESC``, uri length i32, uri bytes, offset i64, length i64, little endian; version 1
has no magic). Only single BLOB values are handled here: ``ARRAY<BLOB>`` and ``MAP<K, BLOB>`` records (their own
magic numbers inside a record) are refused with a :class:`~table_engine.errors.CorruptMetadataError`.

Reading is vectorized: the index is decoded with numpy, the records are one zero-copy Arrow ``large_binary`` array
over the file's bytes, and ``binary_slice`` cuts the values out. :func:`blob_descriptors` reads only the index (a lazy
read: the values stay in the file until :func:`read_blob` fetches one).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_engine.errors import CorruptMetadataError, DataError, UnsupportedError
from table_engine.io.file_io import FileIO

__all__ = [
    "BLOB_DESCRIPTOR_MAGIC",
    "BLOB_FILE_SUFFIX",
    "BLOB_MAGIC",
    "BlobDescriptor",
    "BlobIndex",
    "blob_descriptors",
    "blob_file_cuts",
    "decode_delta_varints",
    "encode_blob_records",
    "encode_delta_varints",
    "read_blob",
    "read_blob_file",
    "read_blob_index",
    "resolve_blob_descriptors",
    "write_blob_file",
    "write_blob_records",
]

BLOB_FILE_SUFFIX = ".blob"
"""The name suffix of a ``.blob`` file."""
BLOB_MAGIC = 1481511375
BLOB_FILE_VERSION = 1
BLOB_DESCRIPTOR_MAGIC = 0x424C4F4244455343  # "BLOBDESC"
BLOB_DESCRIPTOR_VERSION = 2
NULL_LENGTH = -1
PLACEHOLDER_LENGTH = -2
_HEAD = 4  # magic
_TAIL = 12  # record length + CRC-32
_ARRAY_MAGIC = 1094861634
_MAP_MAGIC = 0x4D424342


# ---- delta varints -------------------------------------------------------------------------------------------------

def encode_delta_varints(values: Sequence[int] | np.ndarray) -> bytes:
    """Paimon's ``DeltaVarintCompressor``: the first value, then each difference, as zigzag varints (vectorized
    with numpy: one pass per varint byte position, at most ten)."""
    v = np.asarray(values, dtype=np.int64)
    if v.size == 0:
        return b""
    deltas = np.diff(v, prepend=np.int64(0))
    z = ((deltas << 1) ^ (deltas >> 63)).astype(np.uint64)
    counts = np.ones(v.size, np.int64)
    rest = z >> np.uint64(7)
    while rest.any():
        counts += rest > 0
        rest >>= np.uint64(7)
    ends = np.cumsum(counts)
    out = np.empty(int(ends[-1]), np.uint8)
    starts = ends - counts
    for k in range(int(counts.max())):
        has = counts > k
        byte = (z[has] >> np.uint64(7 * k)) & np.uint64(0x7F)
        more = (counts[has] > k + 1).astype(np.uint64) << np.uint64(7)
        out[starts[has] + k] = (byte | more).astype(np.uint8)
    return out.tobytes()


def decode_delta_varints(data: bytes, path: str) -> np.ndarray:
    """The int64 values of :func:`encode_delta_varints` output (vectorized with numpy)."""
    if not data:
        return np.zeros(0, np.int64)
    b = np.frombuffer(data, np.uint8)
    ends = np.flatnonzero(b < 0x80)
    if ends.size == 0 or ends[-1] != b.size - 1:
        raise CorruptMetadataError(f"blob file {path}: truncated index")
    starts = np.concatenate(([0], ends[:-1] + 1))
    group = np.repeat(np.arange(ends.size), ends - starts + 1)
    shift = (np.arange(b.size) - starts[group]) * 7
    if shift.max() > 63:
        raise CorruptMetadataError(f"blob file {path}: index varint overflow")
    z = np.add.reduceat((b & 0x7F).astype(np.uint64) << shift.astype(np.uint64), starts)
    deltas = np.where(z & 1, -((z + 1) >> 1).astype(np.int64), (z >> 1).astype(np.int64))
    return np.cumsum(deltas)


# ---- descriptors ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BlobDescriptor:
    """One BLOB value inside a file: ``length`` bytes at ``offset`` of ``uri``."""

    uri: str
    offset: int
    length: int
    version: int = BLOB_DESCRIPTOR_VERSION

    def serialize(self) -> bytes:
        """The version-2 serialized form (what Paimon stores in a data file for ``blob-as-descriptor``)."""
        uri = self.uri.encode("utf-8")
        return (struct.pack("<BQi", BLOB_DESCRIPTOR_VERSION, BLOB_DESCRIPTOR_MAGIC, len(uri)) + uri
                + struct.pack("<qq", self.offset, self.length))

    @staticmethod
    def is_descriptor(data: bytes) -> bool:
        """Whether ``data`` starts like a version-2 descriptor (Paimon detects only version 2 by its magic)."""
        return len(data) >= 9 and data[0] == BLOB_DESCRIPTOR_VERSION and struct.unpack_from(
            "<Q", data, 1)[0] == BLOB_DESCRIPTOR_MAGIC

    @staticmethod
    def parse(data: bytes) -> BlobDescriptor:
        """A serialized descriptor (version 1 or 2); a :class:`DataError` names what is wrong."""
        try:
            version = data[0]
            pos = 1
            if not 1 <= version <= BLOB_DESCRIPTOR_VERSION:
                raise DataError(f"blob descriptor version {version} is not 1 or 2")
            if version > 1:
                if struct.unpack_from("<Q", data, pos)[0] != BLOB_DESCRIPTOR_MAGIC:
                    raise DataError("blob descriptor misses its BLOBDESC magic")
                pos += 8
            (uri_length,) = struct.unpack_from("<i", data, pos)
            pos += 4
            if uri_length < 0 or pos + uri_length + 16 != len(data):
                raise DataError(f"blob descriptor of {len(data)} bytes has a bad uri length {uri_length}")
            uri = data[pos:pos + uri_length].decode("utf-8")
            offset, length = struct.unpack_from("<qq", data, pos + uri_length)
        except (IndexError, struct.error, UnicodeDecodeError) as e:
            raise DataError(f"bad blob descriptor ({len(data)} bytes): {e}") from None
        return BlobDescriptor(uri, offset, length, version)


# ---- files ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BlobIndex:
    """The index of a ``.blob`` file: per row the record length (-1 null, -2 placeholder) and start (-1 if none)."""

    lengths: np.ndarray
    offsets: np.ndarray

    @property
    def row_count(self) -> int:
        """The number of rows of the file."""
        return int(self.lengths.size)


def _index_of(tail: bytes, size: int, path: str) -> tuple[BlobIndex, int]:
    """The index of a ``.blob`` file of ``size`` bytes from its last bytes ``tail`` (at least its index, index length
    and version), checked against the file size; and where its records end."""
    if size < 5 or len(tail) < 5:
        raise CorruptMetadataError(f"blob file {path}: {size} bytes is too short")
    index_length, version = struct.unpack_from("<IB", tail, len(tail) - 5)
    if version != BLOB_FILE_VERSION:
        raise CorruptMetadataError(f"blob file {path}: version {version} is not {BLOB_FILE_VERSION}")
    if index_length + 5 > len(tail):
        raise CorruptMetadataError(f"blob file {path}: index length {index_length} exceeds the file")
    lengths = decode_delta_varints(tail[len(tail) - 5 - index_length:len(tail) - 5], path)
    present = lengths >= 0
    if np.any(present & (lengths < _HEAD + _TAIL)) or np.any(lengths < PLACEHOLDER_LENGTH):
        raise CorruptMetadataError(f"blob file {path}: bad record length in its index")
    sizes = np.where(present, lengths, 0)
    ends = np.cumsum(sizes)
    offsets = np.where(present, ends - sizes, -1)
    records_end = int(ends[-1]) if ends.size else 0
    if records_end != size - 5 - index_length:
        raise CorruptMetadataError(f"blob file {path}: records end at {records_end}, the index starts at "
                                   f"{size - 5 - index_length}")
    return BlobIndex(lengths, offsets), records_end


def read_blob_index(file_io: FileIO, path: str) -> BlobIndex:
    """The index of a ``.blob`` file, reading only its tail."""
    size = file_io.file_size(path)
    if size < 5:
        raise CorruptMetadataError(f"blob file {path}: {size} bytes is too short")
    with file_io.open_input(path) as f:
        f.seek(size - 5)
        index_length = struct.unpack_from("<I", f.read(5))[0]
        f.seek(max(size - 5 - index_length, 0))
        tail = f.read()
    return _index_of(tail, size, path)[0]


def blob_descriptors(file_io: FileIO, path: str, uri: str | None = None) -> list[BlobDescriptor | None]:
    """One descriptor per row of a ``.blob`` file (None for a null or placeholder row), reading only the index:
    the values stay in the file (``uri``: how the descriptors name it, ``path`` by default)."""
    index = read_blob_index(file_io, path)
    name = path if uri is None else uri
    return [BlobDescriptor(name, int(o) + _HEAD, int(n) - _HEAD - _TAIL) if n >= 0 else None
            for o, n in zip(index.offsets.tolist(), index.lengths.tolist(), strict=True)]


def read_blob(file_io: FileIO, descriptor: BlobDescriptor) -> bytes:
    """The bytes one descriptor names (only that range is read)."""
    with file_io.open_input(descriptor.uri) as f:
        f.seek(descriptor.offset)
        data = f.read(descriptor.length)
    if len(data) != descriptor.length:
        raise CorruptMetadataError(f"blob file {descriptor.uri}: {descriptor.length} bytes at {descriptor.offset} "
                                   f"are past its end")
    return bytes(data)


def read_blob_file(file_io: FileIO, path: str, *, verify: bool = False, placeholders: bool = True
                   ) -> pa.LargeBinaryArray:
    """All values of a ``.blob`` file as ``large_binary`` (nulls for null and placeholder rows). ``verify`` checks
    every record's magic, length and CRC-32. ``placeholders=False`` refuses a file with placeholder rows (the delta
    file of an update of a BLOB column, whose placeholders mean "the older value") with an UnsupportedError."""
    data = file_io.read_bytes(path)
    index, records_end = _index_of(data, len(data), path)
    if not placeholders and np.any(index.lengths == PLACEHOLDER_LENGTH):
        raise UnsupportedError(f"blob file {path} has placeholder rows (a delta of a BLOB column updated by row id): "
                               f"not read")
    present = index.lengths >= 0
    ends = np.cumsum(np.where(present, index.lengths, 0))
    value_offsets = np.concatenate(([0], ends)).astype(np.int64)
    validity = pa.array(present).buffers()[1] if not present.all() else None
    records = pa.LargeBinaryArray.from_buffers(pa.large_binary(), index.row_count,
                                               [validity, pa.py_buffer(value_offsets),
                                                pa.py_buffer(data[:records_end])])
    magic = struct.pack("<I", BLOB_MAGIC)
    heads = pc.binary_slice(records, 0, _HEAD)
    if pc.any(pc.not_equal(heads, pa.scalar(magic, pa.large_binary()))).as_py():
        raise CorruptMetadataError(f"blob file {path}: a record misses the blob magic number")
    values = pc.binary_slice(records, _HEAD, -_TAIL)
    nested = pc.binary_slice(values, 0, 4)
    if pc.any(pc.is_in(nested, pa.array([struct.pack("<I", _ARRAY_MAGIC), struct.pack("<I", _MAP_MAGIC)],
                                        pa.large_binary()))).as_py():
        raise CorruptMetadataError(f"blob file {path}: ARRAY<BLOB> and MAP<K, BLOB> records are not supported")
    if verify:
        _verify(data, index, path)
    return values


def _verify(data: bytes, index: BlobIndex, path: str) -> None:
    view = memoryview(data)
    for start, length in zip(index.offsets.tolist(), index.lengths.tolist(), strict=True):
        if length < 0:
            continue
        end = start + length
        (stored_length,) = struct.unpack_from("<Q", view, end - _TAIL)
        (crc,) = struct.unpack_from("<I", view, end - 4)
        if stored_length != length or zlib.crc32(view[start:end - 4]) != crc:
            raise CorruptMetadataError(f"blob file {path}: the record at byte {start} fails its length or CRC check")


def encode_blob_records(values: pa.Array | pa.ChunkedArray) -> tuple[pa.LargeBinaryArray, np.ndarray]:
    """The records of binary ``values`` (nulls allowed) as one ``large_binary`` array whose data buffer is the
    records section of a ``.blob`` file, and the index lengths (record length, -1 for a null). The records are
    joined by Arrow (``binary_join_element_wise``); the CRC-32 of each record is one ``zlib.crc32`` call over a slice
    of that buffer (neither Arrow nor the standard library has a vectorized CRC-32)."""
    col = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    if not (pa.types.is_binary(col.type) or pa.types.is_large_binary(col.type)):
        raise DataError(f"a BLOB column holds binary values, not {col.type}")
    col = col.cast(pa.large_binary())
    n = len(col)
    present = np.asarray(col.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    sizes = np.asarray(pc.binary_length(col).fill_null(0).to_numpy(), dtype=np.int64)
    lengths = np.where(present, sizes + _HEAD + _TAIL, NULL_LENGTH).astype(np.int64)
    magic = pa.scalar(struct.pack("<I", BLOB_MAGIC), pa.large_binary())
    empty = pa.scalar(b"", pa.large_binary())
    length_bytes = _fixed_bytes(lengths.astype("<u8").view(np.uint8), 8, n)
    heads = pc.binary_join_element_wise(magic, col, length_bytes, empty)
    bounds = np.frombuffer(heads.buffers()[1], np.int64, n + 1, heads.offset * 8).tolist()
    data = memoryview(heads.buffers()[2]) if n and heads.buffers()[2] is not None else memoryview(b"")
    crc32 = zlib.crc32
    # the one per-value step the format forces (a null row's empty slice gives 0, and its record stays null)
    crcs = np.array([crc32(data[a:b]) for a, b in zip(bounds, bounds[1:])], "<u4")
    records = pc.binary_join_element_wise(heads, _fixed_bytes(crcs.view(np.uint8), 4, n), empty)
    assert isinstance(records, pa.LargeBinaryArray)
    return records, lengths


def _fixed_bytes(data: np.ndarray, width: int, n: int) -> pa.Array:
    """``n`` values of ``width`` bytes each (``data``: their concatenation) as ``large_binary``."""
    return pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), n, [None, pa.py_buffer(data.tobytes())]) \
        .cast(pa.large_binary())


def blob_file_cuts(lengths: np.ndarray, target_size: int, max_rows: int | None = None) -> list[tuple[int, int]]:
    """Where a writer rolls ``.blob`` files (rows ``[start, stop)`` per file), as Paimon's ``BlobWriter``: after a
    row, once the file's records reach ``target_size`` bytes (or it holds ``max_rows`` rows). ``lengths``: the
    index lengths of :func:`encode_blob_records` (nulls take no bytes). One search per file, not per row."""
    n = int(lengths.size)
    cum = np.cumsum(np.where(lengths > 0, lengths, 0))
    cuts = []
    start = 0
    while start < n:
        before = int(cum[start - 1]) if start else 0
        stop = int(np.searchsorted(cum, before + target_size, side="left")) + 1
        if max_rows is not None:
            stop = min(stop, start + max_rows)
        stop = min(max(stop, start + 1), n)
        cuts.append((start, stop))
        start = stop
    return cuts


def write_blob_records(file_io: FileIO, path: str, records: pa.LargeBinaryArray, lengths: np.ndarray) -> int:
    """Write records of :func:`encode_blob_records` (or a slice of them) as one ``.blob`` file; returns its size."""
    index = encode_delta_varints(lengths)
    offsets = np.frombuffer(records.buffers()[1], np.int64, len(records) + 1, records.offset * 8)
    data = records.buffers()[2]
    with file_io.open_output(path) as out:
        if data is not None and offsets[-1] > offsets[0]:
            out.write(memoryview(data)[int(offsets[0]):int(offsets[-1])])
        out.write(index)
        out.write(struct.pack("<IB", len(index), BLOB_FILE_VERSION))
    return file_io.file_size(path)


def write_blob_file(file_io: FileIO, path: str, values: pa.Array | pa.ChunkedArray) -> int:
    """Write binary ``values`` (nulls allowed) as one ``.blob`` file; returns its size."""
    records, lengths = encode_blob_records(values)
    return write_blob_records(file_io, path, records, lengths)


def resolve_blob_descriptors(file_io: FileIO, values: pa.Array | pa.ChunkedArray) -> pa.LargeBinaryArray:
    """``values`` with every serialized version-2 :class:`BlobDescriptor` replaced by the bytes it names (read
    through ``file_io``), as pypaimon's blob writer takes a descriptor for the value it points to. Rows are found
    vectorized (their first 9 bytes); only descriptor rows are parsed, one read each."""
    col = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    col = col.cast(pa.large_binary())
    prefix = struct.pack("<BQ", BLOB_DESCRIPTOR_VERSION, BLOB_DESCRIPTOR_MAGIC)
    hits = pc.equal(pc.binary_slice(col, 0, len(prefix)), pa.scalar(prefix, pa.large_binary())).fill_null(False)
    rows = np.flatnonzero(hits.to_numpy(zero_copy_only=False))
    if rows.size == 0:
        assert isinstance(col, pa.LargeBinaryArray)
        return col
    fetched = [_described(file_io, BlobDescriptor.parse(col[int(i)].as_py())) for i in rows.tolist()]
    take = np.arange(len(col), dtype=np.int64)
    take[rows] = len(col) + np.arange(rows.size)
    out = pc.take(pa.concat_arrays([col, pa.array(fetched, pa.large_binary())]), pa.array(take))
    assert isinstance(out, pa.LargeBinaryArray)
    return out


def _described(file_io: FileIO, descriptor: BlobDescriptor) -> bytes:
    try:
        return read_blob(file_io, descriptor)
    except (OSError, CorruptMetadataError) as e:
        raise DataError(f"a BLOB value is a blob descriptor of {descriptor.length} bytes at {descriptor.offset} of "
                        f"{descriptor.uri} that cannot be read: {type(e).__name__}: {e}") from None
