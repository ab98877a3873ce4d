"""Clone a table to another location (Paimon's ``clone`` procedure, the Paimon-to-Paimon form of Paimon 1.0).

What a clone copies: the source's schema files up to the chosen snapshot's schema (byte for byte: data files name
their schema id) and the data files that snapshot references, then it commits, through the target's own commit path
(:class:`~table_engine.store.committing.commit.FileStoreCommit`), one COMPACT snapshot that makes the target's live
files exactly the source snapshot's. The target's manifests are its own (written by its commit); a reader of the
target sees either the previous clone or the new one, never a half-copied table (ADR 0051).

A re-run is incremental: a data file the target already holds (same path, same size) is not copied again, and the
commit adds only the files the target lacks and drops the ones the source no longer references. The commit user is
:data:`CLONE_USER` and the commit identifier the source snapshot's id, so a clone of a snapshot already cloned
commits nothing (the commit's exactly-once check). A target table with snapshots that a clone did not commit is
refused before anything is written, as are sources the copy could not reproduce (external data paths, row
tracking). Index files (deletion vectors, bucket indexes) are copied and committed like data files.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from table_engine.errors import (
    CommitConflictError,
    SnapshotNotExistError,
    TableAlreadyExistError,
    UnsupportedError,
)
from table_engine.format.index_manifest import IndexManifestEntry
from table_engine.format.manifest import FileIdentifier, ManifestEntry
from table_engine.format.schema_file import list_schema_ids, schema_path
from table_engine.format.snapshot import Snapshot
from table_engine.io.base import FileIO
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.paths import PathFactory
from table_engine.store.reading.scan import live_entries
from table_engine.table.table import Table

log = logging.getLogger(__name__)

__all__ = ["CLONE_USER", "CloneResult", "check_clonable", "clone_table", "copy_file"]

CLONE_USER = "__paimon-clone"
"""The commit user of every snapshot a clone commits (its commit identifier: the source snapshot's id)."""

_CHUNK = 8 << 20
_PROGRESS_SECONDS = 10.0


@dataclass(frozen=True)
class CloneResult:
    """What one table's clone did."""

    source: str
    target: str
    source_snapshot_id: int | None
    """The snapshot cloned (None: the source has none, nothing to clone)."""
    snapshot_id: int | None
    """The target's snapshot holding the clone (the one committed, or the earlier clone of the same snapshot)."""
    files_total: int
    """Data files the source snapshot references."""
    files_copied: int
    bytes_copied: int
    files_removed: int
    """Files of the previous clone the new snapshot no longer references (left for orphan cleanup)."""
    schemas_copied: int


def check_clonable(source: Table, snapshot: Snapshot, entries: list[ManifestEntry],
                   index: list[IndexManifestEntry]) -> None:
    """Refuse by name what a file copy would not reproduce: data or index files at external paths, row tracking
    and its global indexes (ids a new commit would reassign)."""
    where = f"clone of table {source.identifier} (snapshot {snapshot.id})"
    external = next((e.file.external_path for e in entries if e.file.external_path), None)
    if external:
        raise UnsupportedError(f"{where}: data file {external} is at an external path "
                               "('data-file.external-paths'); clone copies files under the table's location only")
    external_index = next((i.index_file.external_path for i in index if i.index_file.external_path), None)
    if external_index:
        raise UnsupportedError(f"{where}: index file {external_index} is at an external path; clone copies files "
                               "under the table's location only")
    if source.options.row_tracking_enabled() or source.options.data_evolution_enabled():
        raise UnsupportedError(f"{where}: 'row-tracking.enabled' / 'data-evolution.enabled' tables keep row ids a "
                               "new commit would reassign; clone does not copy them")


def _resolve(source: Table, snapshot_id: int | None, tag: str | None) -> Snapshot | None:
    if snapshot_id is not None:
        if snapshot_id not in {s.id for s in source.snapshots()}:
            raise SnapshotNotExistError(f"clone of table {source.identifier}: snapshot {snapshot_id} does not exist")
        return source.snapshot(snapshot_id)
    if tag is not None:
        return source.tag_snapshot(tag)
    return source.latest_snapshot()


def _schemas_to_copy(source: Table, target_io: FileIO, target_path: str, target: str, upto: int) -> list[int]:
    """The source schema ids up to ``upto`` the target lacks; a target schema file that differs is refused."""
    missing = []
    existing = set(list_schema_ids(target_io, target_path))
    for sid in list_schema_ids(source.file_io, source.path):
        if sid > upto:
            continue
        if sid not in existing:
            missing.append(sid)
        elif target_io.read_bytes(schema_path(target_path, sid)) != source.file_io.read_bytes(
                schema_path(source.path, sid)):
            raise TableAlreadyExistError(f"clone of table {source.identifier} to {target}: the target's schema-{sid} "
                                         "differs from the source's (a table the clone did not make)")
    return missing


def copy_file(src_io: FileIO, src: str, dst_io: FileIO, dst: str) -> int:
    """Copy one file in chunks of 8 MiB (bounded memory); the bytes copied."""
    n = 0
    with src_io.open_input(src) as inp, dst_io.open_output(dst) as out:
        while chunk := inp.read(_CHUNK):
            out.write(chunk)
            n += len(chunk)
    return n


def _paths(pf: PathFactory, e: ManifestEntry) -> list[str]:
    return pf.data_file_with_extras(e.partition, e.bucket, e.file)


def clone_table(source: Table, target_io: FileIO, target_path: str, target: str,
                open_target: Callable[[bool], Table], *, snapshot_id: int | None = None,
                tag: str | None = None) -> CloneResult:
    """Clone ``source`` at ``snapshot_id`` / ``tag`` (default: its latest snapshot) to the table ``target`` at
    ``target_path`` on ``target_io``; ``open_target(False)`` opens the target table that is there before anything is
    written, then ``open_target(True)`` once this run copied schemas (a metastore catalog registers the table, or its
    new schema, then; ``open_target(False)`` when there were none to copy).

    Every check runs before anything is written: the target must not exist, or hold only what clones committed
    (schemas byte-identical to the source's, every snapshot's commit user :data:`CLONE_USER`)."""
    where = f"clone of table {source.identifier} to {target}"
    if target_path.rstrip("/") == source.path.rstrip("/"):
        raise TableAlreadyExistError(f"{where}: the target is the source table itself ({target_path})")
    snap = _resolve(source, snapshot_id, tag)
    if snap is None:
        log.info("%s: the source has no snapshot, nothing to clone", where)
        return CloneResult(source.identifier, target, None, None, 0, 0, 0, 0, 0)
    entries = live_entries(source.file_io, source.path, snap)
    index = source.store.index_entries(snap)
    check_clonable(source, snap, entries, index)
    target_table: Table | None = open_target(False) if list_schema_ids(target_io, target_path) else None
    previous = target_table.latest_snapshot() if target_table is not None else None
    if target_table is not None:
        foreign = next((s for s in target_table.snapshots() if s.commit_user != CLONE_USER), None)
        if foreign is not None:
            raise TableAlreadyExistError(f"{where}: the target has data a clone did not write (snapshot "
                                         f"{foreign.id} by commit user {foreign.commit_user!r}); clone into a new "
                                         "or cloned table")
        if previous is not None and previous.commit_identifier > snap.id:
            raise TableAlreadyExistError(f"{where}: the target holds a clone of source snapshot "
                                         f"{previous.commit_identifier}, newer than snapshot {snap.id}")
    schemas = _schemas_to_copy(source, target_io, target_path, target, snap.schema_id)

    # what the target has and what it must have, by Paimon's file identity
    have: dict[FileIdentifier, ManifestEntry] = (
        {e.identifier(): e for e in live_entries(target_io, target_path, previous)} if target_table else {})
    want = {e.identifier(): e for e in entries}
    added = [e for k, e in want.items() if k not in have]
    removed = [e for k, e in have.items() if k not in want]
    have_index = ({e.identifier(): e for e in target_table.store.index_entries(previous)}
                  if target_table is not None else {})
    want_index = {e.identifier(): e for e in index}
    index_added = [e for k, e in want_index.items() if k not in have_index]
    index_removed = [e for k, e in have_index.items() if k not in want_index]
    if (previous is not None and previous.commit_identifier == snap.id and not added and not removed
            and not index_added and not index_removed):
        log.info("%s: the target already holds snapshot %s (its snapshot %s)", where, snap.id, previous.id)
        return CloneResult(source.identifier, target, snap.id, previous.id, len(entries), 0, 0, 0, 0)

    # 1. schemas (a table with no snapshot reads empty), 2. data files, 3. the snapshot (the target's commit)
    for sid in schemas:
        target_io.write_if_absent(schema_path(target_path, sid), source.file_io.read_bytes(
            schema_path(source.path, sid)))
    target_table = open_target(bool(schemas))
    src_pf, dst_pf = source.store.path_factory, target_table.store.path_factory
    copied = nbytes = 0
    last_log = time.monotonic()
    total_bytes = sum(e.file.file_size for e in added) + sum(e.index_file.file_size for e in index_added)
    copies: list[list[tuple[str, str]]] = [
        *(list(zip(_paths(src_pf, e), _paths(dst_pf, e), strict=True)) for e in added),
        *([(src_pf.index_file(e.index_file), dst_pf.index_file(e.index_file))] for e in index_added)]
    for i, pairs in enumerate(copies, 1):
        for src, dst in pairs:
            if target_io.exists(dst) and target_io.file_size(dst) == source.file_io.file_size(src):
                continue  # copied by an earlier run (same name and size)
            nbytes += copy_file(source.file_io, src, target_io, dst)
            copied += 1
        if time.monotonic() - last_log >= _PROGRESS_SECONDS or i == len(copies):
            last_log = time.monotonic()
            log.info("%s: %d/%d new data and index files done (%d copied, %d of %d bytes)", where, i, len(copies),
                     copied, nbytes, total_bytes)
    new_id = _commit(target_table, added, removed, index_added, index_removed, snap.id)
    log.info("%s: source snapshot %s is the target's snapshot %s (%d files copied, %d bytes, %d dropped)", where,
             snap.id, new_id, copied, nbytes, len(removed))
    return CloneResult(source.identifier, target, snap.id, new_id, len(entries), copied, nbytes, len(removed),
                       len(schemas))


def _commit(target: Table, added: list[ManifestEntry], removed: list[ManifestEntry],
            index_added: list[IndexManifestEntry], index_removed: list[IndexManifestEntry],
            source_id: int) -> int | None:
    """One COMPACT snapshot replacing ``removed`` by ``added`` and ``index_removed`` by ``index_added`` (per
    partition and bucket), committed by :data:`CLONE_USER` with the source snapshot's id as identifier."""
    groups: dict[tuple[bytes, int], CommitMessage] = {}

    def message(partition: bytes, bucket: int, total_buckets: int) -> CommitMessage:
        return groups.setdefault((partition, bucket), CommitMessage(partition=partition, bucket=bucket,
                                                                   total_buckets=total_buckets))

    for e in removed:
        message(e.partition, e.bucket, e.total_buckets).compact_before.append(e.file)
    for e in added:
        message(e.partition, e.bucket, e.total_buckets).compact_after.append(e.file)
    buckets = {(e.partition, e.bucket): e.total_buckets for e in (*removed, *added)}
    total = target.options.bucket()
    for ie in index_removed:
        m = message(ie.partition, ie.bucket, buckets.get((ie.partition, ie.bucket), total))
        m.deleted_index_files.append(ie.index_file)
    for ie in index_added:
        m = message(ie.partition, ie.bucket, buckets.get((ie.partition, ie.bucket), total))
        m.new_index_files.append(ie.index_file)
    commit = target.new_commit(CLONE_USER)
    sid = commit.commit(list(groups.values()), commit_identifier=source_id, allow_empty=True)
    latest = target.latest_snapshot()
    if latest is None or latest.commit_user != CLONE_USER or latest.commit_identifier != source_id:
        # the commit dropped the change (a concurrent commit to the target made it conflict): not a clone
        raise CommitConflictError(f"clone to {target.identifier}: another commit changed the target during the "
                                  f"clone (its latest snapshot {latest.id if latest else None} is not the clone of "
                                  f"source snapshot {source_id}); run the clone again")
    return sid if sid is not None else latest.id
