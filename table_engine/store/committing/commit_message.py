"""Commit messages: what one writer task hands to the committer (phase one of the two-phase commit)."""

from __future__ import annotations

from dataclasses import dataclass, field

from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.index_manifest import IndexFileMeta


@dataclass
class CommitMessage:
    """New and removed files of one (partition, bucket). Picklable, so Spark tasks can ship them to the driver."""

    partition: bytes
    bucket: int
    total_buckets: int
    new_files: list[DataFileMeta] = field(default_factory=list)
    compact_before: list[DataFileMeta] = field(default_factory=list)
    compact_after: list[DataFileMeta] = field(default_factory=list)
    changelog_files: list[DataFileMeta] = field(default_factory=list)
    """Changelog files of the new data (``changelog-producer = input``): committed with the APPEND snapshot."""
    new_index_files: list[IndexFileMeta] = field(default_factory=list)
    deleted_index_files: list[IndexFileMeta] = field(default_factory=list)
    compact_changelog_files: list[DataFileMeta] = field(default_factory=list)
    """Changelog files produced by compaction (``lookup``, ``full-compaction``): committed with the COMPACT
    snapshot, as Java's ``CompactIncrement.changelogFiles``."""
    moved_keys_only: bool = False
    """Cross-partition upsert: the writer got no input row for this partition; its rows here are only for keys
    that live here and were written to another partition (their DELETEs, or updates in place). A dynamic partition
    overwrite does not overwrite such a partition: these rows are committed into it as changes."""

    def is_empty(self) -> bool:
        return not (self.new_files or self.compact_before or self.compact_after or self.changelog_files
                    or self.new_index_files or self.deleted_index_files or self.compact_changelog_files)

    def all_new_file_names(self) -> list[str]:
        return [f.file_name for f in (*self.new_files, *self.compact_after, *self.changelog_files,
                                      *self.compact_changelog_files)]
