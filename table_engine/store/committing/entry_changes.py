"""What commit messages change, as manifest and index entries (Paimon's ``ManifestEntryChanges``).

A writer hands the committer :class:`CommitMessage` objects; the committer publishes manifest entries: an ADD per
new or compacted-into file, a DELETE per compacted-away file, changelog files in their own manifests, and index
file ADDs/DELETEs. A message's new data and its compaction are split here too, because they become two snapshots
(APPEND, then COMPACT, as in Paimon): deletion-vector index files belong to the compaction (it writes them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from table_engine.format.index_manifest import DELETION_VECTORS_INDEX, IndexFileMeta, IndexManifestEntry
from table_engine.format.manifest import FileKind, ManifestEntry
from table_engine.format.manifest_list import ManifestFileMeta
from table_engine.store.committing.commit_message import CommitMessage

__all__ = ["Changelog", "added_file_names", "changelog_entries", "compaction_part", "data_part", "file_entries",
           "index_file_entries", "is_dv"]


@dataclass(frozen=True)
class Changelog:
    """The changelog manifests of one commit (written once; each attempt writes its own manifest list)."""

    manifests: list[ManifestFileMeta]
    entries: list[ManifestEntry]

    def record_count(self) -> int:
        """``changelogRecordCount``: rows of the changelog files."""
        return sum(e.file.row_count for e in self.entries)


def file_entries(messages: Sequence[CommitMessage]) -> list[ManifestEntry]:
    """The data file entries of the messages: new files and compaction outputs ADD, compaction inputs DELETE."""
    out = []
    for m in messages:
        for f in m.new_files:
            out.append(ManifestEntry(FileKind.ADD, m.partition, m.bucket, m.total_buckets, f))
        for f in m.compact_before:
            out.append(ManifestEntry(FileKind.DELETE, m.partition, m.bucket, m.total_buckets, f))
        for f in m.compact_after:
            out.append(ManifestEntry(FileKind.ADD, m.partition, m.bucket, m.total_buckets, f))
    return out


def changelog_entries(messages: Sequence[CommitMessage]) -> list[ManifestEntry]:
    """ADD entries of the messages' changelog files (input changelog and compaction changelog alike)."""
    return [ManifestEntry(FileKind.ADD, m.partition, m.bucket, m.total_buckets, f)
            for m in messages for f in (*m.changelog_files, *m.compact_changelog_files)]


def index_file_entries(messages: Sequence[CommitMessage]) -> list[IndexManifestEntry]:
    """The index file entries of the messages: deleted index files DELETE, new ones ADD."""
    out = []
    for m in messages:
        for i in m.deleted_index_files:
            out.append(IndexManifestEntry(FileKind.DELETE, m.partition, m.bucket, i))
        for i in m.new_index_files:
            out.append(IndexManifestEntry(FileKind.ADD, m.partition, m.bucket, i))
    return out


def data_part(m: CommitMessage) -> CommitMessage:
    """The new data of a message (files, changelog, index changes), without its compaction changes."""
    return CommitMessage(m.partition, m.bucket, m.total_buckets, new_files=m.new_files,
                         changelog_files=m.changelog_files, moved_keys_only=m.moved_keys_only,
                         new_index_files=[i for i in m.new_index_files if not is_dv(i)],
                         deleted_index_files=[i for i in m.deleted_index_files if not is_dv(i)])


def compaction_part(m: CommitMessage) -> CommitMessage:
    """The compaction changes of a message; deletion-vector index files belong to them (compaction writes them)."""
    return CommitMessage(m.partition, m.bucket, m.total_buckets, compact_before=m.compact_before,
                         compact_after=m.compact_after, compact_changelog_files=m.compact_changelog_files,
                         new_index_files=[i for i in m.new_index_files if is_dv(i)],
                         deleted_index_files=[i for i in m.deleted_index_files if is_dv(i)])


def added_file_names(messages: Sequence[CommitMessage]) -> set[str]:
    """Names of the files the messages add: data, changelog and index files."""
    out: set[str] = set()
    for m in messages:
        out.update(f.file_name for f in (*m.new_files, *m.compact_after, *m.changelog_files,
                                         *m.compact_changelog_files))
        out.update(i.file_name for i in m.new_index_files)
    return out


def is_dv(i: IndexFileMeta) -> bool:
    """Whether an index file holds deletion vectors (``DELETION_VECTORS``)."""
    return i.index_type == DELETION_VECTORS_INDEX
