"""Table metadata checks for sensors and triggers: snapshot files, manifests and partition directories only.

Nothing here imports Airflow or PySpark: the functions take a :class:`~table_engine.io.file_io.FileIO` and a table
directory, read Paimon metadata through :mod:`table_engine.format.snapshot` and :mod:`table_engine.store.scan`, and
return plain dataclasses, so a sensor's ``poke`` and a trigger's poll loop (in the triggerer, in a thread) share them.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from table_engine.catalog import parse_identifier
from table_engine.core_options import CoreOptions
from table_engine.errors import SnapshotNotExistError
from table_engine.format.manifest import read_manifest
from table_engine.format.manifest_list import read_manifest_list
from table_engine.format.schema_file import TableSchema, latest_schema
from table_engine.format.snapshot import (
    Snapshot,
    earliest_snapshot_id,
    latest_snapshot_id,
    read_snapshot,
    snapshot_at_or_before_time,
)
from table_engine.io.file_io import FileIO, file_io_for, normalize_path
from table_engine.io.paths import escape_path_name, partition_value_string
from table_engine.store.partition_spec import PartitionSpec, parse_partition_text, select_partitions
from table_engine.store.scan import live_entries, manifest_path

SUCCESS_FILE = "_SUCCESS"
"""Paimon's ``success-file`` mark-done action writes this file into a finished partition's directory."""


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


@dataclass(frozen=True)
class TableLocation:
    """Where a table lives: a FileIO and the table directory (``<warehouse>/<db>.db/<table>``)."""

    file_io: FileIO
    path: str

    @staticmethod
    def of(warehouse: str, table: str) -> TableLocation:
        db, name = parse_identifier(table)
        root = normalize_path(warehouse)
        return TableLocation(file_io_for(root), f"{root}/{db}.db/{name}")


# ---------------------------------------------------------------------------------------------- partition specs


def partition_spec(schema: TableSchema, spec: Mapping[str, Any] | str) -> PartitionSpec:
    """A ``{column: value}`` spec (or ``k=v,..`` text) typed against the table's partition columns (Airflow params
    are strings): the engine's one partition-spec implementation."""
    return PartitionSpec.of(spec, schema.partition_fields(), CoreOptions(schema.options).partition_default_name())


def resolve_partition(schema: TableSchema, spec: Mapping[str, Any] | str) -> dict[str, Any]:
    """Check a spec against the partition keys and type its values (None for the default partition name)."""
    return partition_spec(schema, spec).as_dict()


def partition_matcher(schema: TableSchema,
                      spec: Mapping[str, Any] | str) -> Callable[[Iterable[bytes]], set[bytes]]:
    """Which of some encoded partition BinaryRows match ``spec`` (vectorized over the distinct partitions)."""
    typed = partition_spec(schema, spec)
    fields = schema.partition_fields()

    def matches(partitions: Iterable[bytes]) -> set[bytes]:
        return select_partitions(partitions, [typed], fields)

    return matches


def partition_directory(table_path: str, schema: TableSchema, spec: Mapping[str, Any]) -> str:
    """The directory of a fully specified partition (Paimon's ``k=v/...`` naming with escaping)."""
    wanted = resolve_partition(schema, spec)
    missing = [k for k in schema.partition_keys if k not in wanted]
    if missing:
        raise ValueError(f"a partition directory needs every partition key; missing {missing}")
    default = CoreOptions(schema.options).partition_default_name()
    parts = [f"{escape_path_name(f.name)}={escape_path_name(partition_value_string(wanted[f.name], f.type, default))}"
             for f in schema.partition_fields()]
    return "/".join([table_path.rstrip("/"), *parts])


# ---------------------------------------------------------------------------------------------- snapshots


def _touches_partition(loc: TableLocation, snapshot: Snapshot, matches: Any) -> bool:
    """Did ``snapshot`` add or remove files (data or changelog) of the partition?"""
    for name in (snapshot.delta_manifest_list, snapshot.changelog_manifest_list):
        if not name:
            continue
        for meta in read_manifest_list(loc.file_io, manifest_path(loc.path, name)):
            if matches(e.partition for e in read_manifest(loc.file_io, manifest_path(loc.path, meta.file_name))):
                return True
    return False


def find_snapshot(
    loc: TableLocation,
    *,
    after_snapshot_id: int | None = None,
    after_time_millis: int | None = None,
    commit_kinds: Collection[str] = (),
    partition: Mapping[str, Any] | None = None,
) -> SnapshotInfo | None:
    """The oldest snapshot newer than ``after_snapshot_id`` and committed after ``after_time_millis`` (both
    optional) that has one of ``commit_kinds`` (any if empty) and touches ``partition`` (any if None).

    ``None`` while there is none, including while the table does not exist yet. Snapshots that expire during the
    search are skipped.
    """
    latest = latest_snapshot_id(loc.file_io, loc.path)
    earliest = earliest_snapshot_id(loc.file_io, loc.path)
    if latest is None or earliest is None:
        return None
    start = max(earliest, (after_snapshot_id or 0) + 1)
    if after_time_millis is not None:
        before = snapshot_at_or_before_time(loc.file_io, loc.path, after_time_millis)
        if before is not None:
            start = max(start, before.id + 1)
    kinds = {k.upper() for k in commit_kinds}
    matches = None
    if partition:
        schema = latest_schema(loc.file_io, loc.path)
        if schema is None:
            return None
        matches = partition_matcher(schema, partition)
    for snapshot_id in range(start, latest + 1):
        try:
            snap = read_snapshot(loc.file_io, loc.path, snapshot_id)
        except SnapshotNotExistError:
            continue
        if after_time_millis is not None and snap.time_millis <= after_time_millis:
            continue
        if kinds and str(snap.commit_kind) not in kinds:
            continue
        if matches is not None and not _touches_partition(loc, snap, matches):
            continue
        return SnapshotInfo.of(snap)
    return None


def latest_snapshot_info(loc: TableLocation) -> SnapshotInfo | None:
    """The newest snapshot, or ``None`` (no snapshot, or no table)."""
    snapshot_id = latest_snapshot_id(loc.file_io, loc.path)
    if snapshot_id is None:
        return None
    return SnapshotInfo.of(read_snapshot(loc.file_io, loc.path, snapshot_id))


# ---------------------------------------------------------------------------------------------- partitions


def partition_info(loc: TableLocation, partition: Mapping[str, Any]) -> PartitionInfo | None:
    """Live files and rows of a partition in the latest snapshot, and whether it is marked done; ``None`` while
    the table does not exist."""
    schema = latest_schema(loc.file_io, loc.path)
    if schema is None:
        return None
    matches = partition_matcher(schema, partition)
    snapshot_id = latest_snapshot_id(loc.file_io, loc.path)
    files = rows = 0
    if snapshot_id is not None:
        entries = live_entries(loc.file_io, loc.path, read_snapshot(loc.file_io, loc.path, snapshot_id))
        selected = matches(e.partition for e in entries)
        for entry in entries:
            if entry.partition in selected:
                files += 1
                rows += entry.file.row_count
    done = False
    if set(partition) >= set(schema.partition_keys):
        done = loc.file_io.exists(f"{partition_directory(loc.path, schema, partition)}/{SUCCESS_FILE}")
    return PartitionInfo({k: str(v) for k, v in partition.items()}, snapshot_id, files, rows, done)


# ---------------------------------------------------------------------------------------------- argument parsing


def parse_partition_spec(value: Mapping[str, Any] | str | None) -> dict[str, Any] | None:
    """A partition spec from a mapping or ``k=v,k2=v2`` text (what Airflow params and templates give)."""
    if value is None or value == "" or value == {}:
        return None
    if isinstance(value, Mapping):
        return dict(value)
    return dict(parse_partition_text(str(value))) or None  # the engine's one text form (PartitionSpecError)


def to_epoch_millis(value: Any) -> int | None:
    """A point in time as epoch milliseconds: from a datetime (naive = UTC), ISO-8601 text or a number."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none", "null")):
        return None
    if isinstance(value, bool):
        raise ValueError(f"not a point in time: {value!r}")
    if isinstance(value, int | float):
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        if text.lstrip("-").isdigit():
            return int(text)
        value = datetime.datetime.fromisoformat(text)
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.UTC)
        return int(value.timestamp() * 1000)
    raise ValueError(f"not a point in time: {value!r}")
