"""Iceberg manifests and manifest lists in Avro, with Iceberg's schemas and field ids (format version 2).

Paimon Java 1.0 writes the same fields (``IcebergManifestEntry``, ``IcebergDataFileMeta``,
``IcebergManifestFileMeta``, ``IcebergPartitionSummary``) and record names (``manifest_entry``, ``r2``, ``r102``,
``manifest_file``, ``r508``), but through its generic Avro writer: no ``field-id`` attributes and a nullable top-level
record, which Iceberg's spec does not allow and pyiceberg cannot read. So the schemas here follow Iceberg's spec
(Paimon's later releases add the ids too): ids on every field, map entries as ``key``/``value`` records with their
ids, required fields not nullable, ``partitions`` with id 507 and element id 508 (Java's field id 508 is Iceberg's
element id), and Iceberg's file metadata keys (``schema``, ``partition-spec``, ``format-version``, ``content``...).
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import fastavro

from table_engine.iceberg.types import PARTITION_FIELD_ID_START, partition_avro_type, partition_single_value
from table_engine.io.file_io import FileIO
from table_engine.types import DataField

EXISTING, ADDED, DELETED = 0, 1, 2
"""Manifest entry status."""
CONTENT_DATA = 0


def _opt(avro_type: Any) -> list[Any]:
    return ["null", avro_type]


def _map(name: str, field_id: int, key_id: int, value_id: int, value_type: str) -> dict[str, Any]:
    item = {"type": "record", "name": name, "fields": [
        {"name": "key", "type": "int", "field-id": key_id},
        {"name": "value", "type": value_type, "field-id": value_id}]}
    return {"name": name.removeprefix("r2_"), "type": _opt({"type": "array", "logicalType": "map", "items": item}),
            "default": None, "field-id": field_id}


def manifest_entry_schema(partition_fields: Sequence[DataField]) -> dict[str, Any]:
    """The Avro schema of a manifest's entries, with the table's partition record ``r102``."""
    partition = {"type": "record", "name": "r102", "fields": [
        {"name": f.name, "type": _opt(partition_avro_type(f.type)), "default": None,
         "field-id": PARTITION_FIELD_ID_START + i} for i, f in enumerate(partition_fields)]}
    data_file = {"type": "record", "name": "r2", "fields": [
        {"name": "content", "type": "int", "field-id": 134},
        {"name": "file_path", "type": "string", "field-id": 100},
        {"name": "file_format", "type": "string", "field-id": 101},
        {"name": "partition", "type": partition, "field-id": 102},
        {"name": "record_count", "type": "long", "field-id": 103},
        {"name": "file_size_in_bytes", "type": "long", "field-id": 104},
        _map("r2_null_value_counts", 110, 121, 122, "long"),
        _map("r2_lower_bounds", 125, 126, 127, "bytes"),
        _map("r2_upper_bounds", 128, 129, 130, "bytes")]}
    return {"type": "record", "name": "manifest_entry", "fields": [
        {"name": "status", "type": "int", "field-id": 0},
        {"name": "snapshot_id", "type": _opt("long"), "default": None, "field-id": 1},
        {"name": "sequence_number", "type": _opt("long"), "default": None, "field-id": 3},
        {"name": "file_sequence_number", "type": _opt("long"), "default": None, "field-id": 4},
        {"name": "data_file", "type": data_file, "field-id": 2}]}


def manifest_file_schema(legacy: bool) -> dict[str, Any]:
    """The Avro schema of a manifest list (``legacy``: Iceberg 1.4's ``*_data_files_count`` names)."""
    files = "data_files" if legacy else "files"
    summary = {"type": "record", "name": "r508", "fields": [
        {"name": "contains_null", "type": "boolean", "field-id": 509},
        {"name": "contains_nan", "type": _opt("boolean"), "default": None, "field-id": 518},
        {"name": "lower_bound", "type": _opt("bytes"), "default": None, "field-id": 510},
        {"name": "upper_bound", "type": _opt("bytes"), "default": None, "field-id": 511}]}
    return {"type": "record", "name": "manifest_file", "fields": [
        {"name": "manifest_path", "type": "string", "field-id": 500},
        {"name": "manifest_length", "type": "long", "field-id": 501},
        {"name": "partition_spec_id", "type": "int", "field-id": 502},
        {"name": "content", "type": "int", "field-id": 517},
        {"name": "sequence_number", "type": "long", "field-id": 515},
        {"name": "min_sequence_number", "type": "long", "field-id": 516},
        {"name": "added_snapshot_id", "type": "long", "field-id": 503},
        {"name": f"added_{files}_count", "type": "int", "field-id": 504},
        {"name": f"existing_{files}_count", "type": "int", "field-id": 505},
        {"name": f"deleted_{files}_count", "type": "int", "field-id": 506},
        {"name": "added_rows_count", "type": "long", "field-id": 512},
        {"name": "existing_rows_count", "type": "long", "field-id": 513},
        {"name": "deleted_rows_count", "type": "long", "field-id": 514},
        {"name": "partitions", "type": _opt({"type": "array", "items": summary, "element-id": 508}),
         "default": None, "field-id": 507}]}


@dataclass(frozen=True)
class IcebergDataFile:
    """A data file as an Iceberg manifest lists it; ``partition`` holds Avro values in partition-key order."""

    file_path: str
    file_format: str
    partition: tuple[Any, ...]
    record_count: int
    file_size_in_bytes: int
    null_value_counts: dict[int, int] = field(default_factory=dict)
    lower_bounds: dict[int, bytes] = field(default_factory=dict)
    upper_bounds: dict[int, bytes] = field(default_factory=dict)


@dataclass(frozen=True)
class IcebergManifestEntry:
    """One manifest entry: ``status`` (EXISTING, ADDED, DELETED), the snapshot that added the file and its
    sequence numbers (all the adding Paimon snapshot's id)."""

    status: int
    snapshot_id: int
    sequence_number: int
    file_sequence_number: int
    file: IcebergDataFile

    @property
    def is_live(self) -> bool:
        return self.status in (ADDED, EXISTING)

    def with_status(self, status: int) -> IcebergManifestEntry:
        return IcebergManifestEntry(status, self.snapshot_id, self.sequence_number, self.file_sequence_number,
                                    self.file)


@dataclass(frozen=True)
class PartitionSummary:
    """A manifest's bounds of one partition field (Iceberg single values)."""

    contains_null: bool
    contains_nan: bool
    lower_bound: bytes | None
    upper_bound: bytes | None


@dataclass(frozen=True)
class IcebergManifestFileMeta:
    """One manifest list entry."""

    manifest_path: str
    manifest_length: int
    sequence_number: int
    min_sequence_number: int
    added_snapshot_id: int
    added_files_count: int
    existing_files_count: int
    deleted_files_count: int
    added_rows_count: int
    existing_rows_count: int
    deleted_rows_count: int
    partitions: tuple[PartitionSummary, ...]
    partition_spec_id: int = 0
    content: int = CONTENT_DATA


def _kv(d: dict[int, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": v} for k, v in d.items()]


def _unkv(items: list[dict[str, Any]] | None) -> dict[int, Any]:
    return {int(i["key"]): i["value"] for i in items or []}


def _entry_to_avro(e: IcebergManifestEntry, names: Sequence[str]) -> dict[str, Any]:
    f = e.file
    return {"status": e.status, "snapshot_id": e.snapshot_id, "sequence_number": e.sequence_number,
            "file_sequence_number": e.file_sequence_number, "data_file": {
                "content": CONTENT_DATA, "file_path": f.file_path, "file_format": f.file_format,
                "partition": dict(zip(names, f.partition, strict=True)), "record_count": f.record_count,
                "file_size_in_bytes": f.file_size_in_bytes, "null_value_counts": _kv(f.null_value_counts),
                "lower_bounds": _kv(f.lower_bounds), "upper_bounds": _kv(f.upper_bounds)}}


def _entry_from_avro(r: dict[str, Any], names: Sequence[str]) -> IcebergManifestEntry:
    d = r["data_file"]
    part = d["partition"] or {}
    f = IcebergDataFile(d["file_path"], d["file_format"], tuple(part.get(n) for n in names), d["record_count"],
                        d["file_size_in_bytes"], _unkv(d.get("null_value_counts")), _unkv(d.get("lower_bounds")),
                        _unkv(d.get("upper_bounds")))
    return IcebergManifestEntry(r["status"], r["snapshot_id"], r["sequence_number"], r["file_sequence_number"], f)


def _avro_bytes(schema: dict[str, Any], records: list[dict[str, Any]], codec: str,
                metadata: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), records, codec=codec, metadata=metadata)
    return buf.getvalue()


def _read_avro(file_io: FileIO, path: str) -> list[dict[str, Any]]:
    return list(fastavro.reader(io.BytesIO(file_io.read_bytes(path))))  # type: ignore[arg-type]


@dataclass(frozen=True)
class ManifestCodec:
    """Writes and reads one table's manifests and manifest lists (its partition fields fix the entry schema)."""

    file_io: FileIO
    partition_fields: tuple[DataField, ...]
    codec: str
    legacy_manifest_list: bool
    file_metadata: dict[str, str]
    """Iceberg's manifest file metadata: ``schema``, ``schema-id``, ``partition-spec``, ``partition-spec-id``..."""

    @property
    def _names(self) -> list[str]:
        return [f.name for f in self.partition_fields]

    def write_manifest(self, path: str, entries: Sequence[IcebergManifestEntry],
                       sequence_number: int) -> IcebergManifestFileMeta:
        """Write ``entries`` to a new manifest at ``path``; its list entry, counted as Java counts (the manifest's
        sequence number and added snapshot are the writing snapshot's)."""
        records = [_entry_to_avro(e, self._names) for e in entries]
        data = _avro_bytes(manifest_entry_schema(self.partition_fields), records, self.codec, self.file_metadata)
        self.file_io.write_bytes(path, data)
        counts = {s: [0, 0] for s in (ADDED, EXISTING, DELETED)}
        for e in entries:
            counts[e.status][0] += 1
            counts[e.status][1] += e.file.record_count
        min_seq = min((e.sequence_number for e in entries), default=-1)
        return IcebergManifestFileMeta(
            path, len(data), sequence_number, min_seq, sequence_number, counts[ADDED][0], counts[EXISTING][0],
            counts[DELETED][0], counts[ADDED][1], counts[EXISTING][1], counts[DELETED][1],
            self._summaries(entries))

    def _summaries(self, entries: Sequence[IcebergManifestEntry]) -> tuple[PartitionSummary, ...]:
        out = []
        for i, f in enumerate(self.partition_fields):
            values = [e.file.partition[i] for e in entries]
            present = [v for v in values if v is not None]
            low = partition_single_value(min(present), f.type) if present else None
            high = partition_single_value(max(present), f.type) if present else None
            out.append(PartitionSummary(len(present) < len(values), False, low, high))
        return tuple(out)

    def read_manifest(self, path: str) -> list[IcebergManifestEntry]:
        return [_entry_from_avro(r, self._names) for r in _read_avro(self.file_io, path)]

    def write_manifest_list(self, path: str, metas: Sequence[IcebergManifestFileMeta],
                            list_metadata: dict[str, str]) -> None:
        files = "data_files" if self.legacy_manifest_list else "files"
        records = [{
            "manifest_path": m.manifest_path, "manifest_length": m.manifest_length,
            "partition_spec_id": m.partition_spec_id, "content": m.content, "sequence_number": m.sequence_number,
            "min_sequence_number": m.min_sequence_number, "added_snapshot_id": m.added_snapshot_id,
            f"added_{files}_count": m.added_files_count, f"existing_{files}_count": m.existing_files_count,
            f"deleted_{files}_count": m.deleted_files_count, "added_rows_count": m.added_rows_count,
            "existing_rows_count": m.existing_rows_count, "deleted_rows_count": m.deleted_rows_count,
            "partitions": [{"contains_null": p.contains_null, "contains_nan": p.contains_nan,
                            "lower_bound": p.lower_bound, "upper_bound": p.upper_bound} for p in m.partitions]}
            for m in metas]
        schema = manifest_file_schema(self.legacy_manifest_list)
        self.file_io.write_bytes(path, _avro_bytes(schema, records, self.codec, list_metadata))

    def read_manifest_list(self, path: str) -> list[IcebergManifestFileMeta]:
        out = []
        for r in _read_avro(self.file_io, path):
            files = "data_files" if "added_data_files_count" in r else "files"
            out.append(IcebergManifestFileMeta(
                r["manifest_path"], r["manifest_length"], r["sequence_number"], r["min_sequence_number"],
                r["added_snapshot_id"], r[f"added_{files}_count"], r[f"existing_{files}_count"],
                r[f"deleted_{files}_count"], r["added_rows_count"], r["existing_rows_count"],
                r["deleted_rows_count"],
                tuple(PartitionSummary(p["contains_null"], bool(p["contains_nan"]), p["lower_bound"],
                                       p["upper_bound"]) for p in r["partitions"] or []),
                r["partition_spec_id"], r["content"]))
        return out


def spec_json(partition_fields: Sequence[DataField]) -> list[dict[str, Any]]:
    """The partition spec's fields: identity transforms of the partition keys, ids from 1000."""
    return [{"name": f.name, "transform": "identity", "source-id": f.id, "field-id": PARTITION_FIELD_ID_START + i}
            for i, f in enumerate(partition_fields)]


def manifest_file_metadata(schema_json: dict[str, Any], partition_fields: Sequence[DataField]) -> dict[str, str]:
    """Iceberg's key-value metadata of a manifest file."""
    return {"schema": json.dumps(schema_json), "schema-id": str(schema_json["schema-id"]),
            "partition-spec": json.dumps(spec_json(partition_fields)), "partition-spec-id": "0",
            "format-version": "2", "content": "data"}
