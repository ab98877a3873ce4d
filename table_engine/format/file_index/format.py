"""Paimon's file-index file: one container holding every index of one data file (``FileIndexFormat.java``).

Layout (all integers big-endian)::

    magic (8 bytes long, 1493475289347502) | version (4 bytes int, 1) | head length (4 bytes int)
    column number (4 bytes int)
    per column:  column name (writeUTF) | index number (4 bytes int)
                 per index: index type name (writeUTF) | start pos (4 bytes int) | length (4 bytes int)
    redundant length (4 bytes int, 0) | redundant bytes (none)
    BODY: the serialized indexes, back to back

``head length`` counts every byte before the body, so ``start pos`` is an offset from the start of the file. A start
of -1 (length 0) marks an index that was declared but saw no value (``EmptyFileIndexReader``: nothing can match).

The same bytes are either embedded in the manifest entry (``_EMBEDDED_FILE_INDEX``) or written next to the data file
as ``<data-file-name>.index`` and listed in ``_EXTRA_FILES``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from table_engine.errors import CorruptMetadataError
from table_engine.format.file_index.java_compat import java_hashmap_order, java_string_hash, read_utf, write_utf
from table_engine.io.file_io import FileIO

__all__ = [
    "EMPTY_INDEX",
    "INDEX_PATH_SUFFIX",
    "MAGIC",
    "FileIndexFile",
    "java_map_order",
    "read_file_index",
    "write_file_index",
    "write_file_index_bytes",
]

MAGIC = 1493475289347502
VERSION_1 = 1
EMPTY_INDEX_FLAG = -1
INDEX_PATH_SUFFIX = ".index"


class _Empty:
    """Marker of a declared index without data (start pos -1)."""

    def __repr__(self) -> str:
        return "EMPTY_INDEX"


EMPTY_INDEX = _Empty()


def java_map_order(indexes: Mapping[str, Mapping[str, bytes | None]]) -> dict[str, dict[str, bytes | None]]:
    """Reorder columns and index types as Paimon's ``DataFileIndexWriter`` emits them: columns come out of a
    ``HashMap`` filled with ``computeIfAbsent`` once per (column, index type), index types out of per-column
    ``HashMap``s filled with ``put`` -- so the order is ``HashMap`` iteration order of the ``String`` names."""
    cols = list(indexes)
    later = bool(cols) and len(indexes[cols[-1]]) > 1
    order, _ = java_hashmap_order([java_string_hash(c) for c in cols], compute_if_absent=True, later_call=later)
    out: dict[str, dict[str, bytes | None]] = {}
    for i in order.tolist():
        types = list(indexes[cols[i]])
        t_order, _ = java_hashmap_order([java_string_hash(t) for t in types])
        out[cols[i]] = {types[j]: indexes[cols[i]][types[j]] for j in t_order.tolist()}
    return out


def write_file_index_bytes(indexes: Mapping[str, Mapping[str, bytes | None]]) -> bytes:
    """Serialize ``{column: {index type: bytes or None (empty)}}`` in the given order."""
    body = bytearray()
    info: list[tuple[str, list[tuple[str, int, int]]]] = []
    names_len = 0
    n_indexes = 0
    for col, by_type in indexes.items():
        entries = []
        names_len += len(write_utf(col))
        for index_type, data in by_type.items():
            names_len += len(write_utf(index_type))
            n_indexes += 1
            if data is None:
                entries.append((index_type, EMPTY_INDEX_FLAG, 0))
            else:
                entries.append((index_type, len(body), len(data)))
                body += data
        info.append((col, entries))
    head_length = 8 + 4 + 4 + 4 + n_indexes * 8 + len(info) * 4 + 4 + names_len
    out = bytearray(struct.pack(">qii", MAGIC, VERSION_1, head_length))
    out += struct.pack(">i", len(info))
    for col, entries in info:
        out += write_utf(col)
        out += struct.pack(">i", len(entries))
        for index_type, start, length in entries:
            out += write_utf(index_type)
            out += struct.pack(">ii", start if start == EMPTY_INDEX_FLAG else start + head_length, length)
    out += struct.pack(">i", 0)  # redundant length
    if len(out) != head_length:  # pragma: no cover - arithmetic guard
        raise AssertionError("file index head length mismatch")
    return bytes(out + body)


@dataclass(frozen=True)
class FileIndexFile:
    """A parsed file-index container: ``(column, index type) -> (start, length)`` over ``data``."""

    data: bytes
    entries: dict[str, dict[str, tuple[int, int]]]
    source: str = "<embedded>"

    @staticmethod
    def parse(data: bytes, source: str = "<embedded>") -> FileIndexFile:
        try:
            magic, version, head_length = struct.unpack_from(">qii", data, 0)
            if magic != MAGIC:
                raise CorruptMetadataError(f"file index {source} is not a file index file (bad magic {magic})")
            if version != VERSION_1:
                raise CorruptMetadataError(
                    f"file index {source} has version {version}; only version {VERSION_1} is supported")
            pos = 16
            (n_cols,) = struct.unpack_from(">i", data, pos)
            pos += 4
            entries: dict[str, dict[str, tuple[int, int]]] = {}
            for _ in range(n_cols):
                col, pos = read_utf(data, pos)
                (n_idx,) = struct.unpack_from(">i", data, pos)
                pos += 4
                by_type = entries.setdefault(col, {})
                for _ in range(n_idx):
                    index_type, pos = read_utf(data, pos)
                    start, length = struct.unpack_from(">ii", data, pos)
                    pos += 8
                    if start != EMPTY_INDEX_FLAG and (start < head_length or start + length > len(data)):
                        raise CorruptMetadataError(
                            f"file index {source}: index {index_type!r} of column {col!r} points outside the file")
                    by_type[index_type] = (start, length)
        except (struct.error, ValueError, IndexError) as e:
            raise CorruptMetadataError(f"cannot parse file index {source}: {e}") from e
        return FileIndexFile(bytes(data), entries, source)

    def columns(self) -> list[str]:
        return list(self.entries)

    def index_types(self, column: str) -> list[str]:
        return list(self.entries.get(column, {}))

    def get(self, column: str, index_type: str) -> bytes | _Empty | None:
        """The serialized index, :data:`EMPTY_INDEX` for an empty one, or None when there is no such index."""
        loc = self.entries.get(column, {}).get(index_type)
        if loc is None:
            return None
        start, length = loc
        if start == EMPTY_INDEX_FLAG:
            return EMPTY_INDEX
        return self.data[start:start + length]

    def items(self) -> Iterator[tuple[str, str, bytes | _Empty]]:
        for col, by_type in self.entries.items():
            for index_type in by_type:
                got = self.get(col, index_type)
                assert got is not None
                yield col, index_type, got


def read_file_index(file_io: FileIO, path: str) -> FileIndexFile:
    """Read and parse a sidecar ``*.index`` file."""
    data = file_io.read_referenced(path, "file index")
    return FileIndexFile.parse(data, path)


def write_file_index(file_io: FileIO, path: str, data: bytes) -> None:
    """Write a sidecar ``*.index`` file (never overwriting)."""
    file_io.write_bytes(path, data)
