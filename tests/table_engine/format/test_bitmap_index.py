"""The bitmap global index reader against a model: files laid out as the bitmap global index layout describes
(written here by a small encoder of that layout; tests/interop/test_bitmap_global_index_interop.py reads files
pypaimon wrote), with keys of several types, row ids beyond 32 bits, many dictionary blocks and multi-byte
varints."""

from __future__ import annotations

import pathlib
import struct

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyroaring import BitMap64

from table_engine.errors import CorruptMetadataError, MissingFileError, UnsupportedError
from table_engine.format.bitmap_index import bitmap_lookup, bitmap_records, serialize_keys
from table_engine.io.file_io import LocalFileIO
from table_engine.types import DataType
from tests.budget import examples


def _varint(v: int) -> bytes:
    out = bytearray()
    while v & ~0x7F:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _records(entries: list[tuple[bytes, int, int]]) -> bytes:
    return _varint(len(entries)) + b"".join(_varint(len(k)) + k + _varint(o) + _varint(n) for k, o, n in entries)


def write_bitmap(path: pathlib.Path, keys: dict[bytes, list[int]], per_block: int, nulls: list[int] = (),
                 compression: int = 0) -> int:
    """A bitmap index file of ``keys`` (serialized, in the order to write) -> local row ids; its size."""
    out = bytearray()

    def bitmap(ids: list[int]) -> tuple[int, int]:
        data = BitMap64(ids).serialize()
        at = len(out)
        out.extend(data)
        return at, len(data)

    def block(data: bytes) -> tuple[int, int]:
        at = len(out)
        out.extend(data + bytes([compression]) + b"\0\0\0\0")
        return at, len(data)

    null_block = bitmap(list(nulls))
    non_null = bitmap(sorted({r for ids in keys.values() for r in ids}))
    entries = [(k, *bitmap(ids)) for k, ids in keys.items()]
    dictionary = []
    for i in range(0, len(entries), per_block):
        chunk = entries[i:i + per_block]
        dictionary.append((chunk[0][0], *block(_records(chunk))))
    index = block(_records(dictionary))
    out.extend(struct.pack(">qiqiqiiii", *null_block, *non_null, *index, len(keys), 1, 0x42474958))
    path.write_bytes(out)
    return len(out)


TYPES = {"TINYINT": (st.integers(-128, 127), pa.int8()), "SMALLINT": (st.integers(-2**15, 2**15 - 1), pa.int16()),
         "INT": (st.integers(-2**31, 2**31 - 1), pa.int32()), "BIGINT": (st.integers(-2**63, 2**63 - 1), pa.int64()),
         "VARCHAR": (st.text(max_size=12), pa.string())}


@settings(max_examples=examples(40), deadline=None)
@given(data=st.data())
def test_lookups_return_the_row_ids_of_the_keys_asked_for(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
                                                          ) -> None:
    """Any keys of any supported type, each with row ids (some past 2**32), in blocks of any size: a lookup of some
    keys (present, absent, null) returns exactly the union of their row ids."""
    root = data.draw(st.sampled_from(sorted(TYPES)))
    values, arrow = TYPES[root]
    keys = data.draw(st.lists(values, min_size=1, max_size=60, unique=True))
    rows = st.lists(st.one_of(st.integers(0, 5000), st.integers(2**32, 2**32 + 3)), min_size=1, max_size=20)
    model = {k: sorted(set(data.draw(rows))) for k in keys}
    dtype = DataType(root, length=2**31 - 1) if root == "VARCHAR" else DataType(root)
    serialized = serialize_keys(pa.array(keys, arrow), dtype).to_pylist()
    path = tmp_path_factory.mktemp("bm") / "bitmap-global-index-x.index"
    size = write_bitmap(path, dict(zip(serialized, model.values())), data.draw(st.integers(1, 70)), nulls=[7, 9])
    asked = data.draw(st.lists(st.one_of(st.sampled_from(keys), values, st.none()), max_size=8))
    got = bitmap_lookup(LocalFileIO(), str(path), size, dtype, pa.array(asked, arrow))
    want = sorted({r for k in asked if k in model for r in model[k]})
    assert got.row_ids.tolist() == want
    assert got.bitmaps_read == len({k for k in asked if k in model})


def test_bad_files_fail_naming_them(tmp_path: pathlib.Path) -> None:
    """A missing file, a file without the footer, a truncated dictionary and compressed blocks: one-line errors
    naming the file (compressed blocks: unsupported, the caller reads without the index)."""
    io, dtype = LocalFileIO(), DataType("BIGINT")
    path = tmp_path / "bitmap-global-index-a.index"
    with pytest.raises(MissingFileError, match="bitmap-global-index-a.index"):
        bitmap_lookup(io, str(path), 100, dtype, pa.array([1]))
    keys = {struct.pack("<q", k): [k, k + 1] for k in range(50)}
    size = write_bitmap(path, keys, 8)
    assert bitmap_lookup(io, str(path), size, dtype, pa.array([3, 49])).row_ids.tolist() == [3, 4, 49, 50]
    data = path.read_bytes()
    path.write_bytes(data[:-4] + b"\0\0\0\0")
    with pytest.raises(CorruptMetadataError, match=r"bitmap index .*bitmap-global-index-a.index: no bitmap footer"):
        bitmap_lookup(io, str(path), size, dtype, pa.array([3]))
    index_offset, index_size = struct.unpack_from(">qi", data, size - 48 + 24)
    path.write_bytes(data[:index_offset] + b"\x7f" + data[index_offset + 1:])  # 127 dictionary blocks
    with pytest.raises(CorruptMetadataError, match="bitmap-global-index-a.index: .* records do not fit"):
        bitmap_lookup(io, str(path), size, dtype, pa.array([3]))
    size = write_bitmap(path, keys, 8, compression=1)
    with pytest.raises(UnsupportedError, match="bitmap-global-index-a.index: compressed blocks"):
        bitmap_lookup(io, str(path), size, dtype, pa.array([3]))


@settings(max_examples=examples(150), deadline=None)
@given(entries=st.lists(st.tuples(st.binary(max_size=200), st.integers(0, 2**62), st.integers(0, 2**31 - 1)),
                        max_size=30), cut=st.integers(0, 40), flip=st.integers(0, 10_000))
def test_records_decode_any_block_and_reject_damaged_ones(entries: list[tuple[bytes, int, int]], cut: int,
                                                          flip: int) -> None:
    """A block of any records decodes to them; a truncated one fails naming the block; a byte-flipped one decodes to
    some records or fails with CorruptMetadataError (never another error)."""
    data = _records(entries)
    got = bitmap_records(data, "x")
    assert list(zip(got.keys.to_pylist(), got.offsets.tolist(), got.lengths.tolist())) == entries
    if entries:
        with pytest.raises(CorruptMetadataError, match="x: .* records do not fit"):
            bitmap_records(data[:max(1, len(data) - 1 - cut)], "x")
    at = flip % len(data)
    for bad in (data[:at] + bytes([~data[at] & 0xFF]) + data[at + 1:],):
        try:
            bitmap_records(bad, "x")
        except CorruptMetadataError:
            pass
