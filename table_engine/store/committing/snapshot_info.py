"""Looking up snapshots by who committed them, and what a snapshot changed (for jobs that report on commits)."""

from __future__ import annotations

from dataclasses import dataclass

from table_engine.errors import SnapshotNotExistError
from table_engine.format.bucket import POSTPONE_BUCKET
from table_engine.format.index_manifest import read_index_manifest
from table_engine.format.manifest import FileKind, read_manifest
from table_engine.format.manifest_list import read_manifest_list
from table_engine.format.snapshot import Snapshot, latest_snapshot_id, names_snapshot, read_snapshot
from table_engine.io.file_io import FileIO
from table_engine.io.paths import manifest_path


def find_commit(file_io: FileIO, table_path: str, commit_user: str, identifier: int,
                since_millis: int | None = None) -> Snapshot | None:
    """The snapshot committed by (``commit_user``, ``identifier``), looking back from the latest snapshot.

    As the committer does, the search stops at the newest snapshot of ``commit_user`` (a user commits its
    identifiers in increasing order) or at the earliest live snapshot; also at the first snapshot older than
    ``since_millis`` when given.
    """
    sid = latest_snapshot_id(file_io, table_path)
    while sid is not None and sid >= 1:
        try:
            snap = read_snapshot(file_io, table_path, sid)
        except SnapshotNotExistError:
            return None  # expired: nothing older to find
        if snap.commit_user == commit_user:
            return snap if snap.commit_identifier == identifier else None
        if since_millis is not None and snap.time_millis < since_millis:
            return None
        sid -= 1
    return None


@dataclass(frozen=True)
class SnapshotChanges:
    """The data files a snapshot added and removed (its delta manifest list), and the index files it references."""

    added_files: tuple[str, ...]
    deleted_files: tuple[str, ...]
    added_rows: int
    deleted_rows: int
    index_files: tuple[str, ...]
    partitions: tuple[bytes, ...] = ()
    """The partitions (encoded) whose files the snapshot added or removed, each once, in manifest order."""
    deleted_postponed_rows: int = 0
    """Rows of the files it removed from the postpone bucket (``bucket`` = -2): rows a compaction made visible."""
    added_bytes: int = 0
    """Bytes of the data files it added."""


@names_snapshot
def snapshot_changes(file_io: FileIO, table_path: str, snapshot: Snapshot) -> SnapshotChanges:
    """The :class:`SnapshotChanges` of ``snapshot``, read from its delta manifest list."""
    added: list[str] = []
    deleted: list[str] = []
    rows = [0, 0, 0, 0]  # added rows, deleted rows, deleted postponed rows, added bytes
    partitions: dict[bytes, None] = {}
    for meta in read_manifest_list(file_io, manifest_path(table_path, snapshot.delta_manifest_list)):
        for e in read_manifest(file_io, manifest_path(table_path, meta.file_name)):
            (added if e.kind == FileKind.ADD else deleted).append(e.file.file_name)
            rows[0 if e.kind == FileKind.ADD else 1] += e.file.row_count
            if e.kind == FileKind.ADD:
                rows[3] += e.file.file_size
            partitions[e.partition] = None
            if e.kind != FileKind.ADD and e.bucket == POSTPONE_BUCKET:
                rows[2] += e.file.row_count
    index: list[str] = []
    if snapshot.index_manifest:
        index = [ie.index_file.file_name
                 for ie in read_index_manifest(file_io, manifest_path(table_path, snapshot.index_manifest))]
    return SnapshotChanges(tuple(added), tuple(deleted), rows[0], rows[1], tuple(index), tuple(partitions),
                           rows[2], rows[3])
