"""The metadata surface of a table: its snapshots, the read-only :meth:`metadata` queries, and its consumers."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
    from table_engine.store.lifecycle.health import TableHealth
    from table_engine.store.partition_spec import PartitionSpecs


class MetadataSurface(TableBase):
    """Snapshots (latest, earliest, by id, all), :meth:`metadata`, :meth:`health` and consumers (list, reset,
    clear)."""

    def latest_snapshot(self) -> Snapshot | None:
        return self.store.latest_snapshot()

    def metadata(self) -> TableMetadata:
        """Read-only metadata queries (no data file read, nothing written): the snapshot that landed after an id or
        a time, of a commit kind, touching a partition; a partition's live files, rows and done mark."""
        return TableMetadata(self.store)

    def health(self, partitions: PartitionSpecs | None = None, *, orphans: bool = False,
               max_orphan_files: int | None = None, orphans_older_than_millis: int | None = None) -> TableHealth:
        """The table's health from metadata only (no data file read, nothing written; docs/health.md): per bucket
        and partition of the latest snapshot (of ``partitions`` if given) its files, level-0 files, sorted runs,
        small files, deletion-vector ratio and postpone backlog; snapshots and changelogs against their retention,
        consumers and their lag, tags, branches, the last compaction, tag and expiry; with ``orphans`` the orphan
        candidates older than ``orphans_older_than_millis`` (default: one day ago), ``max_orphan_files`` files
        listed at most."""
        from table_engine.store.lifecycle.health import DEFAULT_MAX_ORPHAN_FILES, table_health
        from table_engine.store.partition_spec import partition_specs

        specs = partition_specs(partitions, self.schema.partition_fields(), self.store.options.partition_default_name(),
                                self.identifier) or []
        return table_health(self.store, self.identifier, partitions=specs, orphans=orphans,
                            max_orphan_files=DEFAULT_MAX_ORPHAN_FILES if max_orphan_files is None else max_orphan_files,
                            orphans_older_than_millis=orphans_older_than_millis)

    def snapshot(self, snapshot_id: int) -> Snapshot:
        return read_snapshot(self.file_io, self.path, snapshot_id)

    def snapshots(self) -> list[Snapshot]:
        """Every live snapshot, oldest first."""
        return [read_snapshot(self.file_io, self.path, i) for i in list_snapshot_ids(self.file_io, self.path)]

    def latest_snapshot_id(self) -> int | None:
        return latest_snapshot_id(self.file_io, self.path)

    def earliest_snapshot_id(self) -> int | None:
        return earliest_snapshot_id(self.file_io, self.path)

    @mutating
    def consumer_manager(self) -> ConsumerManager:
        """The consumer manager (creates, updates, clears and expires consumers)."""
        return self._consumer_manager()

    def _consumer_manager(self) -> ConsumerManager:
        from table_engine.store.changes.consumers import ConsumerManager

        return ConsumerManager(self.file_io, self.path)

    def consumers(self) -> dict[str, int]:
        """Consumer id -> next snapshot id."""
        return self._consumer_manager().consumers()

    @mutating
    def reset_consumer(self, consumer_id: str, next_snapshot_id: int | None = None) -> None:
        """Set a consumer's next snapshot, or delete the consumer when ``next_snapshot_id`` is None."""
        self.consumer_manager().reset(consumer_id, next_snapshot_id)

    @mutating
    def clear_consumers(self, including: str = ".*", excluding: str | None = None,
                        dry_run: bool = False) -> list[str]:
        """Delete consumers whose id fully matches regex ``including`` and not ``excluding`` (``dry_run``: only list
        them)."""
        return self.consumer_manager().clear(including, excluding, dry_run)
