"""The metadata surface of a table: its snapshots, the read-only :meth:`metadata` queries, and its consumers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from table_engine.features import Op
from table_engine.format.snapshot import (
    Snapshot,
    earliest_snapshot_id,
    latest_snapshot_id,
    list_snapshot_ids,
    read_snapshot,
)
from table_engine.store.reading.table_metadata import TableMetadata
from table_engine.table.base import TableBase, mutating

if TYPE_CHECKING:
    from table_engine.store.changes.consumers import ConsumerManager


class MetadataSurface(TableBase):
    """Snapshots (latest, earliest, by id, all), :meth:`metadata`, :meth:`health` and consumers (list, reset,
    clear)."""

    def latest_snapshot(self) -> Snapshot | None:
        return self.store.latest_snapshot()

    def metadata(self) -> TableMetadata:
        """Read-only metadata queries (no data file read, nothing written): the snapshot that landed after an id or
        a time, of a commit kind, touching a partition; a partition's live files, rows and done mark."""
        return TableMetadata(self.store)


    def snapshot(self, snapshot_id: int) -> Snapshot:
        return read_snapshot(self.file_io, self.path, snapshot_id)

    def snapshots(self) -> list[Snapshot]:
        """Every live snapshot, oldest first."""
        return [read_snapshot(self.file_io, self.path, i) for i in list_snapshot_ids(self.file_io, self.path)]

    def latest_snapshot_id(self) -> int | None:
        return latest_snapshot_id(self.file_io, self.path)

    def earliest_snapshot_id(self) -> int | None:
        return earliest_snapshot_id(self.file_io, self.path)

    @mutating(Op.MAINTAIN)
    def consumer_manager(self) -> ConsumerManager:
        """The consumer manager (creates, updates, clears and expires consumers)."""
        return self._consumer_manager()

    def _consumer_manager(self) -> ConsumerManager:
        from table_engine.store.changes.consumers import ConsumerManager

        return ConsumerManager(self.file_io, self.path)

    def consumers(self) -> dict[str, int]:
        """Consumer id -> next snapshot id."""
        return self._consumer_manager().consumers()
