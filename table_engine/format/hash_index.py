"""Dynamic-bucket HASH index files (``index/index-<uuid>-<n>``, index type ``HASH``).

A HASH index file lists the key hashes assigned to one (partition, bucket): a bare sequence of big-endian int32
values, no header. We write them **sorted ascending (signed) and without duplicates**, as pypaimon 2.1.0 does
(Java writes its hash-set iteration order, so readers must not rely on the order). The entry's ``row_count`` is
the number of hashes, i.e. ``file_size // 4``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from table_engine.errors import CorruptMetadataError
from table_engine.io.file_io import FileIO

__all__ = ["encode_hash_index", "read_hash_index", "write_hash_index"]

_BE_I4 = np.dtype(">i4")


def encode_hash_index(hashes: npt.ArrayLike) -> bytes:
    """File content for ``hashes``: distinct values, ascending, big-endian int32."""
    arr = np.asarray(hashes)
    if arr.size and arr.dtype != np.int32:
        if not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"key hashes must be integers, got dtype {arr.dtype}")
        if arr.min() < np.iinfo(np.int32).min or arr.max() > np.iinfo(np.int32).max:
            raise ValueError("key hashes must fit in a signed int32")
    # sort + neighbour mask: several times faster than np.unique on numpy 2.x
    ordered = np.sort(arr.astype(np.int32, copy=False).ravel())
    if ordered.size > 1:
        keep = np.empty(ordered.size, dtype=bool)
        keep[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
        ordered = ordered[keep]
    return ordered.astype(_BE_I4).tobytes()


def write_hash_index(file_io: FileIO, path: str, hashes: npt.ArrayLike) -> int:
    """Write a new HASH index file at ``path``; returns its size (number of distinct hashes = size // 4)."""
    data = encode_hash_index(hashes)
    file_io.write_bytes(path, data)
    return len(data)


def read_hash_index(file_io: FileIO, path: str) -> npt.NDArray[np.int32]:
    """The key hashes stored in ``path`` as a native-order int32 array, in file order."""
    data = file_io.read_referenced(path, "HASH index file")
    if len(data) % 4:
        raise CorruptMetadataError(f"HASH index file {path} has {len(data)} bytes, not a multiple of 4")
    return np.frombuffer(data, dtype=_BE_I4).astype(np.int32)
