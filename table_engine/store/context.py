"""What the store layer needs to know about a table, without depending on the table facade."""

from __future__ import annotations

from dataclasses import dataclass, field

from table_engine.core_options import CoreOptions
from table_engine.format.index_manifest import IndexManifestEntry, read_index_manifest
from table_engine.format.schema_file import TableSchema, read_schema
from table_engine.format.snapshot import Snapshot, latest_snapshot_id, names_snapshot, read_snapshot
from table_engine.io.file_io import FileIO
from table_engine.io.paths import manifest_dir


@dataclass
class StoreContext:
    """A table's location, current schema and options; loads older schemas and snapshots on demand."""

    file_io: FileIO
    table_path: str
    schema: TableSchema
    options: CoreOptions
    _schemas: dict[int, TableSchema] = field(default_factory=dict)

    def schema_by_id(self, schema_id: int) -> TableSchema:
        if schema_id == self.schema.id:
            return self.schema
        s = self._schemas.get(schema_id)
        if s is None:
            s = read_schema(self.file_io, self.table_path, schema_id)
            self._schemas[schema_id] = s
        return s

    def latest_snapshot(self, exact: bool = False) -> Snapshot | None:
        """The newest snapshot (``exact``: see :func:`latest_snapshot_id`; for committers)."""
        sid = latest_snapshot_id(self.file_io, self.table_path, exact)
        return None if sid is None else read_snapshot(self.file_io, self.table_path, sid)

    @names_snapshot
    def index_entries(self, snapshot: Snapshot | None) -> list[IndexManifestEntry]:
        if snapshot is None or not snapshot.index_manifest:
            return []
        return read_index_manifest(self.file_io, f"{manifest_dir(self.table_path)}/{snapshot.index_manifest}")
