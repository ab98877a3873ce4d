"""Manifest lists: Avro files naming the manifests of a snapshot (``manifest/manifest-list-<uuid>-<n>``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from table_engine.errors import CorruptMetadataError
from table_engine.format.avro import read_avro, write_avro
from table_engine.format.data_file_meta import SimpleStats, simple_stats_schema
from table_engine.io.file_io import FileIO

__all__ = ["MANIFEST_FILE_META_SCHEMA", "ManifestFileMeta", "read_manifest_list", "write_manifest_list"]

MANIFEST_FILE_META_VERSION = 2


def _opt(avro_type: Any) -> dict[str, Any]:
    return {"type": ["null", avro_type], "default": None}


MANIFEST_FILE_META_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "ManifestFileMeta",
    "fields": [
        {"name": "_VERSION", "type": "int"},
        {"name": "_FILE_NAME", "type": "string"},
        {"name": "_FILE_SIZE", "type": "long"},
        {"name": "_NUM_ADDED_FILES", "type": "long"},
        {"name": "_NUM_DELETED_FILES", "type": "long"},
        {"name": "_PARTITION_STATS", "type": simple_stats_schema("record_PARTITION_STATS")},
        {"name": "_SCHEMA_ID", "type": "long"},
        {"name": "_MIN_BUCKET", **_opt("int")},
        {"name": "_MAX_BUCKET", **_opt("int")},
        {"name": "_MIN_LEVEL", **_opt("int")},
        {"name": "_MAX_LEVEL", **_opt("int")},
        {"name": "_MIN_ROW_ID", **_opt("long")},
        {"name": "_MAX_ROW_ID", **_opt("long")},
        {"name": "_TOTAL_BUCKETS", **_opt("int")},
        {"name": "_EXTRA_FILES", **_opt({"type": "array", "items": "string"})},
    ],
}


@dataclass(frozen=True, slots=True)
class ManifestFileMeta:
    """One manifest file as listed in a manifest list, with summary stats for pruning.

    ``partition_stats`` holds min/max partition BinaryRows over the manifest's entries. pypaimon sets
    ``total_buckets`` only for fixed-bucket tables (``None`` for dynamic/unaware buckets).
    """

    file_name: str
    file_size: int
    num_added_files: int
    num_deleted_files: int
    partition_stats: SimpleStats
    schema_id: int
    min_bucket: int | None = None
    max_bucket: int | None = None
    min_level: int | None = None
    max_level: int | None = None
    min_row_id: int | None = None
    max_row_id: int | None = None
    total_buckets: int | None = None
    extra_files: list[str] | None = None

    def to_avro(self) -> dict[str, Any]:
        return {
            "_VERSION": MANIFEST_FILE_META_VERSION,
            "_FILE_NAME": self.file_name,
            "_FILE_SIZE": self.file_size,
            "_NUM_ADDED_FILES": self.num_added_files,
            "_NUM_DELETED_FILES": self.num_deleted_files,
            "_PARTITION_STATS": self.partition_stats.to_avro(),
            "_SCHEMA_ID": self.schema_id,
            "_MIN_BUCKET": self.min_bucket,
            "_MAX_BUCKET": self.max_bucket,
            "_MIN_LEVEL": self.min_level,
            "_MAX_LEVEL": self.max_level,
            "_MIN_ROW_ID": self.min_row_id,
            "_MAX_ROW_ID": self.max_row_id,
            "_TOTAL_BUCKETS": self.total_buckets,
            "_EXTRA_FILES": self.extra_files,
        }

    @staticmethod
    def from_avro(r: dict[str, Any]) -> ManifestFileMeta:
        g = r.get
        return ManifestFileMeta(
            r["_FILE_NAME"],
            r["_FILE_SIZE"],
            r["_NUM_ADDED_FILES"],
            r["_NUM_DELETED_FILES"],
            SimpleStats.from_avro(r["_PARTITION_STATS"]),
            r["_SCHEMA_ID"],
            g("_MIN_BUCKET"),
            g("_MAX_BUCKET"),
            g("_MIN_LEVEL"),
            g("_MAX_LEVEL"),
            g("_MIN_ROW_ID"),
            g("_MAX_ROW_ID"),
            g("_TOTAL_BUCKETS"),
            g("_EXTRA_FILES"),
        )


def write_manifest_list(file_io: FileIO, path: str, metas: Iterable[ManifestFileMeta]) -> int:
    """Write a new manifest list at ``path`` (an empty list is a valid, record-less file); returns its size."""
    data = write_avro((m.to_avro() for m in metas), MANIFEST_FILE_META_SCHEMA)
    file_io.write_bytes(path, data)
    return len(data)


def read_manifest_list(file_io: FileIO, path: str) -> list[ManifestFileMeta]:
    """The manifests listed in ``path``, in file order (``FileNotFoundError`` if it is missing)."""
    records = read_avro(file_io.read_referenced(path, "manifest list"), path)
    try:
        return [ManifestFileMeta.from_avro(r) for r in records]
    except (KeyError, TypeError, AttributeError) as e:
        raise CorruptMetadataError(f"manifest list {path} has an unexpected record layout: {e!r}") from e
