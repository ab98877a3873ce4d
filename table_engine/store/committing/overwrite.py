"""What an OVERWRITE commit replaces (Paimon's ``OverwriteChangesProvider``).

An overwrite deletes the live files of the partitions it overwrites and adds its own: a static overwrite (or a
partition drop) the partitions matching its specs, a dynamic one the partitions its data touches, an
unpartitioned table's overwrite every file. The overwritten partitions lose their index files too (dynamic bucket
assignment and deletion vectors start afresh there). Each attempt derives these from the snapshot it commits on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from table_engine.format.index_manifest import IndexManifestEntry
from table_engine.format.manifest import FileKind, ManifestEntry
from table_engine.store.committing.commit_message import CommitMessage
from table_engine.store.committing.partitions import PartitionKeys

__all__ = ["Overwrite", "overwrite_deletes", "overwritten_index"]


@dataclass(frozen=True)
class Overwrite:
    """An OVERWRITE commit: ``partition`` (static: only these partition values) or dynamic (partitions in data)."""

    static_partition: Mapping[str, Any] | None = None
    dynamic: bool = True
    drop_partitions: tuple[Mapping[str, Any], ...] | None = None
    """Drop: delete every file (and index file) of the partitions matching any of these specs (by key name)."""


def overwrite_deletes(ow: Overwrite, messages: Sequence[CommitMessage], live: Sequence[ManifestEntry],
                      keys: PartitionKeys, postponed_too: bool) -> list[ManifestEntry]:
    """DELETE entries for the ``live`` files the overwrite replaces. ``postponed_too``: the writer is a postpone
    writer (``bucket = -2``), whose overwrite replaces the postponed files too; a writer of real buckets (a
    fixed-bucket write, a rescale of a postpone table) keeps them."""
    selected: set[bytes] | None  # None: every partition (unpartitioned, or a whole-table overwrite)
    if ow.drop_partitions is not None or ow.static_partition:
        # typed like every partition spec: {"dt": "2024-01-01"} on a DATE column too
        specs = ow.drop_partitions if ow.drop_partitions is not None else (ow.static_partition or {},)
        selected = keys.matching(specs, (e.partition for e in live))
    elif ow.dynamic and keys.fields:
        selected = {m.partition for m in messages if m.new_files and not m.moved_keys_only}
    else:
        selected = None
    return [ManifestEntry(FileKind.DELETE, e.partition, e.bucket, e.total_buckets, e.file)
            for e in live if (selected is None or e.partition in selected) and (postponed_too or e.bucket >= 0)]


def overwritten_index(ow: Overwrite, previous: Sequence[IndexManifestEntry], changes: Sequence[IndexManifestEntry],
                      messages: Sequence[CommitMessage], keys: PartitionKeys
                      ) -> tuple[list[IndexManifestEntry], list[IndexManifestEntry]]:
    """(previous, changes) of the index manifest after the overwrite: the overwritten partitions' old index files
    are gone (an unpartitioned table's all of them), and only the commit's new index files are added."""
    touched = {m.partition for m in messages if not m.moved_keys_only}
    if ow.drop_partitions is not None:
        dropped = keys.matching(ow.drop_partitions, (e.partition for e in previous))
        kept = [e for e in previous if e.partition not in dropped]
    elif not keys.fields:
        kept = []
    else:
        kept = [e for e in previous if e.partition not in touched]
    return kept, [c for c in changes if c.kind == FileKind.ADD]
