"""What the store layer needs to know about a table, without depending on the table facade."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from table_engine.core_enums import ChangelogProducer
from table_engine.core_options import CoreOptions
from table_engine.format.bucket import BucketMode
from table_engine.format.index_manifest import IndexManifestEntry, read_index_manifest
from table_engine.format.schema_file import TableSchema, read_schema
from table_engine.format.snapshot import Snapshot, latest_snapshot, names_snapshot
from table_engine.io.file_io import FileIO
from table_engine.io.paths import manifest_path
from table_engine.lsm.merge_engines import MergeCapabilities, MergeFunction, create_merge_function
from table_engine.store.layout import KeyValueLayout
from table_engine.store.pins import BasePin, CommitLock, SnapshotCommit

if TYPE_CHECKING:
    from table_engine.store.paths import PathFactory

log = logging.getLogger(__name__)

PartitionsCallback = Callable[[Sequence[Mapping[str, str]]], None]
"""Told partitions as ``{partition key: value}``, each value as the partition's directory names it."""
SnapshotCallback = Callable[[int], None]
"""Told a snapshot id."""


@dataclass
class StoreContext:
    """A table's location, current schema and options; loads older schemas and snapshots on demand; its merge
    function, built once and shared by every read, write and compaction of this context."""

    file_io: FileIO
    table_path: str
    schema: TableSchema
    options: CoreOptions
    _schemas: dict[int, TableSchema] = field(default_factory=dict)
    commit_lock: CommitLock | None = None
    """The catalog's lock on this table, held around each snapshot commit (``lock.enabled``); None: no lock."""
    partitions_added: PartitionsCallback | None = None
    """Told the partitions each commit adds files to, once its snapshot is published (a metastore catalog's
    ``metastore.partitioned-table``, Paimon's ``AddPartitionCommitCallback``); None: nobody is told."""
    partitions_dropped: PartitionsCallback | None = None
    """Told the partitions a partition drop (``drop_partitions``, partition expiry) removed, once its snapshot is
    published; None: nobody is told."""
    snapshot_commit: SnapshotCommit | None = None
    """The catalog's commit of each snapshot (a REST catalog's commit endpoint) instead of the conditional create of
    ``snapshot-<id>``; None: the conditional create."""
    snapshot_published: SnapshotCallback | None = None
    """Called with the id of every snapshot published on this table (writes, overwrites, compactions, partition
    drops, manifest compaction, remove-unexisting-files) and, after a rollback or fast-forward, with the new latest
    id, outside the commit's pin and lock (Paimon Java's commit callbacks: the Iceberg metadata of
    ``metadata.iceberg.storage``, ADR 0046). May be called again for the same id (a commit sent again); a failure
    is raised to the caller with the snapshot published. None: nobody is called."""
    history_rewriting: SnapshotCallback | None = None
    """Called with the target before a rollback or fast-forward deletes anything (the Iceberg metadata of the
    snapshots it removes goes first); None: nobody is called."""

    @cached_property
    def layout(self) -> KeyValueLayout:
        """The key, partition, value and BLOB columns of :attr:`schema`, derived once for every writer of this
        context."""
        return KeyValueLayout.of(self.schema)

    @cached_property
    def merge_function(self) -> MergeFunction | None:
        """The merge function of a primary-key table (its ``merge-engine`` with :attr:`options`); None for an append
        table."""
        if not self.schema.primary_keys:
            return None
        return create_merge_function(self.schema, self.table_path, self.options.raw)

    @cached_property
    def path_factory(self) -> PathFactory:
        """Every path of this table's files (:class:`~table_engine.store.paths.PathFactory`)."""
        from table_engine.store.paths import PathFactory  # store.paths builds on this module

        return PathFactory(self.table_path, self.schema, self.options.partition_default_name())

    @cached_property
    def bucket_mode(self) -> BucketMode:
        """How rows find their bucket (:class:`~table_engine.format.bucket.BucketMode`), from the primary keys,
        :attr:`options`' ``bucket`` and cross-partition upsert: the one place that decides it."""
        return BucketMode.of(bool(self.schema.primary_keys), self.options.bucket(),
                             self.schema.cross_partition_update())

    @property
    def merge_capabilities(self) -> MergeCapabilities | None:
        """What the store may rely on for this table's merge engine (None for an append table)."""
        fn = self.merge_function
        return None if fn is None else fn.capabilities

    def need_lookup(self) -> bool:
        """Paimon's ``needLookup``: compaction is lookup compaction (level 0 always pushed up, keys looked up in the
        levels above) for ``changelog-producer`` lookup, deletion vectors and merge engines that need it
        (:attr:`MergeCapabilities.needs_lookup`: ``first-row``)."""
        o = self.options
        if o.changelog_producer() is ChangelogProducer.LOOKUP or o.deletion_vectors_enabled():
            return True
        caps = self.merge_capabilities
        return caps is not None and caps.needs_lookup

    def batch_scan_skip_level0(self) -> bool:
        """Paimon's ``batchScanSkipLevel0``: batch reads leave out level 0 of deletion-vector tables (unless
        ``deletion-vectors.merge-on-read``) and of tables whose merge engine needs lookup (``first-row``); their
        writers compact level 0 away at every commit (:meth:`need_lookup`), so what is committed is visible once
        that compaction is. The one place that decides it for every batch read."""
        if self.options.deletion_vectors_enabled():
            return not self.options.deletion_vectors_merge_on_read()
        caps = self.merge_capabilities
        return caps is not None and caps.needs_lookup

    def with_options(self, overrides: Mapping[str, str], drop: Iterable[str] = ()) -> StoreContext:
        """This table's context with ``overrides`` laid over its options and the keys in ``drop`` removed (a job's
        own settings: a consumer id, a strict-mode snapshot, a writer's file format); nothing is stored."""
        raw = {**self.options.raw, **overrides}
        for key in drop:
            raw.pop(key, None)
        return StoreContext(self.file_io, self.table_path, self.schema, CoreOptions(raw), commit_lock=self.commit_lock,
                            partitions_added=self.partitions_added, partitions_dropped=self.partitions_dropped,
                            snapshot_commit=self.snapshot_commit,
                            snapshot_published=self.snapshot_published, history_rewriting=self.history_rewriting)

    def published(self, *snapshot_ids: int) -> None:
        """Tell :attr:`snapshot_published` of snapshots just published, in order (the one place every publishing
        path calls), while holding a :class:`~table_engine.store.pins.BasePin`: a rollback or fast-forward waits
        for the callback to finish before it rewrites the history, and one under way makes the callback wait for it
        (simulation ``rollback-iceberg`` seed 5608: a callback that planned on the files it listed before a
        rollback's ``history_rewriting`` deleted the manifest list the rollback's fresh metadata named). A failure
        is logged and raised: the snapshots stay published, and the callback's next call heals what it missed."""
        if self.snapshot_published is None:
            return
        with BasePin(self.file_io, self.table_path):
            self.published_in_fence(*snapshot_ids)

    def published_in_fence(self, *snapshot_ids: int) -> None:
        """:meth:`published` for a rollback or fast-forward, which holds the history fence itself (a pin would wait
        for that fence forever)."""
        if self.snapshot_published is None:
            return
        for sid in snapshot_ids:
            try:
                self.snapshot_published(sid)
            except Exception:
                log.exception("the post-commit callback of snapshot %d of %s failed; the snapshot is committed",
                              sid, self.table_path)
                raise

    def schema_by_id(self, schema_id: int) -> TableSchema:
        if schema_id == self.schema.id:
            return self.schema
        s = self._schemas.get(schema_id)
        if s is None:
            s = read_schema(self.file_io, self.table_path, schema_id)
            self._schemas[schema_id] = s
        return s

    def latest_snapshot(self) -> Snapshot | None:
        """The newest snapshot, in a constant number of requests (:func:`latest_snapshot`: looked for again if it
        expires before it is read)."""
        return latest_snapshot(self.file_io, self.table_path)

    @names_snapshot
    def index_entries(self, snapshot: Snapshot | None) -> list[IndexManifestEntry]:
        if snapshot is None or not snapshot.index_manifest:
            return []
        return read_index_manifest(self.file_io, manifest_path(self.table_path, snapshot.index_manifest))
