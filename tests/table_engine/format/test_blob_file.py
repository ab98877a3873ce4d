"""Paimon's ``.blob`` files and ``BlobDescriptor`` (format layer of BLOB columns, issue 23, ADR 0018)."""

from __future__ import annotations

import pathlib
import struct

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.errors import CorruptMetadataError, DataError, UnsupportedError
from table_engine.format.blob_file import (
    BLOB_DESCRIPTOR_MAGIC,
    BlobDescriptor,
    blob_descriptors,
    blob_file_cuts,
    decode_delta_varints,
    encode_blob_records,
    encode_delta_varints,
    read_blob,
    read_blob_file,
    read_blob_index,
    resolve_blob_descriptors,
    write_blob_file,
    write_blob_records,
)
from table_engine.io.file_io import LocalFileIO
from tests.budget import examples

IO = LocalFileIO()


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.integers(-2, 2**40)))
def test_delta_varints_round_trip(values: list[int]) -> None:
    assert decode_delta_varints(encode_delta_varints(values), "x").tolist() == values


def test_delta_varints_match_paimon_bytes() -> None:
    # first value 40 -> zigzag 80; delta -41 -> 81; delta 300 -> 600 = 0xD8 0x04
    assert encode_delta_varints([40, -1, 299]) == bytes([80, 81, 0xD8, 0x04])


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.one_of(st.none(), st.binary(max_size=300)), max_size=20))
def test_write_read_round_trip(tmp_path_factory: pytest.TempPathFactory, values: list[bytes | None]) -> None:
    path = str(tmp_path_factory.mktemp("blob") / "data-1.blob")
    size = write_blob_file(IO, path, pa.array(values, pa.binary()))
    assert size == pathlib.Path(path).stat().st_size
    got = read_blob_file(IO, path, verify=True)
    assert got.type == pa.large_binary() and got.to_pylist() == values
    descriptors = blob_descriptors(IO, path)
    assert [None if d is None else read_blob(IO, d) for d in descriptors] == values
    assert read_blob_index(IO, path).row_count == len(values)


def test_descriptor_serialization_v2_and_v1() -> None:
    d = BlobDescriptor("file:///w/db.db/t/bucket-0/data-1.blob", 4, 100)
    data = d.serialize()
    assert data[0] == 2 and struct.unpack_from("<Q", data, 1)[0] == BLOB_DESCRIPTOR_MAGIC
    assert BlobDescriptor.is_descriptor(data) and BlobDescriptor.parse(data) == d
    v1 = b"\x01" + data[9:]
    assert not BlobDescriptor.is_descriptor(v1)
    assert BlobDescriptor.parse(v1) == BlobDescriptor(d.uri, 4, 100, version=1)
    for bad in (b"", b"\x03" + data[1:], data[:-1], b"\x02" + b"\x00" * 8 + data[9:]):
        with pytest.raises(DataError, match="blob descriptor"):
            BlobDescriptor.parse(bad)


def test_corrupt_files_are_named(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "data-1.blob"
    write_blob_file(IO, str(path), pa.array([b"abc", None, b"defg"]))
    good = path.read_bytes()
    cases = {
        "version": good[:-1] + b"\x02",
        "too short": b"\x01",
        "records end": good[:2] + good[3:],
        "magic": b"\x00" + good[1:],
    }
    for what, data in cases.items():
        path.write_bytes(data)
        with pytest.raises(CorruptMetadataError, match=f"blob file {path}: .*{what}"):
            read_blob_file(IO, str(path))
    flipped = bytearray(good)
    flipped[5] ^= 0xFF  # a value byte: only the CRC sees it
    path.write_bytes(bytes(flipped))
    assert read_blob_file(IO, str(path)).to_pylist()[0] != b"abc"
    with pytest.raises(CorruptMetadataError, match="CRC"):
        read_blob_file(IO, str(path), verify=True)
    with pytest.raises(DataError, match="binary values"):
        write_blob_file(IO, str(path), pa.array([1]))


def test_roll_cuts_as_paimon_blob_writer() -> None:
    """A file rolls after the value whose record reaches the target (nulls take no bytes): pypaimon 2.1.0 writes
    five 40 kB values at 64 kb as files of 2 and 3 rows when the third is null, of 2, 2 and 1 rows otherwise."""
    values = [b"x" * 40_000] * 5
    lengths = encode_blob_records(pa.array(values[:2] + [None] + values[3:], pa.large_binary()))[1]
    assert blob_file_cuts(lengths, 64 * 1024) == [(0, 2), (2, 5)]
    lengths = encode_blob_records(pa.array(values, pa.large_binary()))[1]
    assert blob_file_cuts(lengths, 64 * 1024) == [(0, 2), (2, 4), (4, 5)]
    assert blob_file_cuts(lengths, 1) == [(i, i + 1) for i in range(5)]
    assert blob_file_cuts(lengths, 1 << 40) == [(0, 5)]
    assert blob_file_cuts(lengths[:0], 10) == []


def test_records_slices_are_files_and_descriptors_resolve(tmp_path: pathlib.Path) -> None:
    values = pa.array([b"a" * 10, None, b"", b"bcd"], pa.large_binary())
    records, lengths = encode_blob_records(values)
    path = str(tmp_path / "data-0.blob")
    write_blob_records(IO, path, records.slice(1, 3), lengths[1:])
    assert read_blob_file(IO, path, verify=True).to_pylist() == values.to_pylist()[1:]
    source = tmp_path / "source.bin"
    source.write_bytes(b"..payload..")
    described = pa.array([b"plain", BlobDescriptor(str(source), 2, 7).serialize(), None], pa.binary())
    assert resolve_blob_descriptors(IO, described).to_pylist() == [b"plain", b"payload", None]
    with pytest.raises(DataError, match="binary values, not int64"):
        encode_blob_records(pa.array([1], pa.int64()))


def test_placeholder_rows_can_be_refused(tmp_path: pathlib.Path) -> None:
    """A placeholder row (index length -2, no record: an update's delta file) reads as null, or is refused where a
    null would be a misread (the table reader)."""
    path = tmp_path / "data-delta.blob"
    write_blob_file(IO, str(path), pa.array([b"a"], pa.large_binary()))
    raw = path.read_bytes()
    (index_length,) = struct.unpack_from("<I", raw, len(raw) - 5)
    records = raw[:len(raw) - 5 - index_length]
    index = encode_delta_varints([len(records), -2])
    path.write_bytes(records + index + struct.pack("<IB", len(index), 1))
    assert read_blob_file(IO, str(path)).to_pylist() == [b"a", None]
    with pytest.raises(UnsupportedError, match="placeholder rows"):
        read_blob_file(IO, str(path), placeholders=False)
