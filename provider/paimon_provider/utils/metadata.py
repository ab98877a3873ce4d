"""Table metadata checks for sensors and triggers, through the engine's read-only metadata API.

Nothing here imports Airflow or PySpark, builds an engine path or a FileIO: the functions take the engine's
:class:`~table_engine.table.Table` (None while the table does not exist), ask its
:meth:`~table_engine.table.Table.metadata` view (:mod:`table_engine.store.reading.table_metadata`), and return plain
dataclasses, so a sensor's ``poke`` and a trigger's poll loop (in the triggerer, in a thread) share them.

Importing it loads nothing of the engine (the sensors and the AssetWatcher trigger import it when a DAG file is
parsed): the engine's modules are imported where they are used.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from table_engine import Snapshot
    from table_engine.catalog import Catalog
    from table_engine.table import Table

__all__ = ["COMMIT_KINDS", "NewSnapshot", "PartitionInfo", "SnapshotInfo", "SnapshotPoll", "find_snapshot",
           "latest_snapshot_info", "new_snapshots", "open_table", "parse_commit_kinds",
           "partition_info"]

COMMIT_KINDS = ("APPEND", "COMPACT", "OVERWRITE", "ANALYZE")
"""Paimon's commit kinds (``commitKind`` of a snapshot) a sensor or trigger can wait for."""


@dataclass(frozen=True)
class SnapshotInfo:
    """What a sensor returns (XCom) about a snapshot."""

    snapshot_id: int
    commit_kind: str
    time_millis: int
    schema_id: int
    total_record_count: int | None
    delta_record_count: int | None
    changelog_record_count: int | None
    commit_user: str

    @staticmethod
    def of(snapshot: Snapshot) -> SnapshotInfo:
        return SnapshotInfo(snapshot.id, str(snapshot.commit_kind), snapshot.time_millis, snapshot.schema_id,
                            snapshot.total_record_count, snapshot.delta_record_count,
                            snapshot.changelog_record_count, snapshot.commit_user)

    def to_dict(self) -> dict[str, Any]:
        return {"snapshot_id": self.snapshot_id, "commit_kind": self.commit_kind, "time_millis": self.time_millis,
                "schema_id": self.schema_id, "total_record_count": self.total_record_count,
                "delta_record_count": self.delta_record_count,
                "changelog_record_count": self.changelog_record_count, "commit_user": self.commit_user}


@dataclass(frozen=True)
class PartitionInfo:
    """A partition of the latest snapshot: its live files and the rows they hold (before merging by key; zero when
    the partition has no data), and whether it is marked done (a ``_SUCCESS`` file)."""

    partition: dict[str, str]
    snapshot_id: int | None
    file_count: int
    row_count: int
    done: bool

    def to_dict(self) -> dict[str, Any]:
        return {"partition": dict(self.partition), "snapshot_id": self.snapshot_id, "file_count": self.file_count,
                "row_count": self.row_count, "done": self.done}


def open_table(catalog: Catalog, identifier: str) -> Table | None:
    """The table, or None while it does not exist (a sensor waits for it to be created)."""
    from table_engine.errors import TableNotExistError

    try:
        return catalog.get_table(identifier)
    except TableNotExistError:
        return None


# ---------------------------------------------------------------------------------------------- snapshots


def find_snapshot(
    table: Table | None,
    *,
    after_snapshot_id: int | None = None,
    after_time_millis: int | None = None,
    commit_kinds: Collection[str] = (),
    partition: Mapping[str, Any] | None = None,
) -> SnapshotInfo | None:
    """The oldest snapshot newer than ``after_snapshot_id`` and committed after ``after_time_millis`` (both
    optional) that has one of ``commit_kinds`` (any if empty) and touches ``partition`` (any if None); see
    :meth:`TableMetadata.find_snapshot <table_engine.store.reading.table_metadata.TableMetadata.find_snapshot>`.

    ``None`` while there is none, including while the table does not exist yet (``table`` None).
    """
    if table is None:
        return None
    snap = table.metadata().find_snapshot(after_snapshot_id=after_snapshot_id, after_time_millis=after_time_millis,
                                          commit_kinds=commit_kinds, partition=partition or None)
    return None if snap is None else SnapshotInfo.of(snap)


@dataclass(frozen=True)
class NewSnapshot:
    """A snapshot a poll found: its facts, its ``properties`` (None when it has none), and whether it passes the
    poll's commit-kind and partition filters."""

    info: SnapshotInfo
    properties: dict[str, str] | None
    matches: bool


@dataclass(frozen=True)
class SnapshotPoll:
    """The snapshots newer than a watermark (id order), the ids (first, last) that expired unread, and the newest
    snapshot id when the table was rolled back below the watermark."""

    snapshots: list[NewSnapshot]
    expired: tuple[int, int] | None
    rolled_back_to: int | None = None


def new_snapshots(table: Table, after_snapshot_id: int, *, commit_kinds: Collection[str] = (),
                  partition: Mapping[str, Any] | None = None, limit: int = 100) -> SnapshotPoll:
    """The snapshots newer than ``after_snapshot_id`` (at most ``limit``), each marked whether it has one of
    ``commit_kinds`` (any if empty) and touches ``partition`` (any if None); see
    :meth:`TableMetadata.snapshots_after <table_engine.store.reading.table_metadata.TableMetadata.snapshots_after>`
    (one GET and one HEAD when there is nothing new)."""
    meta = table.metadata()
    found = meta.snapshots_after(after_snapshot_id, limit)
    kinds = {k.upper() for k in commit_kinds}
    out = []
    for snap in found.snapshots:
        matches = (not kinds or str(snap.commit_kind) in kinds) and (
            not partition or meta.touches(snap, partition))
        out.append(NewSnapshot(SnapshotInfo.of(snap), dict(snap.properties) if snap.properties else None, matches))
    return SnapshotPoll(out, found.expired, found.rolled_back_to)


def latest_snapshot_info(table: Table | None) -> SnapshotInfo | None:
    """The newest snapshot, or ``None`` (no snapshot, or no table)."""
    snap = None if table is None else table.metadata().latest_snapshot()
    return None if snap is None else SnapshotInfo.of(snap)


# ---------------------------------------------------------------------------------------------- partitions


def partition_info(table: Table | None, partition: Mapping[str, Any]) -> PartitionInfo | None:
    """Live files and rows of a partition in the latest snapshot, and whether it is marked done; ``None`` while
    the table does not exist."""
    if table is None:
        return None
    stats = table.metadata().partition_stats(partition)
    return PartitionInfo({k: str(v) for k, v in partition.items()}, stats.snapshot_id, stats.file_count,
                         stats.row_count, stats.done)


# ---------------------------------------------------------------------------------------------- argument parsing


def parse_commit_kinds(value: Collection[str] | str | None) -> list[str]:
    """Commit kinds from a list or comma-separated text, upper-cased; a ValueError names an unknown one."""
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else value
    kinds = [k.strip().upper() for k in items if k and k.strip()]
    bad = sorted(set(kinds) - set(COMMIT_KINDS))
    if bad:
        raise ValueError(f"unknown commit kinds {bad}; expected some of {sorted(COMMIT_KINDS)}")
    return kinds
