"""Deletion-vector index files, byte by byte (paimon-format.md section 7)."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest
from pyroaring import BitMap

from table_engine.errors import CorruptMetadataError
from table_engine.format.deletion_vector import (
    MAGIC_BITMAP32,
    MAGIC_BITMAP64,
    decode_deletion_vector,
    encode_deletion_vector,
    encode_dv_index,
    keep_mask,
    read_dv_index,
    write_dv_index,
)
from table_engine.format.index_manifest import (
    DELETION_VECTORS_INDEX,
    IndexFileMeta,
    IndexManifestEntry,
    read_index_manifest,
    write_index_manifest,
)
from table_engine.format.manifest import FileKind
from table_engine.io.file_io import LocalFileIO


def test_block_layout_is_size_magic_portable_bitmap_crc() -> None:
    bitmap = BitMap([3, 5, 50, 99])
    block = encode_deletion_vector(bitmap)
    (size,) = struct.unpack(">i", block[:4])
    assert size == len(block) - 8
    assert block[4:8] == bytes.fromhex("5e43f2d0") == struct.pack(">I", MAGIC_BITMAP32)
    assert block[8:10] == bytes.fromhex("3a30")  # portable RoaringBitmap, no run containers
    assert BitMap.deserialize(block[8:4 + size]) == bitmap
    (crc,) = struct.unpack(">I", block[4 + size:])
    assert crc == zlib.crc32(block[4:4 + size])
    assert decode_deletion_vector(block) == bitmap


def test_index_file_version_ranges_and_round_trip(tmp_path: object) -> None:
    fio = LocalFileIO()
    path = f"{tmp_path}/index-x-1"
    dvs = {"data-b.parquet": BitMap([0, 50, 99]), "data-a.parquet": BitMap([3, 5, 50, 99]),
           "data-empty.parquet": BitMap()}
    written = write_dv_index(fio, path, dvs)
    data = fio.read_bytes(path)
    assert data[0] == 1 and written.file_size == len(data)
    # sorted by data file name, the empty vector left out, first block at offset 1
    assert [r.data_file_name for r in written.ranges] == ["data-a.parquet", "data-b.parquet"]
    a, b = written.ranges
    assert (a.offset, a.cardinality) == (1, 4) and (b.offset, b.cardinality) == (1 + a.length + 8, 3)
    assert struct.unpack(">i", data[a.offset:a.offset + 4])[0] == a.length
    assert b.offset + b.length + 8 == len(data)
    assert read_dv_index(fio, path, written.ranges) == {"data-a.parquet": dvs["data-a.parquet"],
                                                        "data-b.parquet": dvs["data-b.parquet"]}
    # the index manifest carries the ranges as f0/f1/f2/_CARDINALITY
    meta = IndexFileMeta(DELETION_VECTORS_INDEX, "index-x-1", written.file_size, len(written.ranges), written.ranges)
    mpath = f"{tmp_path}/index-manifest-x"
    write_index_manifest(fio, mpath, [IndexManifestEntry(FileKind.ADD, b"\0" * 12, 0, meta)])
    (entry,) = read_index_manifest(fio, mpath)
    assert entry.index_file == meta
    assert entry.index_file.row_count == 2


def test_corruption_is_reported() -> None:
    block = bytearray(encode_deletion_vector(BitMap([1, 2, 3])))
    block[-1] ^= 0xFF
    with pytest.raises(CorruptMetadataError, match="CRC32"):
        decode_deletion_vector(bytes(block))
    bad_magic = struct.pack(">I", 42) + BitMap([1]).serialize()
    block2 = struct.pack(">i", len(bad_magic)) + bad_magic + struct.pack(">I", zlib.crc32(bad_magic))
    with pytest.raises(CorruptMetadataError, match="magic"):
        decode_deletion_vector(block2)


def test_version_and_range_checks(tmp_path: object) -> None:
    fio = LocalFileIO()
    path = f"{tmp_path}/dv"
    written = write_dv_index(fio, path, {"f": BitMap([7])})
    data = fio.read_bytes(path)
    fio.write_bytes(path, b"\x02" + data[1:], overwrite=True)
    with pytest.raises(CorruptMetadataError, match="version"):
        read_dv_index(fio, path, written.ranges)
    fio.write_bytes(path, data[:-2], overwrite=True)
    with pytest.raises(CorruptMetadataError, match="outside"):
        read_dv_index(fio, path, written.ranges)


def test_bitmap64_round_trip() -> None:
    bitmap = BitMap([0, 9, 1 << 20])
    block = encode_deletion_vector(bitmap, bitmap64=True)
    assert struct.unpack("<i", block[4:8])[0] == MAGIC_BITMAP64
    assert struct.unpack("<q", block[8:16])[0] == 1  # one 32-bit bitmap, high key 0
    assert decode_deletion_vector(block) == bitmap
    data, ranges = encode_dv_index({"f": bitmap}, bitmap64=True)
    assert data[0] == 1 and ranges[0].cardinality == 3


def test_keep_mask_is_vectorized_and_checked() -> None:
    mask = keep_mask(BitMap([0, 3]), 5)
    assert mask.tolist() == [False, True, True, False, True]
    assert keep_mask(BitMap(), 3).all()
    big = BitMap(range(0, 1_000_000, 3))
    assert int((~keep_mask(big, 1_000_000)).sum()) == len(big)
    with pytest.raises(CorruptMetadataError, match="has 3 rows"):
        keep_mask(BitMap([5]), 3)
    assert np.asarray(mask).dtype == np.bool_
