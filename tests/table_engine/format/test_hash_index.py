"""Dynamic-bucket HASH index files."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from table_engine.errors import CorruptMetadataError
from table_engine.format.hash_index import encode_hash_index, read_hash_index, write_hash_index
from table_engine.io.file_io import LocalFileIO
from tests.budget import examples

INDEX = Path(__file__).parent / "fixtures" / "pypaimon" / "dyn" / "index"
PYPAIMON_4 = INDEX / "index-1421b01a-45c1-4a31-992c-e36ae8d3350b-0"  # keys 1..4 of a BIGINT primary key
PYPAIMON_3 = INDEX / "index-8669ad11-e3b6-4931-816a-9511843d8f51-0"  # keys 1..3


def test_reads_pypaimon_hash_index() -> None:
    fio = LocalFileIO()
    got = read_hash_index(fio, str(PYPAIMON_4))
    assert got.dtype == np.int32 and got.dtype.isnative
    assert got.tolist() == [-771300025, 1340390384, 1447522506, 1465514398]
    assert read_hash_index(fio, str(PYPAIMON_3)).tolist() == [-771300025, 1340390384, 1465514398]


def test_encoding_is_byte_identical_to_pypaimon() -> None:
    # pypaimon writes the distinct hashes sorted ascending (signed), big-endian
    shuffled = np.array([1465514398, -771300025, 1447522506, 1340390384, 1447522506], dtype=np.int64)
    assert encode_hash_index(shuffled) == PYPAIMON_4.read_bytes()


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.integers(min_value=-(2**31), max_value=2**31 - 1), max_size=200))
def test_round_trip(tmp_path_factory: pytest.TempPathFactory, hashes: list[int]) -> None:
    fio = LocalFileIO()
    path = str(tmp_path_factory.mktemp("h") / "index-x-0")
    size = write_hash_index(fio, path, np.array(hashes, dtype=np.int32))
    expected = sorted(set(hashes))
    assert size == 4 * len(expected) == fio.file_size(path)
    assert read_hash_index(fio, path).tolist() == expected


def test_empty(tmp_path: Path) -> None:
    fio = LocalFileIO()
    assert write_hash_index(fio, str(tmp_path / "e"), np.array([], dtype=np.int32)) == 0
    assert read_hash_index(fio, str(tmp_path / "e")).size == 0
    assert encode_hash_index([]) == b""


def test_rejects_values_outside_int32_and_non_integers() -> None:
    with pytest.raises(ValueError, match="int32"):
        encode_hash_index(np.array([2**31], dtype=np.int64))
    with pytest.raises(ValueError, match="integers"):
        encode_hash_index(np.array([1.5]))


def test_truncated_file_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "index-bad-0"
    path.write_bytes(PYPAIMON_4.read_bytes()[:-1])
    with pytest.raises(CorruptMetadataError, match="index-bad-0"):
        read_hash_index(LocalFileIO(), str(path))


def test_million_hashes_is_vectorized(tmp_path: Path) -> None:
    fio = LocalFileIO()
    hashes = np.random.default_rng(7).integers(-(2**31), 2**31, size=1_000_000, dtype=np.int64).astype(np.int32)
    start = time.perf_counter()
    size = write_hash_index(fio, str(tmp_path / "big"), hashes)
    got = read_hash_index(fio, str(tmp_path / "big"))
    assert time.perf_counter() - start < 1.5
    assert size == 4 * got.size
    assert np.array_equal(got, np.array(sorted(set(hashes.tolist())), dtype=np.int32))
