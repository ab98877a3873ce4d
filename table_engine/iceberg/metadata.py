"""Iceberg table metadata (``v<N>.metadata.json``) and the metadata directory's file names, as Paimon Java writes
them (``IcebergMetadata``, ``IcebergSnapshot``, ``IcebergPathFactory``; 1.0).

Names: ``<dir>/v<snapshot id>.metadata.json``, ``<dir>/version-hint.text`` (the current snapshot id), manifest lists
``<dir>/snap-<n>-<uuid>.avro`` and manifests ``<dir>/<uuid>-m<n>.avro``, where ``uuid`` is new per commit (one
path factory) and ``n`` counts that commit's files from 1. Iceberg snapshot ids and sequence numbers are Paimon's
snapshot ids. Schemas and partition specs are kept as their JSON objects, so a base file's are carried verbatim.
"""

from __future__ import annotations

import json
import uuid as uuid_module
from dataclasses import dataclass, field
from typing import Any

from table_engine.errors import CorruptMetadataError

FORMAT_VERSION = 2
VERSION_HINT_FILENAME = "version-hint.text"
SPEC_ID = 0
"""Paimon has no partition evolution: one spec, id 0."""
SORT_ORDER_ID = 0
APPEND = "append"
OVERWRITE = "overwrite"
COMMIT_IDENTITY = "paimon-commit-identity"
"""Snapshot summary key naming the Paimon commit the Iceberg snapshot mirrors (Paimon Java's later releases write
it too): a rolled-back or re-created timeline reuses snapshot ids, and this tells its metadata apart."""


@dataclass
class IcebergPathFactory:
    """The file names of one commit's Iceberg metadata under ``metadata_dir``."""

    metadata_dir: str
    uuid: str = field(default_factory=lambda: str(uuid_module.uuid4()))
    manifest_count: int = 0
    manifest_list_count: int = 0
    written: list[str] = field(default_factory=list)
    """every manifest and manifest list path handed out (a commit that loses ``v<N>`` to another deletes them)"""
    published: bool = False
    """``v<N>`` of this commit was created: its files are in use, never deleted as a failed commit's"""

    def new_manifest(self) -> str:
        self.manifest_count += 1
        path = f"{self.metadata_dir}/{self.uuid}-m{self.manifest_count}.avro"
        self.written.append(path)
        return path

    def new_manifest_list(self) -> str:
        self.manifest_list_count += 1
        path = f"{self.metadata_dir}/snap-{self.manifest_list_count}-{self.uuid}.avro"
        self.written.append(path)
        return path

    def metadata_file(self, snapshot_id: int) -> str:
        return f"{self.metadata_dir}/v{snapshot_id}.metadata.json"

    def version_hint(self) -> str:
        return f"{self.metadata_dir}/{VERSION_HINT_FILENAME}"


def metadata_version(name: str) -> int | None:
    """The N of ``vN.metadata.json`` (None for another name)."""
    if not (name.startswith("v") and name.endswith(".metadata.json")):
        return None
    digits = name[1:-len(".metadata.json")]
    return int(digits) if digits.isdigit() else None


@dataclass(frozen=True)
class IcebergSnapshot:
    """One snapshot of the metadata JSON."""

    sequence_number: int
    snapshot_id: int
    timestamp_ms: int
    operation: str
    manifest_list: str
    schema_id: int
    identity: str | None = None
    """:data:`COMMIT_IDENTITY` (None in metadata written without it: Paimon Java 1.0)"""

    def to_json(self) -> dict[str, Any]:
        summary = {"operation": self.operation}
        if self.identity is not None:
            summary[COMMIT_IDENTITY] = self.identity
        return {"sequence-number": self.sequence_number, "snapshot-id": self.snapshot_id,
                "timestamp-ms": self.timestamp_ms, "summary": summary,
                "manifest-list": self.manifest_list, "schema-id": self.schema_id}

    @staticmethod
    def from_json(d: dict[str, Any]) -> IcebergSnapshot:
        identity = d["summary"].get(COMMIT_IDENTITY)
        return IcebergSnapshot(int(d["sequence-number"]), int(d["snapshot-id"]), int(d["timestamp-ms"]),
                               str(d["summary"]["operation"]), str(d["manifest-list"]), int(d["schema-id"]),
                               None if identity is None else str(identity))


@dataclass(frozen=True)
class IcebergMetadata:
    """The metadata JSON (format version 2), keys in Java's order."""

    table_uuid: str
    location: str
    last_sequence_number: int
    last_updated_ms: int
    last_column_id: int
    schemas: list[dict[str, Any]]
    current_schema_id: int
    partition_specs: list[dict[str, Any]]
    last_partition_id: int
    snapshots: list[IcebergSnapshot]
    current_snapshot_id: int
    properties: dict[str, str] = field(default_factory=dict)

    def current_snapshot(self) -> IcebergSnapshot:
        for s in self.snapshots:
            if s.snapshot_id == self.current_snapshot_id:
                return s
        raise CorruptMetadataError(f"Iceberg metadata has no snapshot {self.current_snapshot_id}")

    def to_json(self) -> str:
        doc = {"format-version": FORMAT_VERSION, "table-uuid": self.table_uuid, "location": self.location,
               "last-sequence-number": self.last_sequence_number, "last-updated-ms": self.last_updated_ms,
               "last-column-id": self.last_column_id, "schemas": self.schemas,
               "current-schema-id": self.current_schema_id, "partition-specs": self.partition_specs,
               "default-spec-id": SPEC_ID, "last-partition-id": self.last_partition_id,
               "sort-orders": [{"order-id": SORT_ORDER_ID, "fields": []}], "default-sort-order-id": SORT_ORDER_ID,
               "snapshots": [s.to_json() for s in self.snapshots], "current-snapshot-id": self.current_snapshot_id,
               "properties": self.properties}
        return json.dumps(doc, indent=2)

    @staticmethod
    def from_json(text: str, path: str = "<metadata>") -> IcebergMetadata:
        try:
            d = json.loads(text)
            return IcebergMetadata(
                str(d["table-uuid"]), str(d["location"]), int(d["last-sequence-number"]), int(d["last-updated-ms"]),
                int(d["last-column-id"]), list(d["schemas"]), int(d["current-schema-id"]),
                list(d["partition-specs"]), int(d["last-partition-id"]),
                [IcebergSnapshot.from_json(s) for s in d["snapshots"]], int(d["current-snapshot-id"]),
                dict(d.get("properties") or {}))
        except (ValueError, KeyError, TypeError) as exc:
            raise CorruptMetadataError(f"cannot parse Iceberg metadata {path}: {exc}") from exc
