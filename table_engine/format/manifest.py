"""Manifest files: Avro logs of ADD/DELETE entries for data files (``manifest/manifest-<uuid>-<n>``).

The engine writes no Avro block holding entries of two partitions and says so in the file metadata
(:data:`PARTITION_BLOCKS`): a read for some partitions (:func:`read_manifest` with ``partition_filter``) then decodes
only the blocks of those partitions. Manifests of other writers are decoded whole, their entries filtered by
partition before their ``DataFileMeta`` is built.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from itertools import groupby
from typing import Any

from table_engine.errors import CorruptMetadataError
from table_engine.format.avro import iter_avro, read_avro, read_avro_blocks, read_long, write_avro_groups
from table_engine.format.data_file_meta import DATA_FILE_META_SCHEMA, DataFileMeta
from table_engine.io.file_io import FileIO

__all__ = [
    "MANIFEST_ENTRY_SCHEMA",
    "PARTITION_BLOCKS",
    "added_files",
    "encode_manifest",
    "FileIdentifier",
    "FileKind",
    "ManifestEntry",
    "merge_entries",
    "read_manifest",
    "write_manifest",
]

MANIFEST_ENTRY_VERSION = 2

PARTITION_BLOCKS = "table-engine.partition-blocks"
"""Avro file metadata key (value ``"true"``): every Avro block of this manifest holds entries of one partition."""


class FileKind(IntEnum):
    """Kind of a manifest entry (``_KIND``)."""

    ADD = 0
    DELETE = 1


_KINDS = {0: FileKind.ADD, 1: FileKind.DELETE}  # dict: an unknown kind is a KeyError, not a wrap-around

FileIdentifier = tuple[bytes, int, int, str, tuple[str, ...], bytes | None, str | None]
"""(partition, bucket, level, file_name, extra_files, embedded_file_index, external_path)."""


MANIFEST_ENTRY_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "ManifestEntry",
    "fields": [
        {"name": "_VERSION", "type": "int"},
        {"name": "_KIND", "type": "int"},
        {"name": "_PARTITION", "type": "bytes"},
        {"name": "_BUCKET", "type": "int"},
        {"name": "_TOTAL_BUCKETS", "type": "int"},
        {"name": "_FILE", "type": DATA_FILE_META_SCHEMA},
    ],
}


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    """One ADD or DELETE of a data file in a (partition, bucket).

    ``partition`` is the serialized partition BinaryRow; ``total_buckets`` is the table's bucket count when the
    file was written (-1 for dynamic/unaware bucket tables).
    """

    kind: FileKind
    partition: bytes
    bucket: int
    total_buckets: int
    file: DataFileMeta

    def identifier(self) -> FileIdentifier:
        """Paimon's file identity: entries with equal identifiers refer to the same physical file."""
        f = self.file
        return (self.partition, self.bucket, f.level, f.file_name, tuple(f.extra_files), f.embedded_file_index,
                f.external_path)

    def to_avro(self) -> dict[str, Any]:
        return {
            "_VERSION": MANIFEST_ENTRY_VERSION,
            "_KIND": int(self.kind),
            "_PARTITION": self.partition,
            "_BUCKET": self.bucket,
            "_TOTAL_BUCKETS": self.total_buckets,
            "_FILE": self.file.to_avro(),
        }

    @staticmethod
    def from_avro(r: dict[str, Any]) -> ManifestEntry:
        return ManifestEntry(_KINDS[r["_KIND"]], r["_PARTITION"], r["_BUCKET"], r["_TOTAL_BUCKETS"],
                             DataFileMeta.from_avro(r["_FILE"]))


def write_manifest(file_io: FileIO, path: str, entries: Iterable[ManifestEntry]) -> int:
    """Write a new manifest file at ``path``; returns its size in bytes.

    Entries keep their order; a block ends wherever the partition changes (write entries grouped by partition to
    make partition-filtered reads cheap)."""
    data = encode_manifest(entries)
    file_io.write_bytes(path, data)
    return len(data)


def encode_manifest(entries: Iterable[ManifestEntry]) -> bytes:
    """The bytes :func:`write_manifest` writes for ``entries``."""
    groups = ((part, (e.to_avro() for e in run)) for part, run in groupby(entries, key=lambda e: e.partition))
    return write_avro_groups(groups, MANIFEST_ENTRY_SCHEMA, PARTITION_BLOCKS)


def read_manifest(file_io: FileIO, path: str, partition_filter: Callable[[bytes], bool] | None = None
                  ) -> list[ManifestEntry]:
    """The entries of the manifest at ``path``, in file order (``FileNotFoundError`` if it is missing).

    ``partition_filter``: keep only entries whose serialized partition it accepts (called once per distinct
    partition); blocks of other partitions are not decoded when the manifest says its blocks are per partition."""
    data = file_io.read_referenced(path, "manifest file")
    verdicts: dict[bytes, bool] = {}
    accept = partition_filter or (lambda part: True)

    def wanted(part: bytes) -> bool:
        hit = verdicts.get(part)
        if hit is None:
            hit = verdicts[part] = accept(part)
        return hit

    def keep_block(block: bytes) -> bool:
        return wanted(_first_partition(block))

    records = read_avro_blocks(data, path, PARTITION_BLOCKS, None if partition_filter is None else keep_block,
                               None if partition_filter is None else wanted)
    whole = records is None
    if records is None:
        records = read_avro(data, path)
    try:
        if partition_filter is not None and whole:
            records = [r for r in records if wanted(r["_PARTITION"])]
        return [ManifestEntry.from_avro(r) for r in records]
    except (KeyError, TypeError, IndexError, AttributeError) as e:
        raise CorruptMetadataError(f"manifest file {path} has an unexpected record layout: {e!r}") from e


def manifest_file_names(file_io: FileIO, path: str) -> set[str]:
    """Names of the data files (and their extra files) the manifest at ``path`` lists, ADD or DELETE, read record
    by record without building entries (orphan cleaning over many files keeps only names)."""
    names: set[str] = set()
    try:
        for r in iter_avro(file_io.read_referenced(path, "manifest file"), path):
            f = r["_FILE"]
            names.add(f["_FILE_NAME"])
            names.update(f.get("_EXTRA_FILES") or ())
    except (KeyError, TypeError, IndexError, AttributeError) as e:
        raise CorruptMetadataError(f"manifest file {path} has an unexpected record layout: {e!r}") from e
    return names


def _first_partition(block: bytes) -> bytes:
    """``_PARTITION`` of the first record of an uncompressed block of our manifests: it follows the ``_VERSION``
    and ``_KIND`` ints (:data:`MANIFEST_ENTRY_SCHEMA`)."""
    _, pos = read_long(block, 0)
    _, pos = read_long(block, pos)
    n, pos = read_long(block, pos)
    return block[pos:pos + n]


def merge_entries(entries: Iterable[ManifestEntry]) -> list[ManifestEntry]:
    """Fold a log of entries into its net effect, keeping first-seen order.

    An ADD followed by a DELETE of the same identifier cancels out; a DELETE whose ADD is not in ``entries`` is kept
    (it cancels an ADD of an earlier log segment when merged again). Adding a file that is already added is
    inconsistent metadata and raises :class:`CorruptMetadataError`.
    """
    merged: dict[FileIdentifier, ManifestEntry] = {}
    for e in entries:
        ident = e.identifier()
        if e.kind == FileKind.ADD:
            if ident in merged:
                raise CorruptMetadataError(
                    f"data file {e.file.file_name} (bucket {e.bucket}, level {e.file.level}) is added again "
                    f"while an entry for it is pending ({merged[ident].kind.name})")
            merged[ident] = e
        elif ident in merged:
            del merged[ident]
        else:
            merged[ident] = e
    return list(merged.values())


def added_files(entries: Sequence[ManifestEntry]) -> list[ManifestEntry]:
    """The ADD entries of an already merged entry list (DELETEs of files outside it are dropped)."""
    return [e for e in entries if e.kind == FileKind.ADD]
