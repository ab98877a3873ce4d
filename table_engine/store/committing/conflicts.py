"""Conflict detection: whether a commit's changes still apply to the snapshot it publishes on (Paimon's
``ConflictDetection``).

The committer builds each attempt on the latest snapshot; what other committers published meanwhile may have made
its changes wrong, and no retry can fix that: a file it deletes that is gone (or that it deletes twice), a bucket's
deletion vectors replaced under a compaction, or a compaction whose output would overlap another's in key range.
Each check raises :class:`~table_engine.errors.CommitConflictError` naming the files; none reads storage itself
(the committer hands over what it read of the snapshot).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from table_engine.errors import CommitConflictError
from table_engine.format.index_manifest import DELETION_VECTORS_INDEX, IndexManifestEntry
from table_engine.format.manifest import FileKind, ManifestEntry
from table_engine.lsm.levels import KeyCodec, overlapping_files
from table_engine.types import DataType

__all__ = ["check_deletes", "check_dv_index", "check_live", "check_lsm", "check_vectors_of_deleted"]


def check_deletes(table_path: str, entries: Sequence[ManifestEntry], live: Sequence[ManifestEntry]) -> None:
    """Every file the commit deletes is live (in ``live``) and deleted once (Paimon's ``checkDeleteInEntries``)."""
    live_ids = {e.identifier() for e in live}
    seen: set[Any] = set()
    for e in entries:
        if e.kind != FileKind.DELETE:
            continue
        if e.identifier() in seen:
            raise CommitConflictError(
                f"commit to {table_path} conflicts: file {e.file.file_name} (bucket {e.bucket}) is "
                "deleted twice (two messages compacted the same file)")
        seen.add(e.identifier())
        if e.identifier() not in live_ids:
            raise CommitConflictError(
                f"commit to {table_path} conflicts: file {e.file.file_name} (bucket {e.bucket}) it "
                "deletes is no longer in the table (a concurrent commit removed it)")


def check_live(table_path: str, names: Collection[str], live: Sequence[ManifestEntry]) -> None:
    """Every data file of ``names`` (those a row-level change marked in deletion vectors) is live in ``live``."""
    if not names:
        return
    gone = set(names) - {e.file.file_name for e in live}
    if gone:
        raise CommitConflictError(
            f"commit to {table_path} conflicts: file {sorted(gone)[0]} whose rows it marks deleted is no longer in "
            "the table (a concurrent compaction rewrote it); plan the change again")


def check_dv_index(table_path: str, changes: Sequence[IndexManifestEntry],
                   live_index: Callable[[], Iterable[IndexManifestEntry]]) -> None:
    """A commit that replaces a bucket's deletion-vector index files must replace exactly the live ones: else
    a concurrent compaction changed the bucket's vectors and this commit would lose its deletions.
    ``live_index`` (the snapshot's index entries) is read only when the commit changes deletion vectors."""
    dv = [c for c in changes if c.index_file.index_type == DELETION_VECTORS_INDEX]
    if not dv:
        return
    live: dict[tuple[bytes, int], set[str]] = {}
    for e in live_index():
        if e.index_file.index_type == DELETION_VECTORS_INDEX:
            live.setdefault((e.partition, e.bucket), set()).add(e.index_file.file_name)
    replaced: dict[tuple[bytes, int], set[str]] = {}
    for c in dv:
        names = replaced.setdefault((c.partition, c.bucket), set())
        if c.kind == FileKind.DELETE:
            names.add(c.index_file.file_name)
    for key, names in replaced.items():
        if live.get(key, set()) != names:
            raise CommitConflictError(
                f"commit to {table_path} conflicts: the deletion vectors of bucket {key[1]} changed "
                f"since this compaction read them (live index files {sorted(live.get(key, set()))}, replaced "
                f"{sorted(names)})")


def check_vectors_of_deleted(table_path: str, entries: Sequence[ManifestEntry], changes: Sequence[IndexManifestEntry],
                             live_index: Iterable[IndexManifestEntry]) -> None:
    """A compaction of a deletion-vector table drops the vectors of the files it rewrites (it read them): a live
    vector of a file it deletes, in an index file it does not replace, was written after it read the file (a
    row-level change, a delete by row id), and the rows that vector deletes would come back in the rewritten file.
    CommitConflictError then: the compaction plans again."""
    added = {(e.partition, e.bucket, e.file.file_name) for e in entries if e.kind == FileKind.ADD}
    deleted = {(e.partition, e.bucket, e.file.file_name) for e in entries if e.kind == FileKind.DELETE} - added
    if not deleted:  # (a file deleted and added again under its name, e.g. a file-index rewrite, keeps its rows)
        return
    replaced = {c.identifier() for c in changes if c.kind == FileKind.DELETE}
    for e in live_index:
        if e.index_file.index_type != DELETION_VECTORS_INDEX or e.identifier() in replaced:
            continue
        for dv in e.index_file.dv_ranges or ():
            if (e.partition, e.bucket, dv.data_file_name) in deleted:
                raise CommitConflictError(
                    f"commit to {table_path} conflicts: file {dv.data_file_name} it rewrites got a deletion vector "
                    f"after it was read (index file {e.index_file.file_name}); plan the compaction again")


def check_lsm(table_path: str, entries: Sequence[ManifestEntry], live: Sequence[ManifestEntry],
              key_types: Sequence[DataType]) -> None:
    """Files above level 0 of one (partition, bucket, level) must not overlap in key range after the commit
    (Paimon's ``checkKeyRange``); ``key_types`` are the table's trimmed primary key types."""
    touched = {(e.partition, e.bucket) for e in entries if e.kind == FileKind.ADD and e.file.level > 0}
    if not touched:
        return
    deleted = {e.identifier() for e in entries if e.kind == FileKind.DELETE}
    after: dict[tuple[bytes, int], list[ManifestEntry]] = {}
    for e in (*live, *(x for x in entries if x.kind == FileKind.ADD)):
        if (e.partition, e.bucket) in touched and e.identifier() not in deleted:
            after.setdefault((e.partition, e.bucket), []).append(e)
    codec = KeyCodec(key_types)
    for (_, bucket), es in after.items():
        clash = overlapping_files([e.file for e in es], codec)
        if clash is not None:
            raise CommitConflictError(
                f"commit to {table_path} conflicts: files {clash[0].file_name} and {clash[1].file_name} "
                f"of bucket {bucket} would overlap in key range at level {clash[0].level} (a concurrent "
                "compaction of the same bucket)")
