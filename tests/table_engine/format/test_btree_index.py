"""The BTree global index reader against a model: files laid out as Paimon's SST layout describes (written here by a
small encoder of that layout; tests/interop/test_global_index_interop.py reads files pypaimon wrote), with keys of
several types, repeated keys, row ids of multi-byte varints, aligned and unaligned blocks and many blocks."""

from __future__ import annotations

import pathlib
import struct
from collections import defaultdict

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.errors import CorruptMetadataError, MissingFileError, UnsupportedError
from table_engine.format.btree_index import btree_key_supported, btree_lookup
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


def _block(entries: list[tuple[bytes, bytes]]) -> bytes:
    body = bytearray()
    starts = []
    for k, v in entries:
        starts.append(len(body))
        body += _varint(len(k)) + k + _varint(len(v)) + v
    sizes = {b - a for a, b in zip(starts, [*starts[1:], len(body)])}
    if len(sizes) == 1:
        return bytes(body) + struct.pack("<I", sizes.pop()) + b"\0"
    return bytes(body) + b"".join(struct.pack("<I", s) for s in starts) + struct.pack("<I", len(starts)) + b"\1"


def write_btree(path: pathlib.Path, keys: dict[bytes, list[int]], per_block: int, compression: int = 0) -> int:
    """A BTree file of ``keys`` (serialized, in the order to write) -> local row ids; its size."""
    out = bytearray()
    index = []
    items = list(keys.items())
    for i in range(0, len(items), per_block):
        chunk = items[i:i + per_block]
        block = _block([(k, _varint(len(ids)) + b"".join(_varint(r) for r in ids)) for k, ids in chunk])
        index.append((chunk[-1][0], _varint(len(out)) + _varint(len(block))))
        out += block + bytes([compression]) + b"\0\0\0\0"
    block = _block(index)
    index_at = len(out)
    out += block + b"\0\0\0\0\0"
    out += struct.pack("<QIQ", 0, 0, 0) + struct.pack("<QI", index_at, len(block)) + struct.pack("<QI", 0, 0)
    out += struct.pack("<I", 1) + struct.pack("<I", 0x50425449)
    path.write_bytes(bytes(out))
    return len(out)


TYPES = {"BIGINT": ("<q", st.integers(-2**63, 2**63 - 1)), "INT": ("<i", st.integers(-2**31, 2**31 - 1)),
         "SMALLINT": ("<h", st.integers(-2**15, 2**15 - 1)), "TINYINT": ("<b", st.integers(-128, 127)),
         "VARCHAR": ("utf8", st.text(max_size=6))}


@st.composite
def index_cases(draw: st.DrawFn) -> tuple[str, dict[object, list[int]], list[object], int]:
    root = draw(st.sampled_from(sorted(TYPES)))
    values = TYPES[root][1]
    keys = draw(st.dictionaries(values, st.lists(st.integers(0, 2**40), min_size=1, max_size=4, unique=True),
                                min_size=1, max_size=40))
    asked = draw(st.lists(st.one_of(st.sampled_from(sorted(keys, key=repr)), values), max_size=6))
    return root, keys, asked, draw(st.integers(1, 7))


def _serialize(root: str, key: object) -> bytes:
    fmt = TYPES[root][0]
    return str(key).encode() if fmt == "utf8" else struct.pack(fmt, key)


@settings(max_examples=examples(60), deadline=None)
@given(index_cases())
def test_lookups_return_the_row_ids_of_the_keys_asked_for(
        tmp_path_factory: pytest.TempPathFactory, case: tuple[str, dict[object, list[int]], list[object], int]) -> None:
    root, keys, asked, per_block = case
    path = tmp_path_factory.mktemp("btree") / "btree-global-index-x.index"
    ordered = sorted(keys, key=lambda k: _serialize(root, k) if root == "VARCHAR" else k)
    size = write_btree(path, {_serialize(root, k): sorted(keys[k]) for k in ordered}, per_block)
    data_type = DataType(root, length=10 if root == "VARCHAR" else None)
    arrow = pa.string() if root == "VARCHAR" else pa.int64()
    got = btree_lookup(LocalFileIO(), str(path), size, data_type, pa.array([*asked, None], arrow))
    want = sorted({r for k in set(asked) if k in keys for r in keys[k]})
    assert got.row_ids.tolist() == want
    blocks = -(-len(keys) // per_block)
    assert got.blocks_read <= min(blocks, len(set(asked)))


def test_compressed_missing_and_damaged_files(tmp_path: pathlib.Path) -> None:
    io = LocalFileIO()
    keys = defaultdict(list, {struct.pack("<q", k): [k] for k in range(10)})
    path = tmp_path / "a.index"
    size = write_btree(path, keys, 3, compression=1)
    with pytest.raises(UnsupportedError, match="compressed blocks"):
        btree_lookup(io, str(path), size, DataType("BIGINT"), pa.array([4]))
    assert btree_lookup(io, str(path), size, DataType("BIGINT"), pa.array([99])).row_ids.tolist() == []
    with pytest.raises(MissingFileError, match="global index file .*b.index, which does not exist"):
        btree_lookup(io, str(tmp_path / "b.index"), size, DataType("BIGINT"), pa.array([4]))
    path.write_bytes(b"x" * 20)
    with pytest.raises(CorruptMetadataError, match="shorter than its footer"):
        btree_lookup(io, str(path), 20, DataType("BIGINT"), pa.array([4]))
    assert not btree_key_supported(DataType("DOUBLE")) and btree_key_supported(DataType("VARCHAR", length=3))
    with pytest.raises(UnsupportedError, match="keys of type"):
        btree_lookup(io, str(path), 20, DataType("DOUBLE"), pa.array([4.0]))
