"""Restoring a writer's state from the latest snapshot: the buckets' committed files and sequence numbers, their
deletion vectors and the dynamic-bucket HASH indexes.

A writer restores once, before its first write (Java's ``AbstractFileStoreWrite.createWriterContainer`` restores
each bucket it opens: ``scanExistingFileMetas``, ``getMaxSequenceNumber`` and the ``IndexMaintainer``s). A
concurrent expiry may delete the snapshot's metadata while it is read: the writer then restores from the snapshot
that replaced it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from table_engine.format.data_file_meta import DataFileMeta
from table_engine.format.hash_index import read_hash_index
from table_engine.format.index_manifest import HASH_INDEX, IndexFileMeta
from table_engine.format.snapshot import Snapshot
from table_engine.io.paths import index_dir
from table_engine.store.context import StoreContext
from table_engine.store.indexes.deletion_vectors import dv_index_files
from table_engine.store.writing.bucket_assign import PartitionBucketIndex

__all__ = ["RESTORE_ATTEMPTS", "BucketKey", "CommittedState"]

log = logging.getLogger(__name__)

#: restores of a writer's state retried when a concurrent expiry deletes the snapshot being read
RESTORE_ATTEMPTS = 10

BucketKey = tuple[bytes, int]
"""A bucket of the table: (partition BinaryRow, bucket)."""


@dataclass
class CommittedState:
    """What the table holds, as of :attr:`snapshot_id`, of the buckets one writer may write."""

    snapshot_id: int | None = None
    """The snapshot restored from (None before the restore or on an empty table)."""
    max_sequence: dict[BucketKey, int] = field(default_factory=dict)
    """The highest committed sequence number of each bucket."""
    files: dict[BucketKey, list[DataFileMeta]] = field(default_factory=dict)
    """The committed data files of each bucket (restored only for a compacting writer)."""
    dv_files: dict[BucketKey, list[IndexFileMeta]] = field(default_factory=dict)
    """The deletion-vector index files of each bucket (a compacting writer of a deletion-vector table)."""
    hash_index_files: dict[BucketKey, list[IndexFileMeta]] = field(default_factory=dict)
    """Dynamic buckets: the HASH index files of each bucket (replaced by the writer's next commit)."""
    hash_indexes: dict[bytes, PartitionBucketIndex] = field(default_factory=dict)
    """Dynamic buckets: each partition's key hashes per bucket (updated in place by the writer's assignment)."""

    def clear(self) -> None:
        """Forget what an attempt read (the snapshot id excepted: the next attempt sets it)."""
        self.files.clear()
        self.max_sequence.clear()
        self.hash_index_files.clear()
        self.hash_indexes.clear()

    def restore_latest(self, ctx: StoreContext, *, keep_files: bool, dynamic: bool) -> None:
        """Restore from the latest snapshot of ``ctx``'s table, again from a newer one when an expiry removes it
        meanwhile. ``keep_files``: also the committed files (and deletion vectors) that the writer's compaction
        takes; ``dynamic``: also the HASH indexes."""
        snapshot = ctx.latest_snapshot()
        for _ in range(RESTORE_ATTEMPTS):
            if snapshot is None:
                return
            try:
                self.restore_from(ctx, snapshot, keep_files=keep_files, dynamic=dynamic)
                return
            except FileNotFoundError:
                now = ctx.latest_snapshot()
                if now is None or now.id == snapshot.id:
                    raise
                # a concurrent expiry deleted the metadata of that snapshot while it was read: the table moved on
                log.info("metadata of snapshot %d of %s vanished while restoring a writer; restoring from "
                         "snapshot %d", snapshot.id, ctx.table_path, now.id)
                self.clear()
                snapshot = now
        if snapshot is not None:
            self.restore_from(ctx, snapshot, keep_files=keep_files, dynamic=dynamic)  # the last attempt's error

    def restore_from(self, ctx: StoreContext, snapshot: Snapshot, *, keep_files: bool, dynamic: bool) -> None:
        self.snapshot_id = snapshot.id
        from table_engine.store.reading.scan import live_entries

        for e in live_entries(ctx.file_io, ctx.table_path, snapshot):
            key = (e.partition, e.bucket)
            if keep_files:
                self.files.setdefault(key, []).append(e.file)
            prev = self.max_sequence.get(key, -1)
            if e.file.max_sequence_number > prev:
                self.max_sequence[key] = e.file.max_sequence_number
        if keep_files and ctx.options.deletion_vectors_enabled():
            self.dv_files = dv_index_files(ctx.index_entries(snapshot))
        if dynamic:
            per_part: dict[bytes, dict[int, list[np.ndarray]]] = {}
            for ie in ctx.index_entries(snapshot):
                if ie.index_file.index_type != HASH_INDEX:
                    continue
                path = f"{index_dir(ctx.table_path)}/{ie.index_file.file_name}"
                per_part.setdefault(ie.partition, {}).setdefault(ie.bucket, []).append(
                    read_hash_index(ctx.file_io, path))
                self.hash_index_files.setdefault((ie.partition, ie.bucket), []).append(ie.index_file)
            for part, buckets in per_part.items():
                self.hash_indexes[part] = PartitionBucketIndex.from_buckets(
                    {b: np.concatenate(hs) for b, hs in buckets.items()})
