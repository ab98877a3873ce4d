"""Index manifests: Avro files listing the index files of a table (``manifest/index-manifest-<uuid>``).

Index files are deletion vectors (``DELETION_VECTORS``) and dynamic-bucket key-hash indexes (``HASH``).
A snapshot's index manifest is the *full* current state (every entry an ADD); :func:`combine_index_entries` builds
the next state from the previous one and a commit's changes, the way Paimon does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from table_engine.errors import CorruptMetadataError
from table_engine.format.avro import read_avro, write_avro
from table_engine.format.manifest import FileKind
from table_engine.io.file_io import FileIO

__all__ = [
    "DELETION_VECTORS_INDEX",
    "HASH_INDEX",
    "INDEX_MANIFEST_ENTRY_SCHEMA",
    "DeletionVectorMeta",
    "GlobalIndexMeta",
    "IndexFileMeta",
    "IndexManifestEntry",
    "combine_index_entries",
    "merge_index_entries",
    "read_index_manifest",
    "write_index_manifest",
]

DELETION_VECTORS_INDEX = "DELETION_VECTORS"
HASH_INDEX = "HASH"
INDEX_MANIFEST_ENTRY_VERSION = 1

_KINDS = {0: FileKind.ADD, 1: FileKind.DELETE}  # dict: an unknown kind is a KeyError, not a wrap-around

INDEX_MANIFEST_ENTRY_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "IndexManifestEntry",
    "fields": [
        {"name": "_VERSION", "type": "int"},
        {"name": "_KIND", "type": "int"},
        {"name": "_PARTITION", "type": "bytes"},
        {"name": "_BUCKET", "type": "int"},
        {"name": "_INDEX_TYPE", "type": "string"},
        {"name": "_FILE_NAME", "type": "string"},
        {"name": "_FILE_SIZE", "type": "long"},
        {"name": "_ROW_COUNT", "type": "long"},
        {"name": "_DELETIONS_VECTORS_RANGES", "type": ["null", {"type": "array", "items": {
            "type": "record",
            "name": "DeletionVectorMeta",
            "fields": [
                {"name": "f0", "type": "string"},
                {"name": "f1", "type": "int"},
                {"name": "f2", "type": "int"},
                {"name": "_CARDINALITY", "type": ["null", "long"], "default": None},
            ],
        }}], "default": None},
        {"name": "_EXTERNAL_PATH", "type": ["null", "string"], "default": None},
        {"name": "_GLOBAL_INDEX", "type": ["null", {
            "type": "record",
            "name": "GlobalIndexMeta",
            "fields": [
                {"name": "_ROW_RANGE_START", "type": "long"},
                {"name": "_ROW_RANGE_END", "type": "long"},
                {"name": "_INDEX_FIELD_ID", "type": "int"},
                {"name": "_EXTRA_FIELD_IDS", "type": ["null", {"type": "array", "items": "int"}], "default": None},
                {"name": "_INDEX_META", "type": ["null", "bytes"], "default": None},
                {"name": "_SOURCE_META", "type": ["null", "bytes"], "default": None},
            ],
        }], "default": None},
    ],
}


@dataclass(frozen=True, slots=True)
class DeletionVectorMeta:
    """Where one data file's deletion vector lives inside a DV index file (Avro ``f0, f1, f2, _CARDINALITY``)."""

    data_file_name: str
    offset: int
    length: int
    cardinality: int | None = None


@dataclass(frozen=True, slots=True)
class GlobalIndexMeta:
    """Metadata of a global (row-range) index file; read and written back unchanged."""

    row_range_start: int
    row_range_end: int
    index_field_id: int
    extra_field_ids: list[int] | None = None
    index_meta: bytes | None = None
    source_meta: bytes | None = None


@dataclass(frozen=True, slots=True)
class IndexFileMeta:
    """One index file. ``row_count``: DV -> data files with a vector; HASH -> number of key hashes."""

    index_type: str
    file_name: str
    file_size: int
    row_count: int
    dv_ranges: list[DeletionVectorMeta] | None = None
    external_path: str | None = None
    global_index: GlobalIndexMeta | None = None


@dataclass(frozen=True, slots=True)
class IndexManifestEntry:
    """ADD or DELETE of an index file for a (partition, bucket); ``partition`` is the serialized BinaryRow."""

    kind: FileKind
    partition: bytes
    bucket: int
    index_file: IndexFileMeta

    def identifier(self) -> tuple[bytes, int, str, str]:
        """(partition, bucket, index_type, file_name)."""
        return self.partition, self.bucket, self.index_file.index_type, self.index_file.file_name

    def to_avro(self) -> dict[str, Any]:
        f = self.index_file
        dv = None if f.dv_ranges is None else [
            {"f0": d.data_file_name, "f1": d.offset, "f2": d.length, "_CARDINALITY": d.cardinality}
            for d in f.dv_ranges
        ]
        gi = f.global_index
        return {
            "_VERSION": INDEX_MANIFEST_ENTRY_VERSION,
            "_KIND": int(self.kind),
            "_PARTITION": self.partition,
            "_BUCKET": self.bucket,
            "_INDEX_TYPE": f.index_type,
            "_FILE_NAME": f.file_name,
            "_FILE_SIZE": f.file_size,
            "_ROW_COUNT": f.row_count,
            "_DELETIONS_VECTORS_RANGES": dv,
            "_EXTERNAL_PATH": f.external_path,
            "_GLOBAL_INDEX": None if gi is None else {
                "_ROW_RANGE_START": gi.row_range_start,
                "_ROW_RANGE_END": gi.row_range_end,
                "_INDEX_FIELD_ID": gi.index_field_id,
                "_EXTRA_FIELD_IDS": gi.extra_field_ids,
                "_INDEX_META": gi.index_meta,
                "_SOURCE_META": gi.source_meta,
            },
        }

    @staticmethod
    def from_avro(r: dict[str, Any]) -> IndexManifestEntry:
        dv = r.get("_DELETIONS_VECTORS_RANGES")
        gi = r.get("_GLOBAL_INDEX")
        meta = IndexFileMeta(
            r["_INDEX_TYPE"],
            r["_FILE_NAME"],
            r["_FILE_SIZE"],
            r["_ROW_COUNT"],
            None if dv is None else [DeletionVectorMeta(d["f0"], d["f1"], d["f2"], d.get("_CARDINALITY")) for d in dv],
            r.get("_EXTERNAL_PATH"),
            None if gi is None else GlobalIndexMeta(
                gi["_ROW_RANGE_START"], gi["_ROW_RANGE_END"], gi["_INDEX_FIELD_ID"], gi.get("_EXTRA_FIELD_IDS"),
                gi.get("_INDEX_META"), gi.get("_SOURCE_META")),
        )
        return IndexManifestEntry(_KINDS[r["_KIND"]], r["_PARTITION"], r["_BUCKET"], meta)


def write_index_manifest(file_io: FileIO, path: str, entries: Iterable[IndexManifestEntry]) -> int:
    """Write a new index manifest at ``path``; returns its size in bytes."""
    data = write_avro((e.to_avro() for e in entries), INDEX_MANIFEST_ENTRY_SCHEMA)
    file_io.write_bytes(path, data)
    return len(data)


def read_index_manifest(file_io: FileIO, path: str) -> list[IndexManifestEntry]:
    """All entries of the index manifest at ``path``, in file order (``FileNotFoundError`` if missing)."""
    records = read_avro(file_io.read_referenced(path, "index manifest"), path)
    try:
        return [IndexManifestEntry.from_avro(r) for r in records]
    except (KeyError, TypeError, IndexError, AttributeError) as e:
        raise CorruptMetadataError(f"index manifest {path} has an unexpected record layout: {e!r}") from e


def merge_index_entries(entries: Iterable[IndexManifestEntry]) -> list[IndexManifestEntry]:
    """Fold a log of index entries by :meth:`IndexManifestEntry.identifier`, keeping first-seen order.

    ADD then DELETE cancel; an unmatched DELETE is kept; a repeated ADD replaces the earlier one in place.
    """
    merged: dict[tuple[bytes, int, str, str], IndexManifestEntry] = {}
    for e in entries:
        ident = e.identifier()
        if e.kind == FileKind.ADD:
            merged[ident] = e
        elif ident in merged and merged[ident].kind == FileKind.ADD:
            del merged[ident]
        else:
            merged[ident] = e
    return list(merged.values())


def _combine_key(e: IndexManifestEntry, bucket_unaware: bool) -> tuple[Any, ...]:
    t = e.index_file.index_type
    if t == HASH_INDEX or (t == DELETION_VECTORS_INDEX and not bucket_unaware):
        return ("bucket", e.partition, e.bucket, t)
    return ("file", e.index_file.file_name)


def combine_index_entries(
    previous: Iterable[IndexManifestEntry],
    changes: Iterable[IndexManifestEntry],
    *,
    bucket_unaware: bool = False,
) -> list[IndexManifestEntry]:
    """The next full index-manifest state: ``previous`` (all ADDs) with a commit's ADD/DELETE ``changes`` applied.

    HASH indexes (and DV indexes of bucketed tables) are one file per (partition, bucket, type): an ADD replaces
    the bucket's previous file even without a DELETE for it (pypaimon sends only the ADD). DV indexes of
    bucket-unaware tables and other index types are keyed by file name. Deletes apply before adds.
    """
    state: dict[tuple[Any, ...], IndexManifestEntry] = {}
    for e in previous:
        if e.kind != FileKind.ADD:
            raise CorruptMetadataError(f"index manifest state holds a DELETE entry for {e.index_file.file_name}")
        state[_combine_key(e, bucket_unaware)] = e
    changes = list(changes)
    deleted_names = {e.index_file.file_name for e in changes if e.kind == FileKind.DELETE}
    if deleted_names:
        state = {k: v for k, v in state.items() if v.index_file.file_name not in deleted_names}
    for e in changes:
        if e.kind == FileKind.ADD:
            state[_combine_key(e, bucket_unaware)] = e
    return list(state.values())
