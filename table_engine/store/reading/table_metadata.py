"""Read-only metadata queries of a table: which snapshot landed, what a partition holds, whether it is marked done.

Only snapshot, manifest and partition-directory metadata is read (no data file, no Spark), so a sensor can poll
these cheaply; nothing is ever written. :meth:`Table.metadata <table_engine.table.Table.metadata>` gives the view.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from table_engine.errors import SnapshotNotExistError
from table_engine.format.manifest import read_manifest
from table_engine.format.manifest_list import read_manifest_list
from table_engine.format.snapshot import (
    Snapshot,
    earliest_snapshot_id,
    latest_hint,
    latest_snapshot_id,
    list_snapshot_ids,
    read_snapshot,
    snapshot_at_or_before_time,
    snapshot_path,
)
from table_engine.format.success_file import SUCCESS_FILE, SuccessFile, read_success_file
from table_engine.io.paths import manifest_path, partition_dir
from table_engine.run_identity import RunIdentity
from table_engine.store.context import StoreContext
from table_engine.store.partition_spec import PartitionSpec, select_partitions
from table_engine.store.reading.scan import live_entries

__all__ = ["SUCCESS_FILE", "PartitionStats", "TableMetadata"]

PartitionLike = Mapping[str, Any] | str | PartitionSpec
"""A partition spec: ``{column: value}`` (text or typed values), ``k=v,..`` text, or a typed spec."""


@dataclass(frozen=True)
class PartitionStats:
    """A partition in the latest snapshot (``snapshot_id``, None for a table without snapshots): its live files
    and the rows they hold (before merging by key), and whether it is marked done (its ``_SUCCESS`` file)."""

    snapshot_id: int | None
    file_count: int
    row_count: int
    done: bool


@dataclass(frozen=True)
class NewSnapshots:
    """What :meth:`TableMetadata.snapshots_after` found: the new ``snapshots`` in id order, the ids
    (``expired``: first, last) that were gone before they could be read (expired since the last poll), and
    ``rolled_back_to``: the newest snapshot id when the snapshot asked after is gone and the table's newest is below
    it (a rollback, or the table dropped and re-created)."""

    snapshots: tuple[Snapshot, ...]
    expired: tuple[int, int] | None = None
    rolled_back_to: int | None = None


class TableMetadata:
    """The read-only metadata queries of the table in ``ctx`` (a view: cheap, holds nothing but ``ctx``)."""

    def __init__(self, ctx: StoreContext) -> None:
        self.store = ctx

    def latest_snapshot(self) -> Snapshot | None:
        """The newest snapshot (None for a table without snapshots)."""
        snapshot_id = latest_snapshot_id(self.store.file_io, self.store.table_path)
        return None if snapshot_id is None else read_snapshot(self.store.file_io, self.store.table_path, snapshot_id)

    def snapshot_at_or_before(self, time_millis: int) -> Snapshot | None:
        """The newest live snapshot committed at or before ``time_millis`` (None if there is none)."""
        return snapshot_at_or_before_time(self.store.file_io, self.store.table_path, time_millis)

    def snapshots_after(self, snapshot_id: int, limit: int = 100) -> NewSnapshots:
        """The snapshots newer than ``snapshot_id`` (0: from the first), in id order, at most ``limit``; cheap
        enough to poll: one GET of the ``LATEST`` hint and one HEAD of ``snapshot-<snapshot_id + 1>`` when there is
        nothing new, plus a GET and a HEAD per new snapshot. Committers publish ids contiguously, so the next id
        absent while the hint names a newer one means it expired unread: the read resumes at the earliest snapshot
        still present and ``expired`` names the ids skipped. A ``LATEST`` hint below ``snapshot_id`` costs one more
        HEAD (of ``snapshot-<snapshot_id>``): if it is gone, the table was rolled back (``rolled_back_to``)."""
        fio, path = self.store.file_io, self.store.table_path
        hint = latest_hint(fio, path)
        found: list[Snapshot] = []
        expired: tuple[int, int] | None = None
        next_id = snapshot_id + 1
        while len(found) < limit and fio.is_file(snapshot_path(path, next_id)):
            try:
                found.append(read_snapshot(fio, path, next_id))
            except SnapshotNotExistError:
                break  # expired between the HEAD and the GET: resumed below
            next_id += 1
        if not found and (hint is None or hint > snapshot_id):  # no hint (listed) or the next id expired unread
            earliest = earliest_snapshot_id(fio, path)
            if earliest is not None and earliest > next_id:
                expired = (next_id, earliest - 1)
                return NewSnapshots(self.snapshots_after(earliest - 1, limit).snapshots, expired)
        if not found and hint is not None and hint < snapshot_id and not fio.is_file(snapshot_path(path, snapshot_id)):
            return NewSnapshots((), rolled_back_to=latest_snapshot_id(fio, path) or 0)
        return NewSnapshots(tuple(found), expired)

    def partition_spec(self, spec: PartitionLike) -> PartitionSpec:
        """``spec`` typed against the table's partition columns (PartitionSpecError names a bad column or value)."""
        return PartitionSpec.of(spec, self.store.schema.partition_fields(), self.store.options.partition_default_name())

    def find_snapshot(self, *, after_snapshot_id: int | None = None, after_time_millis: int | None = None,
                      commit_kinds: Collection[str] = (), partition: PartitionLike | None = None) -> Snapshot | None:
        """The oldest snapshot newer than ``after_snapshot_id`` and committed after ``after_time_millis`` (both
        optional) that has one of ``commit_kinds`` (any if empty; case-insensitive) and adds or removes files (data
        or changelog) of ``partition`` (any if None). None while there is none; snapshots that expire during the
        search are skipped."""
        fio, path = self.store.file_io, self.store.table_path
        latest = latest_snapshot_id(fio, path)
        earliest = earliest_snapshot_id(fio, path)
        if latest is None or earliest is None:
            return None
        start = max(earliest, (after_snapshot_id or 0) + 1)
        if after_time_millis is not None:
            before = self.snapshot_at_or_before(after_time_millis)
            if before is not None:
                start = max(start, before.id + 1)
        kinds = {k.upper() for k in commit_kinds}
        spec = None if partition is None else self.partition_spec(partition)
        for snapshot_id in range(start, latest + 1):
            try:
                snap = read_snapshot(fio, path, snapshot_id)
            except SnapshotNotExistError:
                continue
            if after_time_millis is not None and snap.time_millis <= after_time_millis:
                continue
            if kinds and str(snap.commit_kind) not in kinds:
                continue
            if spec is not None and not self._touches(snap, spec):
                continue
            return snap
        return None

    def touches(self, snapshot: Snapshot, partition: PartitionLike) -> bool:
        """Did ``snapshot`` add or remove files (data or changelog) of the partitions ``partition`` selects? Reads
        its delta and changelog manifests (not the table's whole state)."""
        return self._touches(snapshot, self.partition_spec(partition))

    def _touches(self, snapshot: Snapshot, spec: PartitionSpec) -> bool:
        fio, path = self.store.file_io, self.store.table_path
        for name in (snapshot.delta_manifest_list, snapshot.changelog_manifest_list):
            if not name:
                continue
            for meta in read_manifest_list(fio, manifest_path(path, name)):
                entries = read_manifest(fio, manifest_path(path, meta.file_name))
                if self._select((e.partition for e in entries), spec):
                    return True
        return False

    def _select(self, partitions: Iterable[bytes], spec: PartitionSpec) -> set[bytes]:
        return select_partitions(partitions, [spec], self.store.schema.partition_fields())

    def partition_path(self, partition: PartitionLike) -> str:
        """The directory of one partition (every partition column given; Paimon's escaped ``k=v/...`` naming)."""
        spec = self.partition_spec(partition)
        if not spec.is_full:
            missing = [f.name for f in spec.fields if f.name not in spec.as_dict()]
            raise ValueError(f"a partition directory needs every partition key; missing {missing}")
        fields = self.store.schema.partition_fields()
        values = spec.as_dict()
        part = partition_dir([f.name for f in fields], [values[f.name] for f in fields], [f.type for f in fields],
                             self.store.options.partition_default_name())
        return f"{self.store.table_path.rstrip('/')}/{part}"

    def success_file(self, partition: PartitionLike) -> SuccessFile | None:
        """The partition's ``_SUCCESS`` file as Paimon's ``success-file`` mark-done action writes it (parsed by
        :mod:`table_engine.format.success_file`, the one reader and writer); None when it is not marked done or
        the spec selects several partitions."""
        spec = self.partition_spec(partition)
        return read_success_file(self.store.file_io, self.partition_path(spec)) if spec.is_full else None

    def partition_done(self, partition: PartitionLike) -> bool:
        """Is the partition marked done (its ``_SUCCESS`` file is there)? False for a spec of several partitions."""
        return self.success_file(partition) is not None

    def partition_stats(self, partition: PartitionLike) -> PartitionStats:
        """Live files and rows of the partitions ``partition`` selects in the latest snapshot, and whether the
        partition is marked done."""
        spec = self.partition_spec(partition)
        snapshot = self.latest_snapshot()
        files = rows = 0
        if snapshot is not None:
            entries = live_entries(self.store.file_io, self.store.table_path, snapshot)
            selected = self._select((e.partition for e in entries), spec)
            for entry in entries:
                if entry.partition in selected:
                    files += 1
                    rows += entry.file.row_count
        return PartitionStats(None if snapshot is None else snapshot.id, files, rows, self.partition_done(spec))

    # ---- run identity (docs/run-identity.md) ------------------------------------------------------------------
    def run_of(self, snapshot_id: int) -> RunIdentity | None:
        """The Airflow run that committed snapshot ``snapshot_id`` (its ``airflow.*`` snapshot properties); None
        when the snapshot names no run (written outside Airflow, or by Paimon before 1.2).
        SnapshotNotExistError when there is no such snapshot."""
        return RunIdentity.of(read_snapshot(self.store.file_io, self.store.table_path, snapshot_id).properties)

    def snapshots_of_run(self, run_id: str, dag_id: str | None = None) -> list[Snapshot]:
        """The live snapshots the Airflow run ``run_id`` (of DAG ``dag_id``, any DAG if None) committed, oldest
        first (snapshot files only: one listing and one small JSON read per snapshot)."""
        fio, path = self.store.file_io, self.store.table_path
        found = []
        for snapshot_id in list_snapshot_ids(fio, path):
            try:
                snap = read_snapshot(fio, path, snapshot_id)
            except SnapshotNotExistError:
                continue  # expired while we looked
            run = RunIdentity.of(snap.properties)
            if run is not None and run.run_id == run_id and (dag_id is None or run.dag_id == dag_id):
                found.append(snap)
        return found
